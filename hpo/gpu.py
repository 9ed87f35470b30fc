"""Glue between the supervisor and the device layer: slots, pinning, placement, quarantine.

The supervisor calls these hooks; they consult ``hpo.devices`` (backends and the packer). On a
machine without GPUs (or with ``gpus: none``) slots run on the CPU and every hook is trivial.

Slots: with ``trials_per_gpu: N`` each GPU gets N slots; with ``auto`` each GPU gets
``ceil(workers / n_gpus)`` slots and the packer admits trials by predicted memory. Each slot's
worker is pinned to its GPU with ``CUDA_VISIBLE_DEVICES`` (``CUDA_DEVICE_ORDER=PCI_BUS_ID``).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from optuna.distributions import FloatDistribution

from hpo.devices import DeviceBackend, MemoryModel, Packer, open_backend, reset_gpu
from hpo.errors import ConfigError
from hpo.failures import FailureClass

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution

    from hpo.failures import Diagnosis
    from hpo.outcome import Outcome
    from hpo.supervisor import Running, Slot, Supervisor

log = logging.getLogger(__name__)
HEALTH_EVERY_S = 10.0


class Devices:
    """The run's view of its GPUs: backend, packer, sticky-error history."""

    def __init__(self, backend: DeviceBackend, devices: list[int], packer: Packer | None) -> None:
        self.backend = backend
        self.devices = devices
        self.packer = packer
        self.sticky: dict[int, list[float]] = {d: [] for d in devices}
        self.next_health = 0.0


def check_gpu_requirement(cfg: Any, run_dir: Any) -> None:
    """With ``require_gpu: true``, stop before anything starts when no GPU is found."""
    if not cfg.require_gpu or cfg.gpus == "none":
        if cfg.require_gpu:
            raise ConfigError("require_gpu: true contradicts gpus: none")
        return
    backend = open_backend(cfg.device_backend, cfg.simulated_gpus, run_dir)
    try:
        found = backend.list()
    finally:
        backend.close()
    if not found:
        why = getattr(backend, "reason", "") or "no GPU backend found a device"
        raise ConfigError(
            f"study {cfg.study!r} needs a GPU (require_gpu: true) and none was found ({why}); "
            "run `hpo doctor` to see why, or pass --allow-cpu to run it on the CPU"
        )


def plan_slots(sup: Supervisor) -> list[int | None]:
    cfg = sup.cfg
    if cfg.gpus == "none":
        sup.devices = None
        return [None] * cfg.workers
    backend = open_backend(cfg.device_backend, cfg.simulated_gpus, sup.run_dir)
    found = [g.index for g in backend.list()]
    if cfg.gpus == "auto":
        devices = found
    else:
        missing = [d for d in cfg.gpus if d not in found]
        if missing:
            raise ConfigError(
                f"gpus: {missing} not found (this machine has {found or 'no GPUs'}; see `hpo doctor`)"
            )
        devices = list(cfg.gpus)
    if not devices:
        sup.devices = None
        backend.close()
        return [None] * cfg.workers
    caps = {d: backend.info(d).total_mb for d in devices}
    real = type(backend).__name__.startswith("NVML")
    packer = Packer(
        devices,
        caps,
        cfg.trials_per_gpu,
        cfg.gpu_mem_margin_mb,
        MemoryModel(keys=cfg.gpu_mem_keys),
        free_mb=(lambda d: backend.info(d).free_mb) if real else None,
        overhead_mb=512 if real else 0,  # the CUDA context, which max_memory_reserved misses
    )
    sup.devices = Devices(backend, devices, packer)
    per_gpu = (
        cfg.trials_per_gpu
        if isinstance(cfg.trials_per_gpu, int)
        else math.ceil(cfg.workers / len(devices))
    )
    log.info(
        "GPUs %s (%s backend), %s trial(s) per GPU",
        devices,
        type(backend).__name__,
        cfg.trials_per_gpu,
    )
    return [d for d in devices for _ in range(per_gpu)]


def device_env(sup: Supervisor, slot: Slot) -> dict[str, str]:
    devs = sup.devices
    if devs is None:
        if sup.cfg.device_backend == "cpu" or sup.cfg.gpus == "none":
            return {"CUDA_VISIBLE_DEVICES": ""}
        return {}
    return devs.backend.env(slot.device)


def slot_usable(sup: Supervisor, slot: Slot) -> bool:
    devs = sup.devices
    if devs is None or devs.packer is None or slot.device is None:
        return True
    return slot.device in devs.packer.active_devices()


def ask_distributions(sup: Supervisor) -> dict[str, BaseDistribution] | None:
    """In ``auto`` packing, ask with the discrete parameters known from finished trials, so that
    they are sampled before the trial is placed (the objective's ``suggest_*`` then returns them)."""
    devs = sup.devices
    if devs is None or sup.cfg.trials_per_gpu != "auto":
        return None
    from hpo import storage as st

    space = st.search_space(sup.study)
    keys = sup.cfg.gpu_mem_keys
    return {
        k: v
        for k, v in space.items()
        if (k in keys if keys else not isinstance(v, FloatDistribution))
    } or None


def place(sup: Supervisor, params: dict[str, Any] | None, idle: Sequence[Slot]) -> Slot | None:
    """The idle slot to start a trial with ``params`` on now, or None to wait."""
    devs = sup.devices
    if not idle:
        return None
    if devs is None or devs.packer is None:
        return idle[0]
    by_dev: dict[int, Slot] = {}
    for s in idle:
        if s.device is not None:
            by_dev.setdefault(s.device, s)
    exclude = [d for d in devs.devices if d not in by_dev]
    device = devs.packer.choose(params, exclude=exclude)
    return None if device is None else by_dev[device]


def on_trial_started(sup: Supervisor, slot: Slot, run: Running) -> None:
    devs = sup.devices
    if devs is not None and devs.packer is not None and slot.device is not None:
        devs.packer.start(run.spec.number, slot.device, run.spec.params or None)


def on_trial_finished(
    sup: Supervisor, run: Running, outcome: Outcome, diag: Diagnosis | None
) -> None:
    devs = sup.devices
    if devs is not None and devs.packer is not None:
        oom = diag is not None and diag.failure_class is FailureClass.OOM
        devs.packer.finish(run.spec.number, outcome.peak_gpu_mem_mb, oom=oom)


def on_device_failure(sup: Supervisor, device: int, diag: Diagnosis, *, force: bool) -> bool:
    """Count a sticky/device failure on ``device``; True if the device is (now) quarantined."""
    devs = sup.devices
    if devs is None or devs.packer is None or device not in devs.sticky:
        return False
    if device not in devs.packer.active_devices():
        return True
    now = time.monotonic()
    window = sup.cfg.quarantine_window_s
    hist = [t for t in devs.sticky[device] if now - t < window] + [now]
    devs.sticky[device] = hist
    health = devs.backend.health(device)
    if force:
        reason = f"{diag.failure_class.value}: {diag.summary}"
    elif not health.ok:
        reason = f"health check failed: {health.reason}"
    elif len(hist) >= sup.cfg.quarantine_after:
        reason = f"{len(hist)} sticky CUDA errors within {window:.0f}s (last: {diag.summary})"
    else:
        return False
    quarantine(sup, device, reason)
    return True


def quarantine(sup: Supervisor, device: int, reason: str) -> None:
    devs = sup.devices
    assert devs is not None and devs.packer is not None
    if not devs.packer.quarantine(device, reason):
        return
    sup.events.emit("device_quarantined", device=device, reason=reason)
    sup.echo(f"GPU {device} quarantined: {reason}")
    try:
        sup.study.set_user_attr(
            f"hpo:quarantine:{device}", {"reason": reason, "time": time.time(), "host": _host()}
        )
    except Exception as exc:  # recording the event must not stop the run
        log.warning("could not record the quarantine in the study: %s", exc)
    if sup.cfg.allow_gpu_reset:
        done, msg = reset_gpu(devs.backend, device, allowed=True)
        sup.events.emit("gpu_reset", device=device, done=done, message=msg)
    if not devs.packer.active_devices():
        from hpo.supervisor import ExitCode

        sup.request_stop(
            ExitCode.NO_DEVICE, f"every GPU is quarantined (last: GPU {device}: {reason})"
        )


def check_health(sup: Supervisor) -> None:
    """Probe the active GPUs every few seconds; a failed probe quarantines the GPU."""
    devs = sup.devices
    if devs is None or devs.packer is None:
        return
    now = time.monotonic()
    if now < devs.next_health:
        return
    devs.next_health = now + HEALTH_EVERY_S
    for d in devs.packer.active_devices():
        h = devs.backend.health(d)
        if not h.ok:
            quarantine(sup, d, f"health check failed: {h.reason}")


def _host() -> str:
    import socket

    return socket.gethostname()


def close(sup: Supervisor) -> None:
    if sup.devices is not None:
        sup.devices.backend.close()
