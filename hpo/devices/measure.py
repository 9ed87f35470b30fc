"""Memory measurement and cache clearing inside a worker, between and after trials.

Nothing here imports torch or initialises CUDA: a worker that never touched the GPU pays nothing,
and a worker whose CUDA context exists is measured and cleared through it. The simulated backend's
per-process peak counts as a measurement too, so the same worker code serves both.
"""

from __future__ import annotations

import gc
import os
import sys
from types import ModuleType
from typing import Any

from hpo.devices import simulated
from hpo.devices.base import ENV_DEVICE_UUID

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
    values = _cuda_mb("max_memory_reserved") + _present(simulated.peak_mb())
    return max(values) if values else None


def reserved_gpu_mem_mb() -> float | None:
    """GPU memory this process holds now, in MB: ``torch.cuda.memory_reserved()`` (after
    :func:`clear_caches`, what live tensors hold) plus the simulated backend's holds; ``None``
    if neither is in use. Never initialises CUDA."""
    values = _cuda_mb("memory_reserved") + _present(simulated.held_mb())
    return sum(values) if values else None


def _cuda_mb(figure: str) -> list[float]:
    """``torch.cuda.<figure>(dev)`` in MB for each device, where CUDA is initialised here."""
    torch = _torch()
    if torch is None or not cuda_initialised():
        return []
    return [float(getattr(torch.cuda, figure)(dev)) / _MB for dev in _devices(torch)]


def _present(value: float | None) -> list[float]:
    return [] if value is None else [value]


_nvml_handle: list[Any] = []  # this worker's (pynvml module, device handle), once opened


def _own_device() -> tuple[Any, Any] | None:
    if not _nvml_handle:
        uuid = os.environ.get(ENV_DEVICE_UUID)
        if not uuid:
            return None
        try:
            import pynvml

            pynvml.nvmlInit()
            _nvml_handle.extend([pynvml, pynvml.nvmlDeviceGetHandleByUUID(uuid)])
        except Exception:
            return None
    return _nvml_handle[0], _nvml_handle[1]


def process_overhead_mb(pid: int | None = None) -> float | None:
    """What this process holds on its GPU beyond PyTorch's reserved memory, in MB: NVML's
    per-process figure (``usedGpuMemory`` of this pid in ``nvmlDeviceGetComputeRunningProcesses``)
    minus ``torch.cuda.memory_reserved()``. That is the CUDA context plus memory taken outside
    the caching allocator (cuBLAS workspaces, NCCL), which ``max_memory_reserved`` misses.

    ``None`` where it cannot be measured: CUDA not initialised here, no ``HPO_DEVICE_UUID``, no
    NVML, no per-process figure (WDDM under WSL2/Windows), or NVML reports pids of another pid
    namespace (a container) so this process is not found. Never initialises CUDA.
    """
    if not cuda_initialised():
        return None
    dev = _own_device()
    if dev is None:
        return None
    nvml, handle = dev
    me = os.getpid() if pid is None else pid
    try:
        used = [
            p.usedGpuMemory
            for p in nvml.nvmlDeviceGetComputeRunningProcesses(handle)
            if int(p.pid) == me and p.usedGpuMemory is not None
        ]
    except Exception:
        return None
    if not used:
        return None
    torch = _torch()
    assert torch is not None
    reserved = sum(float(torch.cuda.memory_reserved(d)) for d in _devices(torch))
    return max(0.0, (float(sum(used)) - reserved) / _MB)


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
