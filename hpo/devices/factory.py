"""Opening a device backend by name: the one place that knows every implementation."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from hpo.devices.base import BackendKind, CPUBackend, DeviceBackend, DeviceError
from hpo.devices.nvml import NVMLBackend, NVMLUnavailable
from hpo.devices.simulated import SimulatedBackend

if TYPE_CHECKING:
    from hpo.config import SimulatedGPUConfig

log = logging.getLogger(__name__)


def open_backend(
    kind: BackendKind, sim: SimulatedGPUConfig | None = None, state_dir: Path | None = None
) -> DeviceBackend:
    """Open the backend named by the study config's ``device_backend``.

    ``"auto"`` opens NVML when ``pynvml`` imports, ``nvmlInit`` succeeds and at least one GPU is
    usable by this process (accessible, and in the parent's ``CUDA_VISIBLE_DEVICES``), and
    otherwise the :class:`CPUBackend`: it never raises on a machine without a GPU.
    ``"nvml"`` raises :class:`DeviceError` (one line, with the NVML reason) when NVML is missing.
    ``"simulated"`` creates or joins the ledger under ``state_dir`` (required) with ``sim``.
    """
    if kind == "cpu":
        return CPUBackend("device_backend: cpu")
    if kind == "simulated":
        from hpo.config import SimulatedGPUConfig

        if state_dir is None:
            raise DeviceError("the simulated device backend needs a state folder (the run folder)")
        return SimulatedBackend.create(
            sim or SimulatedGPUConfig.model_validate({}), Path(state_dir)
        )
    try:
        backend = NVMLBackend()
    except NVMLUnavailable as exc:
        if kind == "nvml":
            raise DeviceError(f"device_backend: nvml but {exc}") from None
        log.info("no NVIDIA GPU (%s): trials run on CPU", exc)
        return CPUBackend(str(exc))
    if kind == "auto" and backend.count == 0:
        why = (
            "NVML reports 0 GPUs"
            if backend.nvml_count == 0
            else f"no GPU this process may use; {backend.describe()}"
        )
        backend.close()
        log.info("%s: trials run on CPU", why)
        return CPUBackend(why)
    return backend
