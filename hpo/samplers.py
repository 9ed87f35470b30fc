"""Optuna samplers and pruners by the names the study YAML uses: the one list of them.

``hpo.config`` validates ``sampler.name`` and ``pruner.name`` against :data:`SAMPLERS` and
:data:`PRUNERS`; the supervisor builds them with :func:`make_sampler` and :func:`make_pruner`.
A study's ``constraints`` function reaches the samplers that take one as their
``constraints_func`` through :class:`Constraints`, which checks what the function returns.
"""

from __future__ import annotations

import inspect
import logging
import math
import numbers
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import optuna
from optuna.trial import FrozenTrial

from hpo.errors import ConfigError

log = logging.getLogger("hpo.samplers")


def _patient(**kw: Any) -> optuna.pruners.BasePruner:
    return optuna.pruners.PatientPruner(optuna.pruners.MedianPruner(), **kw)


SAMPLERS: Mapping[str, Callable[..., optuna.samplers.BaseSampler]] = MappingProxyType(
    {
        "tpe": optuna.samplers.TPESampler,
        "random": optuna.samplers.RandomSampler,
        "cmaes": optuna.samplers.CmaEsSampler,
        "nsga2": optuna.samplers.NSGAIISampler,
        "nsga3": optuna.samplers.NSGAIIISampler,
        "qmc": optuna.samplers.QMCSampler,
        "gp": optuna.samplers.GPSampler,
        "grid": optuna.samplers.GridSampler,
        "bruteforce": optuna.samplers.BruteForceSampler,
    }
)
PRUNERS: Mapping[str, Callable[..., optuna.pruners.BasePruner]] = MappingProxyType(
    {
        "median": optuna.pruners.MedianPruner,
        "nop": optuna.pruners.NopPruner,
        "none": optuna.pruners.NopPruner,
        "hyperband": optuna.pruners.HyperbandPruner,
        "successive_halving": optuna.pruners.SuccessiveHalvingPruner,
        "percentile": optuna.pruners.PercentilePruner,
        "threshold": optuna.pruners.ThresholdPruner,
        "patient": _patient,
        "wilcoxon": optuna.pruners.WilcoxonPruner,
    }
)


def takes_constraints(name: str) -> bool:
    """Whether sampler ``name``'s constructor accepts a ``constraints_func`` (read from its
    signature, so a sampler that gains one in a later Optuna is known without a list here)."""
    return "constraints_func" in inspect.signature(SAMPLERS[name]).parameters


def with_constraints() -> list[str]:
    """The sampler names that accept a constraints function, for error messages."""
    return [n for n in SAMPLERS if takes_constraints(n)]


class ConstraintsError(Exception):
    """The study's constraints function raised or returned something that is not a sequence of
    numbers; the message is one line naming the function."""

    def __init__(self, message: str, exception_type: str, tb: str = "") -> None:
        super().__init__(message)
        self.exception_type = exception_type
        self.traceback = tb


class ConstraintsUnavailable(Exception):
    """Raised to the sampler for a trial hpo pruned after a failure whose constraints cannot be
    computed: Optuna then records no constraint values (``None``), which its samplers rank
    below every feasible trial. :class:`~hpo.storage.StudyStore` catches it around ``tell``."""


class Constraints:
    """The sampler's ``constraints_func``: the user's function, checked before the trial is told.

    Optuna calls ``constraints_func(frozen_trial)`` inside ``study.tell`` (``after_trial``) and
    stores the result as the trial's ``constraints`` system attribute; a function that raises
    there would leave the trial COMPLETE and stop ``study.optimize``. hpo calls :meth:`evaluate`
    first, while the trial still runs: a function that raises or returns a non-sequence fails
    that trial (:class:`ConstraintsError`) and the run goes on; values that pass are what the
    sampler then receives.
    """

    def __init__(self, func: Callable[[FrozenTrial], Sequence[float]], ref: str) -> None:
        self.func = func
        self.ref = ref
        self._checked: dict[int, tuple[float, ...]] = {}

    def evaluate(self, trial: FrozenTrial) -> tuple[float, ...]:
        """The checked constraint values of ``trial`` (kept for the sampler), or
        :class:`ConstraintsError` naming the function and what went wrong."""
        try:
            got = self.func(trial)
        except Exception as exc:
            raise ConstraintsError(
                f"constraints function {self.ref} raised {type(exc).__name__}: {exc}",
                type(exc).__name__,
                "".join(traceback.format_exception(exc)),
            ) from exc
        values = _as_values(got)
        if values is None:
            raise ConstraintsError(
                f"constraints function {self.ref} returned {got!r:.60} ({type(got).__name__}); "
                "it must return a sequence of numbers (<= 0 means satisfied), none of them NaN",
                "TypeError",
            )
        self._checked[trial.number] = values
        return values

    def __call__(self, trial: FrozenTrial) -> tuple[float, ...]:
        values = self._checked.pop(trial.number, None)
        if values is not None:
            return values
        try:  # a trial hpo pruned after a failure: Optuna asks for its constraints too
            return self.evaluate(trial)
        except ConstraintsError as exc:
            self._checked.pop(trial.number, None)
            raise ConstraintsUnavailable(str(exc)) from None


def _as_values(got: Any) -> tuple[float, ...] | None:
    if isinstance(got, str | bytes) or not hasattr(got, "__iter__"):
        return None
    try:
        items = tuple(got)
    except TypeError:
        return None
    if not items or not all(isinstance(v, numbers.Real) for v in items):
        return None
    floats = tuple(float(v) for v in items)
    return None if any(math.isnan(v) for v in floats) else floats


def make_sampler(
    name: str,
    seed: int | None,
    kwargs: Mapping[str, Any],
    constraints: Constraints | None = None,
) -> optuna.samplers.BaseSampler:
    kw = dict(kwargs)
    if seed is not None:
        kw.setdefault("seed", seed)
    if constraints is not None:
        kw["constraints_func"] = constraints
    try:
        with warnings.catch_warnings():
            # Optuna 5 deprecates constraints_func for trial.set_constraint (which a worker's
            # trial also has): said once in the supervisor's log, not as a warning on stderr.
            warnings.filterwarnings("ignore", "`constraints_func`", FutureWarning)
            sampler = SAMPLERS[name](**kw)
    except TypeError as exc:
        raise ConfigError(f"sampler.kwargs: {exc}") from None
    if constraints is not None:
        log.info(
            "constraints %s passed as the sampler's constraints_func (deprecated in Optuna 5 "
            "in favour of trial.set_constraint, which objectives may call under hpo too)",
            constraints.ref,
        )
    return sampler


def make_pruner(name: str, kwargs: Mapping[str, Any]) -> optuna.pruners.BasePruner:
    try:
        return PRUNERS[name](**kwargs)
    except TypeError as exc:
        raise ConfigError(f"pruner.kwargs: {exc}") from None
