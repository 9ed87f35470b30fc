"""Optuna samplers and pruners by the names the study YAML uses: the one list of them.

``hpo.config`` validates ``sampler.name`` and ``pruner.name`` against :data:`SAMPLERS` and
:data:`PRUNERS`; the supervisor builds them with :func:`make_sampler` and :func:`make_pruner`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import optuna

from hpo.errors import ConfigError


def _patient(**kw: Any) -> optuna.pruners.BasePruner:
    return optuna.pruners.PatientPruner(optuna.pruners.MedianPruner(), **kw)


SAMPLERS: Mapping[str, Callable[..., optuna.samplers.BaseSampler]] = MappingProxyType(
    {
        "tpe": optuna.samplers.TPESampler,
        "random": optuna.samplers.RandomSampler,
        "cmaes": optuna.samplers.CmaEsSampler,
        "nsga2": optuna.samplers.NSGAIISampler,
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


def make_sampler(
    name: str, seed: int | None, kwargs: Mapping[str, Any]
) -> optuna.samplers.BaseSampler:
    kw = dict(kwargs)
    if seed is not None:
        kw.setdefault("seed", seed)
    try:
        return SAMPLERS[name](**kw)
    except TypeError as exc:
        raise ConfigError(f"sampler.kwargs: {exc}") from None


def make_pruner(name: str, kwargs: Mapping[str, Any]) -> optuna.pruners.BasePruner:
    try:
        return PRUNERS[name](**kwargs)
    except TypeError as exc:
        raise ConfigError(f"pruner.kwargs: {exc}") from None
