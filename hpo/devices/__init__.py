"""GPU devices: backends (NVML, simulated, CPU), in-worker measurement and memory-aware packing.

``open_backend`` picks a backend from the study config; :class:`Packer` decides which device a
trial starts on; :func:`open_planner` gives the supervisor one object for all of it (a
:class:`NullPlanner` on the CPU); :mod:`hpo.devices.measure` runs inside workers. See
``docs/gpus.md``.
"""

from __future__ import annotations

from hpo.devices.base import (
    ENV_DEVICE_INDEX,
    ENV_DEVICE_UUID,
    ENV_SIM_FOOTPRINTS,
    ENV_SIM_STATE,
    CPUBackend,
    DeviceBackend,
    DeviceError,
    DeviceQueryError,
    GPUInfo,
    Health,
    Resettable,
    cpu_env,
    reset_gpu,
)
from hpo.devices.factory import open_backend
from hpo.devices.measure import clear_caches, cuda_initialised, peak_gpu_mem_mb, reset_peak
from hpo.devices.packing import MemoryModel, Packer
from hpo.devices.planner import (
    DevicePlanner,
    NullPlanner,
    Planner,
    QuarantineEvent,
    ResetEvent,
    check_gpu_requirement,
    open_planner,
)

__all__ = [
    "ENV_DEVICE_INDEX",
    "ENV_DEVICE_UUID",
    "ENV_SIM_FOOTPRINTS",
    "ENV_SIM_STATE",
    "CPUBackend",
    "DeviceBackend",
    "DevicePlanner",
    "DeviceError",
    "DeviceQueryError",
    "GPUInfo",
    "Health",
    "MemoryModel",
    "NullPlanner",
    "Packer",
    "Planner",
    "QuarantineEvent",
    "ResetEvent",
    "Resettable",
    "check_gpu_requirement",
    "clear_caches",
    "cpu_env",
    "cuda_initialised",
    "open_backend",
    "open_planner",
    "peak_gpu_mem_mb",
    "reset_gpu",
    "reset_peak",
]
