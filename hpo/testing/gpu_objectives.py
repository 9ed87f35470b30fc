"""The objectives of ``make gpu-check`` (:mod:`hpo.gpucheck`): each does one real thing on a real
GPU, so that the run proves the GPU path rather than a fake of it. They need CUDA; without it
they raise at once (``gpu-check`` never starts them on a machine without a GPU).

- :func:`probe` records what the worker's GPU really is: the allocator in effect, CUDA's and
  NVML's UUID of the device, NVML's memory for this pid against torch's reserved memory.
- :func:`device_assert` indexes a CUDA tensor out of bounds on its first attempt: a real
  device-side assert (``cudaErrorAssert``, 710), which poisons the CUDA context. Its retry
  (``hpo:attempt`` > 1) computes normally.
- :func:`oom` asks for ``torch.empty(1 << 40)`` floats (4 TiB) on the GPU: a real
  ``torch.OutOfMemoryError``.
"""

from __future__ import annotations

import os
from typing import Any

import optuna

from hpo import allocator, attrs

#: The user attributes :func:`probe` writes (``gpucheck`` reads them back from the storage).
PROBE = "gpucheck:probe"


def _torch() -> Any:
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError(
            f"gpu-check objective needs CUDA: torch {torch.__version__} "
            f"(CUDA {torch.version.cuda}) sees no device"
        )
    return torch


def _nvml_facts(pinned_uuid: str | None) -> dict[str, Any]:
    """NVML's UUID for the device the worker was pinned to, and NVML's memory for this pid."""
    out: dict[str, Any] = {"nvml_uuid": None, "nvml_process_mb": None, "nvml_error": None}
    if not pinned_uuid:
        out["nvml_error"] = "HPO_DEVICE_UUID is not set: the worker was not pinned"
        return out
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            handle = pynvml.nvmlDeviceGetHandleByUUID(pinned_uuid)
            uuid = pynvml.nvmlDeviceGetUUID(handle)
            out["nvml_uuid"] = uuid.decode() if isinstance(uuid, bytes) else str(uuid)
            me = os.getpid()
            for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                if int(p.pid) == me and p.usedGpuMemory is not None:
                    out["nvml_process_mb"] = round(int(p.usedGpuMemory) / 2**20, 1)
            if out["nvml_process_mb"] is None:
                out["nvml_error"] = (
                    f"NVML lists no memory for pid {me} (WDDM, or a container whose pids differ)"
                )
        finally:
            pynvml.nvmlShutdown()
    except Exception as exc:  # a probe reports what it could not read; it never fails for it
        out["nvml_error"] = f"{type(exc).__name__}: {exc}"
    return out


def probe(trial: optuna.Trial, mb: int = 256) -> float:
    """Allocate ``mb`` MiB on the GPU and record what the GPU path looks like from inside."""
    torch = _torch()
    trial.suggest_float("x", 0.0, 1.0)
    block = torch.ones(mb * 2**18, device="cuda")  # float32: mb MiB
    torch.cuda.synchronize()
    props = torch.cuda.get_device_properties(0)
    facts: dict[str, Any] = {
        "device_name": torch.cuda.get_device_name(0),
        "capability": list(torch.cuda.get_device_capability(0)),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "bf16_native": bool(torch.cuda.is_bf16_supported(including_emulation=False)),
        "allocator": allocator.in_effect(),
        "cuda_uuid": str(getattr(props, "uuid", "")) or None,
        "pinned_uuid": os.environ.get("HPO_DEVICE_UUID"),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "max_memory_reserved_mb": round(torch.cuda.max_memory_reserved() / 2**20, 1),
        "memory_reserved_mb": round(torch.cuda.memory_reserved() / 2**20, 1),
    }
    facts.update(_nvml_facts(facts["pinned_uuid"]))
    trial.set_user_attr(PROBE, facts)
    del block
    return float(mb)


def device_assert(trial: optuna.Trial) -> float:
    """A real device-side assert on the first attempt; the retry computes normally."""
    torch = _torch()
    x = trial.suggest_float("x", 0.0, 1.0)
    table = torch.zeros(4, device="cuda")
    if int(trial.user_attrs.get(attrs.ATTEMPT, 1)) <= 1:
        index = torch.tensor([4096], device="cuda")  # out of bounds, checked only on the device
        table[index] += 1.0
        torch.cuda.synchronize()  # the assert surfaces here at the latest
    table += x
    return float(table.sum().item())


def oom(trial: optuna.Trial) -> float:
    """A real CUDA out-of-memory: 2**40 float32 (4 TiB) on the GPU."""
    torch = _torch()
    trial.suggest_float("x", 0.0, 1.0)
    held = torch.empty(1 << 40, device="cuda")
    return float(held.numel())
