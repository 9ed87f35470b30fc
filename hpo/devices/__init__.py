"""GPU devices: backends (NVML, simulated, CPU), in-worker measurement and memory-aware packing.

``open_backend`` picks a backend from the study config; :class:`Packer` decides which device a
trial starts on; :mod:`hpo.devices.measure` runs inside workers. See ``docs/gpus.md``.
"""

from __future__ import annotations

from hpo.devices.base import (
    ENV_DEVICE_INDEX,
    ENV_SIM_FOOTPRINTS,
    ENV_SIM_STATE,
    CPUBackend,
    DeviceBackend,
    DeviceError,
    GPUInfo,
    Health,
    Resettable,
    cpu_env,
    open_backend,
    reset_gpu,
)
from hpo.devices.measure import clear_caches, cuda_initialised, peak_gpu_mem_mb, reset_peak
from hpo.devices.packing import MemoryModel, Packer

__all__ = [
    "ENV_DEVICE_INDEX",
    "ENV_SIM_FOOTPRINTS",
    "ENV_SIM_STATE",
    "CPUBackend",
    "DeviceBackend",
    "DeviceError",
    "GPUInfo",
    "Health",
    "MemoryModel",
    "Packer",
    "Resettable",
    "clear_caches",
    "cpu_env",
    "cuda_initialised",
    "open_backend",
    "peak_gpu_mem_mb",
    "reset_gpu",
    "reset_peak",
]
