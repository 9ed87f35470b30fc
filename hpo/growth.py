"""Recycling on memory growth: a worker whose memory at rest grows between trials is replaced.

billiard's ``max_memory_per_child`` is the model: the worker measures itself after each task,
and past the limit it retires with ``EX_RECYCLE`` instead of taking the next one. Two figures
are measured at rest, after the trial's cleanup (``gc.collect`` and ``empty_cache``):

- the worker's own RSS (helper processes it keeps are bounded apart, :mod:`hpo.pools`);
- the GPU memory PyTorch still reserves (``torch.cuda.memory_reserved``), which after
  ``empty_cache`` is what live tensors hold: a tensor kept in a global, a growing cache.

Unlike billiard's absolute limit, hpo compares with the worker's first rest, after its first
trial: that trial pays one-time costs (the CUDA context's libraries, cuBLAS handles, lazily
imported modules, a tokenizer's caches) that are not leaks, and an absolute figure would have
to be tuned per model. A growth past ``recycle_rss_growth_mb`` or ``recycle_gpu_growth_mb``
(study config; ``null`` turns a check off) retires the worker between trials; the next trial
runs in a new process and no trial is blamed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psutil

_MB = 1024 * 1024


@dataclass(frozen=True)
class AtRest:
    """A worker's memory between trials, in MB (``gpu_mb`` None: no GPU memory measured)."""

    rss_mb: float
    gpu_mb: float | None = None


@dataclass(frozen=True)
class GrowthLimits:
    """How much a worker's memory at rest may grow over its first rest (None: unchecked)."""

    rss_mb: float | None = None
    gpu_mb: float | None = None


def measure(devices: Any = None) -> AtRest:
    """This process's RSS and, through ``devices`` (:mod:`hpo.devices.measure`), the GPU memory
    it holds at rest. Never initialises CUDA."""
    rss = psutil.Process().memory_info().rss / _MB
    gpu = devices.reserved_gpu_mem_mb() if devices is not None else None
    return AtRest(rss, gpu)


def growth_reason(first: AtRest, now: AtRest, limits: GrowthLimits) -> str | None:
    """Why a worker at rest ``now`` must be replaced, given its first rest, or None."""
    if limits.rss_mb is not None and now.rss_mb - first.rss_mb > limits.rss_mb:
        return (
            f"memory growth: RSS at rest {now.rss_mb:.0f} MB, {now.rss_mb - first.rss_mb:.0f} MB "
            f"over its first rest, past recycle_rss_growth_mb={limits.rss_mb:.0f}"
        )
    if limits.gpu_mb is not None and now.gpu_mb is not None:
        grown = now.gpu_mb - (first.gpu_mb or 0.0)
        if grown > limits.gpu_mb:
            return (
                f"memory growth: GPU memory reserved at rest {now.gpu_mb:.0f} MB, {grown:.0f} MB "
                f"over its first rest, past recycle_gpu_growth_mb={limits.gpu_mb:.0f}"
            )
    return None


class GrowthWatch:
    """The worker's side: :meth:`check` after each trial's cleanup returns why to recycle."""

    def __init__(self, limits: GrowthLimits, devices: Any = None) -> None:
        self.limits = limits
        self._devices = devices
        self.first: AtRest | None = None

    def check(self) -> str | None:
        if self.limits.rss_mb is None and self.limits.gpu_mb is None:
            return None
        now = measure(self._devices)
        if self.first is None:
            self.first = now
            return None
        return growth_reason(self.first, now, self.limits)
