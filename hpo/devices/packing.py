"""Which GPU a trial starts on: fixed slots, or memory-aware packing learned from measured peaks.

Pure logic (no processes, no NVML calls of its own, an injectable clock), so the supervisor, the
tests and ``bench/packing_sim.py`` drive the very same code.

:class:`MemoryModel` predicts a trial's peak GPU memory from the peaks measured for finished
trials with the same *key* (the values of the parameters that decide memory: by default every
parameter whose value is not a float, e.g. model name and batch size, but not learning rate).
A prediction is the largest peak seen for the key times ``headroom`` (1.1); an unseen key is
unknown (``None``). Only trials that completed teach it a peak: a pruned or failed trial stopped
early, so its peak is only a lower bound, which may raise a prediction (never lower it) and
never makes a key known. An OOM marks its key "run alone" until a trial of that key completes,
and the OOM'd trial's peak stays a lower bound after that. When trials of one key peak far
apart (more than ``VARIES`` times), their memory depends on a parameter the key leaves out (by
default, a float): the key then runs alone and :meth:`MemoryModel.varies` says how to fix it.

:class:`Packer` places trials. With a fixed ``trials_per_gpu`` N, a GPU takes at most N trials
whatever their memory. With ``"auto"``, a trial starts on a GPU only if its prediction plus
``margin_mb`` fits the GPU's capacity minus the predictions of the trials already there (and,
when ``free_mb`` is given, the measured free memory minus the predictions of trials started in
the last ``settle_s`` seconds, which may not have reached their peak yet). Every trial also
counts ``overhead_mb``, memory its measured peak misses (the CUDA context of its process, about
300-500 MB, which ``torch.cuda.max_memory_reserved`` does not include): a guess until workers
measure it (:meth:`Packer.set_overhead`), and counted for idle workers that hold a context too
(:meth:`Packer.note_context`, up to the device's worker slots). A trial whose
prediction is unknown runs alone, and so does one too big to share a GPU: that is the
conservative start. Among the GPUs that fit, the one with the fewest running trials wins (they
share its compute), then the tightest fit (big holes stay free for big trials), then the lowest
index. ``choose`` returning ``None`` means: wait until a trial finishes.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

log = logging.getLogger(__name__)

ParamKey = tuple[tuple[str, Any], ...]

#: Completed peaks of one key this many times apart: memory depends on a parameter not in the key.
VARIES = 1.5


class MemoryModel:
    """Peak GPU memory (MB) per parameter key, learned from finished trials."""

    def __init__(self, keys: Sequence[str] | None = None, headroom: float = 1.1) -> None:
        if headroom < 1.0:
            raise ValueError(f"headroom must be >= 1.0, got {headroom}")
        self.keys = None if keys is None else tuple(keys)
        self.headroom = headroom
        self._peaks: dict[ParamKey, float] = {}
        self._least: dict[ParamKey, float] = {}  # smallest completed peak per key
        self._floor: dict[ParamKey, float] = {}  # lower bounds from pruned, failed and OOM'd trials
        self._oom: set[ParamKey] = set()
        self._varies: dict[ParamKey, str] = {}  # keys whose peaks vary: runs alone, and why

    def key(self, params: Mapping[str, Any]) -> ParamKey:
        """The part of ``params`` that decides memory."""
        if self.keys is not None:
            return tuple((name, _hashable(params.get(name))) for name in self.keys)
        return tuple(
            (name, _hashable(value))
            for name, value in sorted(params.items())
            if not isinstance(value, float)
        )

    def observe(self, params: Mapping[str, Any], peak_mb: float) -> None:
        """Record the measured peak (MB) of a trial that *completed* (see :meth:`observe_partial`
        for the others). It clears the key's OOM mark: the key was measured whole."""
        _check(peak_mb)
        k = self.key(params)
        self._peaks[k] = max(self._peaks.get(k, 0.0), float(peak_mb))
        self._least[k] = min(self._least.get(k, math.inf), float(peak_mb))
        self._oom.discard(k)
        if k not in self._varies and self._peaks[k] > VARIES * max(self._least[k], 1.0):
            floats = sorted(n for n, v in params.items() if isinstance(v, float))
            self._varies[k] = (
                f"trials with {_show(k)} peaked between {self._least[k]:.0f} and "
                f"{self._peaks[k]:.0f} MB, so their memory depends on a parameter the memory key "
                f"leaves out{' (float parameters: ' + ', '.join(floats) + ')' if floats else ''}"
            )

    def observe_partial(self, params: Mapping[str, Any], peak_mb: float) -> None:
        """A pruned or failed trial's peak: a lower bound for its key, never a measurement."""
        _check(peak_mb)
        k = self.key(params)
        self._floor[k] = max(self._floor.get(k, 0.0), float(peak_mb))

    def observe_oom(self, params: Mapping[str, Any], peak_mb: float | None = None) -> None:
        """A trial with these params ran out of memory: it runs alone until one completes, and
        ``peak_mb`` (what it held when it died) stays a lower bound."""
        k = self.key(params)
        self._oom.add(k)
        if peak_mb is not None:
            self.observe_partial(params, peak_mb)

    def predict(self, params: Mapping[str, Any] | None) -> float | None:
        """Predicted peak in MB; ``None`` if unknown; ``inf`` after an OOM, or for a key whose
        peaks vary (must run alone)."""
        if params is None:
            return None
        k = self.key(params)
        if k in self._oom or k in self._varies:
            return math.inf
        peak = self._peaks.get(k)
        return None if peak is None else max(peak, self._floor.get(k, 0.0)) * self.headroom

    def varies(self) -> dict[ParamKey, str]:
        """Keys whose completed peaks lie more than ``VARIES`` times apart, and what was seen."""
        return dict(self._varies)

    def observed(self) -> dict[ParamKey, float]:
        """The largest measured peak per key (a copy)."""
        return dict(self._peaks)

    def __len__(self) -> int:
        return len(self._peaks)


def _check(peak_mb: float) -> None:
    if peak_mb < 0 or math.isnan(peak_mb):
        raise ValueError(f"peak_mb must be a non-negative number, got {peak_mb}")


def _show(key: ParamKey) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in key) or "any parameters"


def _hashable(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    return value


@dataclass
class _Running:
    trial: int
    device: int
    params: Mapping[str, Any] | None
    started: float


class Packer:
    """Decides where trials start; the supervisor tells it about starts and finishes.

    ``devices``: GPU indices in use; ``capacity_mb``: total memory per device;
    ``trials_per_gpu``: N or ``"auto"``; ``margin_mb``: kept free beyond each prediction;
    ``model``: the :class:`MemoryModel` (fed by :meth:`finish`); ``free_mb``: optional measured
    free memory per device (NVML), which also accounts for processes that are not ours;
    ``overhead_mb``: the per-process memory a measured peak misses, until :meth:`set_overhead`
    gives a measurement; ``slots``: worker processes per device (caps :meth:`note_context`).
    """

    def __init__(
        self,
        devices: Sequence[int],
        capacity_mb: Mapping[int, int],
        trials_per_gpu: int | Literal["auto"],
        margin_mb: int,
        model: MemoryModel,
        free_mb: Callable[[int], int] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        settle_s: float = 30.0,
        overhead_mb: int = 0,
        slots: Mapping[int, int] | None = None,
    ) -> None:
        if trials_per_gpu != "auto" and (not isinstance(trials_per_gpu, int) or trials_per_gpu < 1):
            raise ValueError(f"trials_per_gpu must be >= 1 or 'auto', got {trials_per_gpu!r}")
        missing = [d for d in devices if d not in capacity_mb]
        if missing:
            raise ValueError(f"no capacity given for device(s) {missing}")
        if margin_mb < 0 or overhead_mb < 0:
            raise ValueError(
                f"margin_mb and overhead_mb must be >= 0, got {margin_mb}, {overhead_mb}"
            )
        self.devices = list(dict.fromkeys(devices))
        self.capacity_mb = {d: int(capacity_mb[d]) for d in self.devices}
        self.trials_per_gpu = trials_per_gpu
        self.margin_mb = margin_mb
        self.model = model
        self.free_mb = free_mb
        self.clock = clock
        self.settle_s = settle_s
        self.overhead_mb = overhead_mb
        self.slots = dict(slots) if slots is not None else {}
        self._overhead: dict[int, float] = {}  # measured per device (the largest seen)
        self._contexts: dict[int, set[int]] = {d: set() for d in self.devices}
        self._running: dict[int, _Running] = {}
        self._quarantined: dict[int, str] = {}

    # -- queries ---------------------------------------------------------------------------------
    def active_devices(self) -> list[int]:
        """Devices that may receive trials (not quarantined), in index order."""
        return [d for d in self.devices if d not in self._quarantined]

    def quarantined(self) -> dict[int, str]:
        """Quarantined devices and why."""
        return dict(self._quarantined)

    def running_on(self, device: int) -> list[int]:
        """Trial numbers running on ``device``, in start order."""
        return [r.trial for r in self._running.values() if r.device == device]

    def device_of(self, trial_number: int) -> int | None:
        r = self._running.get(trial_number)
        return None if r is None else r.device

    def overhead(self, device: int | None = None) -> float:
        """Per-process memory on ``device`` that peaks miss: measured, else ``overhead_mb``."""
        return (
            self._overhead.get(device, self.overhead_mb)
            if device is not None
            else (max(self._overhead.values(), default=self.overhead_mb))
        )

    def need_mb(self, params: Mapping[str, Any] | None, device: int | None = None) -> float | None:
        """Memory a trial with ``params`` is expected to take: prediction + per-process overhead."""
        pred = self.model.predict(params)
        return None if pred is None else pred + self.overhead(device)

    def predicted_mb(self, trial_number: int) -> float | None:
        """The current expectation for a running trial (``None``: unknown)."""
        r = self._running.get(trial_number)
        return None if r is None else self.need_mb(r.params, r.device)

    def reserved_mb(self, device: int) -> float | None:
        """Sum of expectations of the trials on ``device`` and of its idle workers' contexts
        (``None`` if any trial is unknown)."""
        preds = [self.need_mb(r.params, device) for r in self._on(device)]
        if any(p is None for p in preds):
            return None
        return sum(p for p in preds if p is not None) + self._idle_contexts_mb(device)

    def _idle_contexts_mb(self, device: int) -> float:
        """Memory held by workers on ``device`` that have a CUDA context and run no trial."""
        held = len(self._contexts.get(device, ()))
        if device in self.slots:
            held = min(held, self.slots[device])
        return max(0, held - len(self._on(device))) * self.overhead(device)

    # -- decisions -------------------------------------------------------------------------------
    def choose(self, params: Mapping[str, Any] | None, exclude: Sequence[int] = ()) -> int | None:
        """A device to start a trial with ``params`` on now, or ``None`` (wait for a finish).

        ``exclude``: devices not to consider now (e.g. no idle worker there)."""
        return self._choose(params, exclude)

    def plan(
        self, waiting: Sequence[tuple[int, Mapping[str, Any] | None]]
    ) -> list[tuple[int, int]]:
        """Backfill: which of the ``waiting`` trials (oldest first) to start now, and where.

        Trials are placed oldest first as by :meth:`choose`, each placement counting for the next.
        The oldest trial that cannot start *reserves* the device where it will fit first (the
        most headroom): younger trials may start only on other devices, so that device drains
        and the blocked trial is not starved. Returns ``(trial_number, device)`` pairs; nothing
        is recorded until the supervisor calls :meth:`start` for each.
        """
        saved = dict(self._running)
        out: list[tuple[int, int]] = []
        reserved: tuple[int, ...] = ()
        try:
            for trial, params in waiting:
                device = self._choose(params, reserved)
                if device is None:
                    if not reserved:
                        hold = self._reservation(params)
                        reserved = () if hold is None else (hold,)
                    continue
                out.append((trial, device))
                self._running[trial] = _Running(trial, device, params, self.clock())
        finally:
            self._running = saved
        return out

    def _choose(self, params: Mapping[str, Any] | None, exclude: Sequence[int]) -> int | None:
        best: tuple[float, float, int] | None = None
        for device in self.active_devices():
            if device in exclude:
                continue
            room = self._room(device, params)
            if room is None:
                continue
            rank = (len(self._on(device)), room, device)
            if best is None or rank < best:
                best = rank
        return None if best is None else best[2]

    def _reservation(self, params: Mapping[str, Any] | None) -> int | None:
        """The device a blocked trial will fit on first: most headroom, then fewest trials."""
        devices = self.active_devices()
        if not devices:
            return None
        if self.trials_per_gpu != "auto":
            return min(devices, key=lambda d: (len(self._on(d)), d))
        return min(devices, key=lambda d: (-self._headroom(d), len(self._on(d)), d))

    def explain(self, params: Mapping[str, Any] | None) -> str:
        """One line on why ``choose(params)`` waits (or where it would start)."""
        choice = self.choose(params)
        if choice is not None:
            return f"starts on GPU {choice}"
        if not self.active_devices():
            return "no GPU left: " + "; ".join(
                f"GPU {d} quarantined ({why})" for d, why in self._quarantined.items()
            )
        if self.trials_per_gpu != "auto":
            return f"every GPU runs {self.trials_per_gpu} trial(s) (trials_per_gpu)"
        pred = self.need_mb(params)
        parts = []
        for device in self.active_devices():
            others = self._on(device)
            if any(self.need_mb(r.params) is None for r in others):
                parts.append(f"GPU {device} runs a trial of unknown size alone")
            elif pred is None or self._too_big(device, pred):
                parts.append(f"GPU {device} busy with {len(others)} trial(s)")
            else:
                parts.append(f"GPU {device} has {self._headroom(device):.0f} MB free")
        need = (
            "unknown size (runs alone)"
            if pred is None
            else f"{pred:.0f} MB + {self.margin_mb} MB margin"
        )
        return f"waiting: needs {need}; " + ", ".join(parts)

    def _on(self, device: int) -> list[_Running]:
        return [r for r in self._running.values() if r.device == device]

    def _too_big(self, device: int, pred: float) -> bool:
        return pred + self.margin_mb > self.capacity_mb[device]

    def _headroom(self, device: int) -> float:
        """Memory left on ``device`` by our predictions and, if measured, by the GPU itself."""
        on = self._on(device)
        cap = float(self.capacity_mb[device])
        needs = (self.need_mb(r.params, device) for r in on)
        preds = [p if p is not None else cap for p in needs]
        room = self.capacity_mb[device] - sum(preds) - self._idle_contexts_mb(device)
        if self.free_mb is not None:
            now = self.clock()
            settling = sum(
                p for r, p in zip(on, preds, strict=True) if now - r.started < self.settle_s
            )
            room = min(room, float(self.free_mb(device)) - settling)
        return room

    def _room(self, device: int, params: Mapping[str, Any] | None) -> float | None:
        """Memory left after placing the trial on ``device``, or ``None`` if it may not start."""
        on = self._on(device)
        if self.trials_per_gpu != "auto":
            return 0.0 if len(on) < self.trials_per_gpu else None
        if any(self.need_mb(r.params, device) is None for r in on):
            return None  # a trial of unknown size runs alone
        pred = self.need_mb(params, device)
        if pred is None or self._too_big(device, pred):
            return None if on else float(self.capacity_mb[device])
        room = self._headroom(device) - pred
        return room if room >= self.margin_mb else None

    # -- events ----------------------------------------------------------------------------------
    def start(self, trial_number: int, device: int, params: Mapping[str, Any] | None) -> None:
        """Record that trial ``trial_number`` started on ``device``."""
        if device not in self.capacity_mb:
            raise ValueError(f"unknown device {device}")
        if device in self._quarantined:
            raise ValueError(f"GPU {device} is quarantined: {self._quarantined[device]}")
        if trial_number in self._running:
            raise ValueError(f"trial {trial_number} is already running")
        self._running[trial_number] = _Running(
            trial_number, device, None if params is None else dict(params), self.clock()
        )
        log.debug(
            "[trial %d] placed on GPU %d (expects %s MB)",
            trial_number,
            device,
            self.need_mb(params),
        )

    def finish(
        self,
        trial_number: int,
        peak_mb: float | None,
        *,
        oom: bool = False,
        complete: bool = True,
    ) -> bool:
        """Record that a trial ended, with its measured peak (``None``: not measured).

        Only a ``complete`` trial teaches the model its peak; a pruned or failed one's
        peak is a lower bound for its key. Pass ``oom=True`` for a trial that ran out of memory:
        its key then runs alone until a trial of the same key completes.
        Returns ``False`` for a trial this packer does not know (idempotent).
        """
        r = self._running.pop(trial_number, None)
        if r is None:
            return False
        if r.params is not None:
            if oom:
                self.model.observe_oom(r.params, peak_mb)
            elif peak_mb is not None and complete:
                self.model.observe(r.params, peak_mb)
            elif peak_mb is not None:
                self.model.observe_partial(r.params, peak_mb)
        return True

    def set_overhead(self, device: int, mb: float) -> None:
        """A worker on ``device`` measured its per-process overhead (NVML's memory for the
        process minus torch's reserved memory): the largest measurement replaces the guess."""
        if mb >= 0 and not math.isnan(mb):
            self._overhead[device] = max(self._overhead.get(device, 0.0), float(mb))

    def note_context(self, device: int, worker: int) -> None:
        """Worker ``worker`` (a pid) on ``device`` holds a CUDA context, idle or not."""
        self._contexts.setdefault(device, set()).add(worker)

    def quarantine(self, device: int, reason: str) -> bool:
        """Stop placing trials on ``device``; its running trials stay until they finish.

        Returns ``True`` if the device was newly quarantined.
        """
        if device not in self.capacity_mb or device in self._quarantined:
            return False
        self._quarantined[device] = reason
        log.warning("GPU %d quarantined: %s", device, reason)
        return True

    def readmit(self, device: int) -> None:
        """Put a quarantined ``device`` back in rotation (it was reset and is healthy)."""
        if self._quarantined.pop(device, None) is not None:
            log.warning("GPU %d back in rotation", device)
