"""Resolve an objective reference (``package.module:function`` or ``path/to/file.py:function``)."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hpo.errors import ConfigError, HpoError, ObjectiveLoadError


def load_callable(ref: str, what: str = "objective") -> Callable[..., Any]:
    """Import ``ref`` and return the named callable (an attribute path after ``:`` is allowed)."""
    target, _, attr = ref.rpartition(":")
    if not target or not attr:
        raise ObjectiveLoadError(
            f"{what} {ref!r} must be 'package.module:function' or 'file.py:function'"
        )
    if target.endswith(".py") or "/" in target:
        path = Path(target)
        if not path.is_file():
            raise ObjectiveLoadError(f"{what} file {target!r} does not exist")
        name = f"hpo_user_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ObjectiveLoadError(f"{what} file {target!r} cannot be imported")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        # Let the file import its neighbours, as `python file.py` would.
        sys.path.insert(0, str(path.resolve().parent))
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:
            sys.modules.pop(name, None)
            raise ObjectiveLoadError(
                f"{what} file {target!r} failed at import: {type(exc).__name__}: {exc}"
                + _where(exc)
            ) from exc
    else:
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as exc:
            if exc.name and target.startswith(exc.name):
                raise ObjectiveLoadError(f"{what} module {target!r} not found") from exc
            raise ObjectiveLoadError(
                f"{what} module {target!r} failed at import: {type(exc).__name__}: {exc}"
                + _where(exc)
            ) from exc
        except BaseException as exc:
            raise ObjectiveLoadError(
                f"{what} module {target!r} failed at import: {type(exc).__name__}: {exc}"
                + _where(exc)
            ) from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ObjectiveLoadError(f"{what} {attr!r} not found in {target!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ObjectiveLoadError(f"{what} {ref!r} is not callable ({type(obj).__name__})")
    return obj


def check_ref(ref: str, what: str = "objective") -> None:
    """Cheap checks that need no import: the file exists, or the top-level package can be found."""
    import importlib.util

    target, _, attr = ref.rpartition(":")
    if not target or not attr:
        raise ObjectiveLoadError(
            f"{what} {ref!r} must be 'package.module:function' or 'file.py:function'"
        )
    if target.endswith(".py") or "/" in target:
        if not Path(target).is_file():
            raise ObjectiveLoadError(f"{what} file {target!r} does not exist")
        return
    try:
        found = importlib.util.find_spec(target.split(".")[0]) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ObjectiveLoadError(
            f"{what} module {target!r} not found (is it installed, or on PYTHONPATH?)"
        )


def load_objective(ref: str, kwargs: Mapping[str, Any] | None = None) -> Callable[[Any], Any]:
    func = load_callable(ref)
    return functools.partial(func, **kwargs) if kwargs else func


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    user = [f for f in frames if "importlib" not in f.filename and "/hpo/" not in f.filename]
    if not user:
        return ""
    f = user[-1]
    return f" (at {f.filename}:{f.lineno})"


def run_preflight(ref: str | None, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Call the study's ``preflight`` (if any) with the objective's kwargs; its facts, or a
    ConfigError naming the preflight when it raises (a missing model, bad data)."""
    if not ref:
        return {}
    fn = load_callable(ref, what="preflight")
    try:
        return dict(fn(**kwargs) or {})
    except HpoError:
        raise
    except Exception as exc:
        raise ConfigError(f"preflight {ref}: {type(exc).__name__}: {exc}") from None
