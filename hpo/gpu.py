"""Glue between the supervisor and the device layer: slots, pinning, admission, quarantine.

The supervisor calls these hooks; they consult ``hpo.devices`` (backends, packing). On a machine
without GPUs every hook is a no-op and slots run on the CPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution

    from hpo.failures import Diagnosis
    from hpo.outcome import Outcome
    from hpo.supervisor import Running, Slot, Supervisor


def plan_slots(sup: Supervisor) -> list[int | None]:
    return [None] * sup.cfg.workers


def device_env(sup: Supervisor, slot: Slot) -> dict[str, str]:
    if slot.device is None:
        return {"CUDA_VISIBLE_DEVICES": ""} if sup.cfg.device_backend == "cpu" else {}
    return {"CUDA_VISIBLE_DEVICES": str(slot.device), "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "HPO_DEVICE_INDEX": str(slot.device)}


def slot_usable(sup: Supervisor, slot: Slot) -> bool:
    return True


def admit(sup: Supervisor, slot: Slot) -> bool:
    return True


def ask_distributions(sup: Supervisor) -> dict[str, BaseDistribution] | None:
    return None


def on_trial_started(sup: Supervisor, slot: Slot, run: Running) -> None:
    return None


def on_trial_finished(sup: Supervisor, slot: Slot, run: Running, outcome: Outcome) -> None:
    return None


def on_device_failure(sup: Supervisor, device: int, diag: Diagnosis, *, force: bool) -> bool:
    """Count a sticky/device failure; True if the device is (now) quarantined."""
    return False


_ = Any
