"""Memory measurement and cache clearing inside a worker, between and after trials.

Nothing here imports torch or initialises CUDA: a worker that never touched the GPU pays nothing,
and a worker whose CUDA context exists is measured and cleared through it. The simulated backend's
per-process peak counts as a measurement too, so the same worker code serves both.
"""

from __future__ import annotations

import gc
import sys
from types import ModuleType

from hpo.devices import simulated

_MB = 1024 * 1024


def _torch() -> ModuleType | None:
    return sys.modules.get("torch")


def cuda_initialised() -> bool:
    """True when torch is already imported and has created its CUDA state in this process."""
    torch = _torch()
    if torch is None:
        return False
    try:
        return bool(torch.cuda.is_initialized())
    except Exception:
        return False


def _devices(torch: ModuleType) -> range:
    # device_count() does not create a context; in a pinned worker it is 1.
    return range(int(torch.cuda.device_count()))


def reset_peak() -> None:
    """Start a new peak measurement (call before a trial)."""
    if cuda_initialised():
        torch = _torch()
        assert torch is not None
        for dev in _devices(torch):
            torch.cuda.reset_peak_memory_stats(dev)
    simulated.reset_peak()


def peak_gpu_mem_mb() -> float | None:
    """Peak GPU memory of this process since :func:`reset_peak`, in MB; ``None`` if not measured.

    The CUDA figure is ``torch.cuda.max_memory_reserved()`` (what the caching allocator took from
    the driver). It excludes the CUDA context (about 300-500 MB per process) and memory taken
    outside PyTorch's allocator; NVML's per-process figure includes both.
    """
    values: list[float] = []
    if cuda_initialised():
        torch = _torch()
        assert torch is not None
        values.extend(float(torch.cuda.max_memory_reserved(dev)) / _MB for dev in _devices(torch))
    sim = simulated.peak_mb()
    if sim is not None:
        values.append(sim)
    return max(values) if values else None


def clear_caches() -> None:
    """Free what the last trial left: ``gc.collect`` and, where CUDA is initialised, a double
    ``empty_cache`` around a second collection, after a ``synchronize``.

    The second round returns blocks freed by finalisers that the first collection ran. A sticky
    CUDA error (a corrupted context) surfaces here as the exception from ``synchronize``: the
    caller should then recycle the worker, since only a new process gets a new context.
    """
    gc.collect()
    if not cuda_initialised():
        return
    torch = _torch()
    assert torch is not None
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
