"""Resolve an objective reference (``package.module:function`` or ``path/to/file.py:function``)."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re
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


#: Imports of torch or of a library built on it, at the start of a line (indented too).
_TORCH_IMPORT = re.compile(
    r"^[ \t]*(?:import|from)[ \t]+(?:torch|transformers|lightning|pytorch_lightning|accelerate|"
    r"torchvision|torchaudio|timm|peft|sentence_transformers|hpo\.tasks)\b",
    re.M,
)


def source_path(ref: str) -> Path | None:
    """The file that defines ``ref``'s module, found without importing it (None if unknown)."""
    target = ref.rpartition(":")[0]
    if target.endswith(".py") or "/" in target:
        return Path(target) if Path(target).is_file() else None
    parts = target.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if len(parts) == 1:
        origin = spec.origin or ""
        return Path(origin) if origin.endswith(".py") else None
    for loc in spec.submodule_search_locations or []:
        base = Path(loc, *parts[1:])
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def may_use_torch(ref: str) -> bool:
    """Whether ``ref``'s module imports torch or a library built on it (True when unknown)."""
    path = source_path(ref)
    if path is None:
        return True
    try:
        return bool(_TORCH_IMPORT.search(path.read_text(errors="replace")))
    except OSError:
        return True


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
