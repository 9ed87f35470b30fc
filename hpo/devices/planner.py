"""The supervisor's one object for GPUs: slots, pinning, placement, sticky history, quarantine.

:func:`open_planner` returns a :class:`DevicePlanner` when the run has GPUs and a
:class:`NullPlanner` otherwise (the null object, as Optuna's ``NullHeartbeatThread``): the
supervisor never asks "is there a GPU?". The planner never writes into the supervisor; what
happens to a GPU comes back as a :class:`QuarantineEvent` for the supervisor to record.

Slots: with ``trials_per_gpu: N`` each GPU gets N slots; with ``auto`` each GPU gets
``ceil(workers / n_gpus)`` slots and the packer admits trials by predicted memory. Each slot's
worker is pinned to its GPU through the backend's environment (``CUDA_VISIBLE_DEVICES``).

A device query that fails while placing a trial (NVML: the GPU is lost, an unknown error, no
permission) quarantines that device instead of aborting the run; the event reaches the
supervisor through the next :meth:`DevicePlanner.check_health`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from optuna.distributions import BaseDistribution, FloatDistribution

from hpo.devices.base import DeviceBackend, DeviceError, cpu_env, reset_gpu
from hpo.devices.factory import open_backend
from hpo.devices.packing import MemoryModel, Packer
from hpo.errors import ConfigError
from hpo.failures import FailureClass
from hpo.outcome import Status

if TYPE_CHECKING:
    from hpo.config import StudyConfig
    from hpo.failures.result import TrialResult

log = logging.getLogger(__name__)
HEALTH_EVERY_S = 10.0


@dataclass(frozen=True)
class QuarantineEvent:
    """A GPU left rotation: why, and whether any GPU is left (a reset is a :class:`ResetEvent`)."""

    device: int
    reason: str
    none_left: bool
    uuid: str | None = None
    restored: bool = False  # read back from the study at start, not new


@dataclass(frozen=True)
class ResetEvent:
    """A quarantined GPU was reset (``allow_gpu_reset``) once none of the run's workers held
    it: whether ``nvidia-smi`` did it, and whether the GPU is back in rotation."""

    device: int
    done: bool
    message: str
    back: bool
    none_left: bool
    uuid: str | None = None


class Planner(Protocol):
    """What the supervisor asks about devices. ``None`` as a device means the CPU."""

    on_gpu: bool

    @property
    def restored(self) -> Sequence[QuarantineEvent]:
        """Quarantines an earlier run left on the study, applied at start."""
        ...

    def slot_devices(self) -> list[int | None]: ...
    def env(self, device: int | None) -> dict[str, str]: ...
    def usable(self, device: int | None) -> bool: ...
    def ask_distributions(
        self, space: Callable[[], Mapping[str, BaseDistribution]]
    ) -> dict[str, BaseDistribution] | None:
        """Distributions to ask with (``space()`` reads the study's: called only if needed)."""
        ...

    def place(
        self, params: Mapping[str, Any] | None, idle: Sequence[int | None], alone: bool = False
    ) -> int | None:
        """Index into ``idle`` of the slot device to start the trial on now, or None to wait;
        ``alone``: only on a GPU no other trial is running on."""
        ...

    def started(
        self, number: int, device: int | None, params: Mapping[str, Any], alone: bool = False
    ) -> None:
        """Trial ``number`` started; ``alone``: no other trial may join it on its GPU."""
        ...

    def was_shared(self, number: int) -> bool:
        """Whether another trial ran on the same GPU while trial ``number`` ran."""
        ...

    def finished(self, number: int, result: TrialResult | None) -> None:
        """Trial ``number`` left its device; ``result`` (None: it never ran) feeds the memory
        model (completed peaks only) and the measured per-process overhead."""
        ...

    def sticky_context(self, device: int | None) -> tuple[int, str | None]:
        """(sticky errors on ``device`` within the window, failed-health reason or None)."""
        ...

    def note_sticky(self, device: int | None) -> None: ...
    def quarantine(self, device: int, reason: str) -> QuarantineEvent | None: ...
    def reset_idle(self, in_use: Container[int | None]) -> list[ResetEvent]:
        """Reset the quarantined GPUs awaiting a reset on which no worker is alive (``in_use``
        holds the devices that still have one)."""
        ...

    def check_health(self) -> list[QuarantineEvent]: ...
    def close(self) -> None: ...


class NullPlanner:
    """No GPU: every slot runs on the CPU, nothing is placed, nothing is quarantined."""

    on_gpu = False
    restored: tuple[QuarantineEvent, ...] = ()

    def __init__(self, workers: int, hide_gpus: bool) -> None:
        self._workers = workers
        self._hide = hide_gpus

    def slot_devices(self) -> list[int | None]:
        return [None] * self._workers

    def env(self, device: int | None) -> dict[str, str]:
        return cpu_env() if self._hide else {}

    def usable(self, device: int | None) -> bool:
        return True

    def ask_distributions(
        self, space: Callable[[], Mapping[str, BaseDistribution]]
    ) -> dict[str, BaseDistribution] | None:
        return None

    def place(
        self, params: Mapping[str, Any] | None, idle: Sequence[int | None], alone: bool = False
    ) -> int | None:
        return 0 if idle else None

    def started(
        self, number: int, device: int | None, params: Mapping[str, Any], alone: bool = False
    ) -> None:
        return None

    def was_shared(self, number: int) -> bool:
        return False

    def finished(self, number: int, result: TrialResult | None) -> None:
        return None

    def sticky_context(self, device: int | None) -> tuple[int, str | None]:
        return 0, None

    def note_sticky(self, device: int | None) -> None:
        return None

    def quarantine(self, device: int, reason: str) -> QuarantineEvent | None:
        return None

    def reset_idle(self, in_use: Container[int | None]) -> list[ResetEvent]:
        return []

    def check_health(self) -> list[QuarantineEvent]:
        return []

    def close(self) -> None:
        return None


class DevicePlanner:
    """GPUs of one backend, a packer over them, and each GPU's recent sticky errors."""

    on_gpu = True

    def __init__(
        self,
        backend: DeviceBackend,
        devices: list[int],
        packer: Packer,
        *,
        per_gpu: int,
        mem_keys: Sequence[str] | None,
        packing_auto: bool,
        window_s: float,
        allow_reset: bool,
        uuids: Mapping[int, str | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        measure_free: bool = False,
    ) -> None:
        self.backend = backend
        self.uuids = dict(uuids or {})
        self.restored: list[QuarantineEvent] = []
        self.devices = devices
        self.packer = packer
        self._per_gpu = per_gpu
        self._keys = list(mem_keys) if mem_keys else None
        self._auto = packing_auto
        self._window = window_s
        self._allow_reset = allow_reset
        self._clock = clock
        self._sticky: dict[int, list[float]] = {d: [] for d in devices}
        self._shared: set[int] = set()  # trials that had company on their GPU
        self._alone: dict[int, int] = {}  # device -> the trial that must run alone on it
        self._to_reset: set[int] = set()  # quarantined, reset once no worker holds them
        self._was_reset: set[int] = set()  # one reset per GPU and run: then it stays out
        self._next_health = 0.0
        self._events: list[QuarantineEvent] = []  # quarantines made while placing
        self._told_varies: set[Any] = set()
        if measure_free:
            self.packer.free_mb = self._free_mb

    def _free_mb(self, device: int) -> int:
        """Free memory now; a failed query quarantines the device (and it has no room)."""
        try:
            query = getattr(self.backend, "free_mb", None)
            return int(query(device)) if query else self.backend.info(device).free_mb
        except DeviceError as exc:
            ev = self.quarantine(device, f"GPU query failed while placing a trial: {exc}")
            if ev is not None:
                self._events.append(ev)
            return 0

    def slot_devices(self) -> list[int | None]:
        return [d for d in self.devices for _ in range(self._per_gpu)]

    def env(self, device: int | None) -> dict[str, str]:
        return self.backend.env(device)

    def usable(self, device: int | None) -> bool:
        return device is None or device in self.packer.active_devices()

    def ask_distributions(
        self, space: Callable[[], Mapping[str, BaseDistribution]]
    ) -> dict[str, BaseDistribution] | None:
        """In ``auto`` packing, ask with the discrete parameters known from finished trials, so
        that they are sampled before the trial is placed (``suggest_*`` then returns them)."""
        if not self._auto:
            return None
        keys = self._keys
        return {
            k: v
            for k, v in space().items()
            if (k in keys if keys else not isinstance(v, FloatDistribution))
        } or None

    def place(
        self, params: Mapping[str, Any] | None, idle: Sequence[int | None], alone: bool = False
    ) -> int | None:
        if not idle:
            return None
        first: dict[int, int] = {}
        for i, d in enumerate(idle):
            if d is not None and d not in self._alone and not (alone and self.packer.running_on(d)):
                first.setdefault(d, i)
        exclude = [d for d in self.devices if d not in first]
        device = self.packer.choose(dict(params) if params else None, exclude=exclude)
        return None if device is None else first[device]

    def started(
        self, number: int, device: int | None, params: Mapping[str, Any], alone: bool = False
    ) -> None:
        if device is not None:
            if alone:
                self._alone[device] = number
            others = self.packer.running_on(device)
            if others:
                self._shared.update([number, *others])
            self.packer.start(number, device, dict(params) or None)

    def was_shared(self, number: int) -> bool:
        return number in self._shared

    def finished(self, number: int, result: TrialResult | None) -> None:
        self._shared.discard(number)
        self._alone = {d: n for d, n in self._alone.items() if n != number}
        device = self.packer.device_of(number)
        if result is None:
            self.packer.finish(number, None, complete=False)
            return
        if device is not None and result.gpu_overhead_mb is not None:
            self.packer.set_overhead(device, result.gpu_overhead_mb)
            self.packer.note_context(device, result.worker_pid)
        self.packer.finish(
            number,
            result.peak_gpu_mem_mb,
            oom=result.failure_class is FailureClass.OOM,
            complete=result.status is Status.COMPLETE,
        )
        for key, seen in self.packer.model.varies().items():
            if key not in self._told_varies:
                self._told_varies.add(key)
                log.warning("trials_per_gpu: auto: %s. %s", seen, _KEYS_HINT)

    def _recent(self, device: int) -> list[float]:
        now = self._clock()
        return [t for t in self._sticky.get(device, []) if now - t < self._window]

    def sticky_context(self, device: int | None) -> tuple[int, str | None]:
        if device is None or device not in self._sticky:
            return 0, None
        health = self.backend.health(device)
        return len(self._recent(device)), None if health.ok else health.reason

    def note_sticky(self, device: int | None) -> None:
        if device is not None and device in self._sticky:
            self._sticky[device] = [*self._recent(device), self._clock()]

    def quarantine(self, device: int, reason: str) -> QuarantineEvent | None:
        if not self.packer.quarantine(device, reason):
            return None  # already out of rotation
        if self._allow_reset and device not in self._was_reset:  # later: see reset_idle
            self._to_reset.add(device)
        none_left = not self.packer.active_devices() and not self._to_reset
        return QuarantineEvent(device, reason, none_left, self.uuids.get(device))

    def reset_idle(self, in_use: Container[int | None]) -> list[ResetEvent]:
        """``nvidia-smi --gpu-reset`` refuses while any process holds a context on the GPU, so
        a quarantined GPU is reset only once the run's workers on it are gone; healthy after
        the reset, it returns to rotation (its sticky history forgotten), once per run: a GPU
        quarantined again after its reset stays out."""
        events = []
        for d in sorted(d for d in self._to_reset if d not in in_use):
            self._to_reset.discard(d)
            self._was_reset.add(d)
            done, message = reset_gpu(self.backend, d, allowed=True)
            back = done and self.backend.health(d).ok
            if back:
                self.packer.readmit(d)
                self._sticky[d] = []
            none_left = not self.packer.active_devices() and not self._to_reset
            events.append(ResetEvent(d, done, message, back, none_left, self.uuids.get(d)))
        return events

    def restore(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Keep out of rotation the GPUs an earlier run quarantined (matched by UUID, else by
        index); the events are in :attr:`restored`."""
        for rec in records:
            matches = [
                d
                for d in self.devices
                if (rec.get("uuid") and self.uuids.get(d) == rec.get("uuid"))
                or (not rec.get("uuid") and rec.get("gpu") == d)
            ]
            for d in matches:
                reason = f"{rec.get('reason')} (since an earlier run; `hpo quarantine --lift {d}`)"
                if self.packer.quarantine(d, reason):
                    none_left = not self.packer.active_devices()
                    ev = QuarantineEvent(d, reason, none_left, self.uuids.get(d), True)
                    self.restored.append(ev)

    def check_health(self) -> list[QuarantineEvent]:
        """Quarantines made while placing trials, then (every ``HEALTH_EVERY_S``) a probe of the
        active GPUs: a failed probe quarantines the GPU."""
        events, self._events = self._events, []
        now = self._clock()
        if now < self._next_health:
            return events
        self._next_health = now + HEALTH_EVERY_S
        for d in self.packer.active_devices():
            h = self.backend.health(d)
            if not h.ok:
                ev = self.quarantine(d, f"health check failed: {h.reason}")
                if ev is not None:
                    events.append(ev)
        return events

    def close(self) -> None:
        self.backend.close()


_KEYS_HINT = (
    "Such trials now run alone. Name the parameters that decide memory in the study config, "
    "e.g. `gpu_mem_keys: [batch_size, hidden_ratio]`; a float among them must take few values "
    "(suggest_float(..., step=...) or suggest_categorical), or use a fixed trials_per_gpu: N"
)


def _visible(backend: DeviceBackend, found: Sequence[int]) -> str:
    describe = getattr(backend, "describe", None)
    return str(describe()) if callable(describe) else f"visible: {list(found) or 'none'}"


def check_gpu_requirement(cfg: StudyConfig, run_dir: Path) -> None:
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


def open_planner(
    cfg: StudyConfig, run_dir: Path, quarantined: Sequence[Mapping[str, Any]] = ()
) -> Planner:
    """The planner for this run: GPUs found by the configured backend, or the CPU; the GPUs in
    ``quarantined`` (records an earlier run left on the study) stay out of rotation."""
    hide = cfg.device_backend == "cpu" or cfg.gpus == "none"
    if cfg.gpus == "none":
        return NullPlanner(cfg.workers, hide)
    backend = open_backend(cfg.device_backend, cfg.simulated_gpus, run_dir)
    found = list(range(int(getattr(backend, "count", len(backend.list())))))
    if cfg.gpus == "auto":
        devices = found
    else:
        missing = [d for d in cfg.gpus if d not in found]
        if missing:
            backend.close()
            raise ConfigError(
                f"gpus: {cfg.gpus}: GPU {', '.join(map(str, missing))} is not visible to this "
                f"process; {_visible(backend, found)} (see `hpo doctor`)"
            )
        devices = list(cfg.gpus)
    infos = {}
    for d in devices:
        try:
            infos[d] = backend.info(d)
        except DeviceError as exc:
            if cfg.gpus != "auto":
                backend.close()
                raise ConfigError(f"gpus: {cfg.gpus}: GPU {d} cannot be used: {exc}") from None
            log.warning("GPU %d left out: %s", d, exc)
    devices = [d for d in devices if d in infos]
    if not devices:
        backend.close()
        return NullPlanner(cfg.workers, hide)
    real = backend.name == "nvml"
    per_gpu = (
        cfg.trials_per_gpu
        if isinstance(cfg.trials_per_gpu, int)
        else math.ceil(cfg.workers / len(devices))
    )
    packer = Packer(
        devices,
        {d: infos[d].total_mb for d in devices},
        cfg.trials_per_gpu,
        cfg.gpu_mem_margin_mb,
        MemoryModel(keys=cfg.gpu_mem_keys),
        # The CUDA context, which max_memory_reserved misses: a guess until workers measure it.
        overhead_mb=512 if real else 0,
        slots=dict.fromkeys(devices, per_gpu),
    )
    log.info("GPUs %s (%s backend), %s trial(s) per GPU", devices, backend.name, cfg.trials_per_gpu)
    planner = DevicePlanner(
        backend,
        devices,
        packer,
        per_gpu=per_gpu,
        mem_keys=cfg.gpu_mem_keys,
        packing_auto=cfg.trials_per_gpu == "auto",
        window_s=cfg.quarantine_window_s,
        allow_reset=cfg.allow_gpu_reset,
        uuids={d: infos[d].uuid for d in devices},
        measure_free=real,
    )
    planner.restore(quarantined)
    return planner
