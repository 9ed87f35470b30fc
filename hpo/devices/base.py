"""The device interface: what the supervisor may ask about a GPU, whatever backs it.

A backend answers five questions (``list``, ``info``, ``process_memory``, ``health``, ``env``)
and is closed once. Three implementations exist: :class:`~hpo.devices.nvml.NVMLBackend` for real
NVIDIA GPUs, :class:`~hpo.devices.simulated.SimulatedBackend` for tests, demos and benchmarks,
and :class:`CPUBackend`, the null object with no devices, used wherever no GPU is found so that
callers never need an ``if backend is None``.

Device index ``n`` is the ``n``-th device this process may use: of the GPUs (or, for a GPU in
MIG mode, its MIG instances) that the parent's ``CUDA_VISIBLE_DEVICES`` leaves visible and that
the process may open, in CUDA's order under ``CUDA_DEVICE_ORDER=PCI_BUS_ID``. Without a
scheduler's ``CUDA_VISIBLE_DEVICES`` and with every GPU accessible, it is the NVML index (what
``nvidia-smi`` shows). :meth:`DeviceBackend.env` pins a worker by the device's UUID, so the
worker sees exactly that device as ``cuda:0``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from hpo.errors import HpoError

log = logging.getLogger(__name__)

BackendKind = Literal["auto", "nvml", "simulated", "cpu"]

#: Environment variables a worker receives from :meth:`DeviceBackend.env`.
ENV_DEVICE_INDEX = "HPO_DEVICE_INDEX"
ENV_SIM_STATE = "HPO_SIM_STATE"
ENV_SIM_FOOTPRINTS = "HPO_SIM_FOOTPRINTS"
ENV_DEVICE_UUID = "HPO_DEVICE_UUID"


class DeviceError(HpoError):
    """A device backend that was asked for explicitly cannot be opened, or a bad device index."""


class DeviceQueryError(DeviceError):
    """A query about one device failed (NVML: the GPU is lost, an unknown error, no permission):
    that device should leave rotation; the run goes on."""


@dataclass(frozen=True)
class GPUInfo:
    """One GPU as seen at one moment. ``None`` where the backend cannot tell (not supported)."""

    index: int
    name: str
    uuid: str | None
    total_mb: int
    free_mb: int
    used_mb: int
    util_pct: int | None = None
    ecc_uncorrected: int | None = None  # volatile uncorrectable ECC errors since the driver loaded
    retired_pages: int | None = None  # pages retired (single- and double-bit causes)
    pci_bus_id: str | None = None
    nvml_index: int | None = None  # the (parent) GPU's NVML index, as nvidia-smi numbers it
    mig_slot: int | None = None  # a MIG instance: its index on that GPU


@dataclass(frozen=True)
class Health:
    """Whether a device may receive trials; ``reason`` names what is wrong (or ``"ok"``)."""

    ok: bool
    reason: str = "ok"


@runtime_checkable
class DeviceBackend(Protocol):
    """What the supervisor needs from a GPU backend. Methods never initialise CUDA."""

    name: str

    def list(self) -> list[GPUInfo]:
        """Every device of this backend, in index order (empty on the CPU backend)."""
        ...

    def info(self, index: int) -> GPUInfo:
        """One device now; raises :class:`DeviceError` for an unknown index."""
        ...

    def process_memory(self, index: int) -> dict[int, int]:
        """Memory in MB held on device ``index`` per process id (compute processes only)."""
        ...

    def health(self, index: int) -> Health:
        """A cheap probe: not ok when the device is lost, has new uncorrectable ECC errors, etc."""
        ...

    def env(self, index: int | None) -> dict[str, str]:
        """Environment for a worker pinned to ``index`` (``None``: a CPU-only worker)."""
        ...

    def close(self) -> None:
        """Release the backend (idempotent)."""
        ...


def cpu_env() -> dict[str, str]:
    """Environment of a worker that must not see any GPU."""
    return {
        "CUDA_VISIBLE_DEVICES": "",
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
        ENV_DEVICE_INDEX: "",
        ENV_DEVICE_UUID: "",
    }


@runtime_checkable
class Resettable(Protocol):
    """Optional capability: a backend that can reset one device (see :func:`reset_gpu`)."""

    def reset(self, index: int) -> str:
        """Reset device ``index``; returns what was done, raises :class:`DeviceError` if it fails."""
        ...


def reset_gpu(backend: DeviceBackend, index: int, *, allowed: bool) -> tuple[bool, str]:
    """Reset GPU ``index`` if the user allowed it (``allow_gpu_reset``) and no process uses it.

    Mechanism only: the supervisor decides when (e.g. before quarantining a GPU after a sticky
    error, once its workers are gone). Returns ``(done, message)``; never raises for a refusal.
    """
    if not allowed:
        return False, f"GPU {index} not reset: allow_gpu_reset is false"
    if not isinstance(backend, Resettable):
        return False, f"GPU {index} not reset: the {backend.name} backend cannot reset GPUs"
    try:
        users = backend.process_memory(index)
    except Exception as exc:
        return False, f"GPU {index} not reset: cannot list its processes ({exc})"
    if users:
        pids = ", ".join(str(p) for p in sorted(users))
        return False, f"GPU {index} not reset: in use by pid(s) {pids}"
    try:
        message = backend.reset(index)
    except DeviceError as exc:
        return False, str(exc)
    log.warning("GPU %d reset: %s", index, message)
    return True, message


class CPUBackend:
    """The null backend: no devices. Trials run on CPU and no GPU code runs."""

    name = "cpu"

    def __init__(self, reason: str = "no GPU backend requested") -> None:
        self.reason = reason

    def list(self) -> list[GPUInfo]:
        return []

    def info(self, index: int) -> GPUInfo:
        raise DeviceError(f"GPU {index} does not exist: running on CPU ({self.reason})")

    def process_memory(self, index: int) -> dict[int, int]:
        return {}

    def health(self, index: int) -> Health:
        return Health(False, f"GPU {index} does not exist: running on CPU ({self.reason})")

    def env(self, index: int | None) -> dict[str, str]:
        return cpu_env()

    def close(self) -> None:
        return None
