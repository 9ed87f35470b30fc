"""The supervisor: keeps ``workers`` trials running in isolated processes and finishes each one.

One thread, one loop (gunicorn's arbiter): signal handlers only record the signal and wake the
loop; the loop fills idle slots with trials, waits on every worker's channel and exit sentinel,
dispatches each message to its ``_on_<kind>`` handler, and runs the timers (heartbeats, limits,
orphans, device health, GPU resets). It composes :mod:`hpo.workers` (processes),
:mod:`hpo.storage` (the study), :mod:`hpo.failures` (one ``TrialResult`` per trial end, and the
pure ``decide``) and :mod:`hpo.devices` (a planner), and decides nothing a pure function could.

Stopping rule: the study holds ``n_trials`` trials in COMPLETE or PRUNED state (the semantics of
``optuna.study.MaxTrialsCallback``), counted in the storage so that a restarted or a second
supervisor counts what is already there.
"""

from __future__ import annotations

import logging
import os
import random
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from hpo import allocator, attrs, chaos
from hpo.config import StudyConfig
from hpo.devices import Planner, QuarantineEvent, check_gpu_requirement, open_planner
from hpo.errors import ExitCode, HpoError, StopRun, StorageError
from hpo.events import EventLog, close_log, log_to_file
from hpo.failures import (
    Decision,
    FailureClass,
    Imposed,
    TrialResult,
    advance,
    build_result,
    decide,
    recover,
    stop_message,
)
from hpo.objective import check_ref, run_preflight
from hpo.outcome import Outcome
from hpo.paths import RunPaths
from hpo.process import SignalWake, become_subreaper, pid_alive
from hpo.protocol import Msg, WorkerExit
from hpo.runstats import NullDisplay, RunStats
from hpo.storage import Asked, StudyStore, owner_record, redact
from hpo.workers import Mechanism, Slot, WorkerPool, start_forkserver

log = logging.getLogger("hpo.supervisor")
FC = FailureClass
_LOG_LEVEL = {ExitCode.OK: logging.INFO, ExitCode.INTERRUPTED: logging.WARNING}


class Supervisor:
    """One run of one study. ``mechanism`` and ``clock`` are the seams for tests without
    processes (``hpo.testing.fakes``)."""

    def __init__(
        self,
        cfg: StudyConfig,
        *,
        echo: Callable[[str], None] | None = None,
        progress: Any = None,
        mechanism: Mechanism | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cfg = cfg
        self.paths = RunPaths(cfg.run_path)
        self.run_dir = self.paths.root
        self.echo = echo or (lambda s: None)
        self.progress = progress or NullDisplay()  # what the operator sees (hpo.progress)
        self.ctx = cfg.policy_context()  # limits and the breaker's state (see _finish)
        self.rng = random.Random(cfg.chaos_seed)
        self.clock = clock
        self._mechanism = mechanism
        self.n_objectives = len(cfg.study_directions)
        self.pool: WorkerPool
        self.planner: Planner  # opened in run(), after the study
        self.pending: list[Asked] = []  # asked, waiting for a slot (GPU packing), oldest first
        self.stopping: ExitCode | None = None
        self.stop_message = ""
        self.stop_deadline: float | None = None
        self.recovered = 0
        self.done_at_start = 0
        self.preflight_facts: dict[str, Any] = {}
        self._hb_next = 0.0
        self._orphans_next = clock() + cfg.heartbeat_grace

    @property
    def slots(self) -> list[Slot]:
        return self.pool.slots if hasattr(self, "pool") else []

    # ------------------------------------------------------------------ the run
    def run(self) -> int:
        self.paths.make()
        handler = log_to_file(self.paths.supervisor_log)
        if self._mechanism is None:  # real processes; tests pass scripted ones
            become_subreaper()
            self._mechanism = Mechanism(start_forkserver(self.cfg, self.paths))
        self.events = EventLog(self.paths.events)
        self.stats = RunStats(self.events, list(self.cfg.study_directions))
        self.progress.attach(self)
        code = ExitCode.OK
        with SignalWake() as self.signals:  # from the first instant: set-up included
            try:
                check_ref(self.cfg.objective)
                check_gpu_requirement(self.cfg, self.run_dir)
                # Before the study exists: bad data or a missing model creates nothing.
                self.preflight_facts = run_preflight(self.cfg.preflight, self.cfg.objective_kwargs)
                self.store = StudyStore.for_config(self.cfg)
                for k, v in self.preflight_facts.items():
                    self.store.set_study_attr(k, v)
                held = self.store.quarantines(self.cfg.quarantine_expires_s)
                self.planner = open_planner(self.cfg, self.run_dir, held)
                for ev in self.planner.restored:
                    self._quarantined(ev)
                self.recovered = self._recover_orphans()
                if self.recovered:
                    self.echo(f"resumed: recovered {self.recovered} trial(s) of a dead supervisor")
                devices, env = self.planner.slot_devices(), self.planner.env
                self.pool = WorkerPool(
                    self._mechanism, devices, self.cfg, self.paths, env, clock=self.clock
                )
                code = self._loop()
            except HpoError as exc:  # StopRun included
                code, self.stop_message = ExitCode(exc.exit_code), str(exc)
            finally:
                self._shutdown()
        self.events.emit("supervisor_stopped", exit_code=int(code), message=self.stop_message)
        self.events.close()
        self.progress.finish(self, int(code))
        close_log(handler)
        return int(code)

    def _loop(self) -> ExitCode:
        self.done_at_start = self.store.n_done()
        self.stats.supervisor_started(
            self.cfg.study, redact(self.cfg.storage_url), self.cfg.n_trials, len(self.pool.slots)
        )
        while True:
            self._handle_signal()
            if self.stopping is None:
                self._fill()
            if self._finished():
                break
            for kind, slot, payload in self.pool.poll(self._next_timer_in(), self.signals.fd):
                self._on_event(kind, slot, payload)
            self.signals.drain()
            self._timers()
            self.progress.tick(self)
        if self.stopping is None and self.store.n_complete() == 0:
            self.stop_message = f"n_trials reached, no trial completed ({self.stats.tally()})"
            return ExitCode.NOTHING_LEARNED
        return self.stopping or ExitCode.OK

    # ------------------------------------------------------------------ signals and stopping
    def _handle_signal(self) -> None:
        signum = self.signals.take()
        if signum is None:
            return
        name = signal.Signals(signum).name
        if self.signals.seen >= 2:
            log.warning("second signal: stopping now")
            self.echo("second signal: killing running trials now")
            self.stop_deadline = self.clock()
        else:
            grace = f"{self.cfg.stop_grace_s:.0f}s"
            self.echo(f"{name}: no new trials; running ones have {grace} (again to stop now)")
            log.warning("%s received: stopping with a %s grace period", name, grace)
        self._begin_stop(ExitCode.INTERRUPTED, f"interrupted by {name}")

    def _begin_stop(self, code: ExitCode, message: str, grace: float | None = -1.0) -> None:
        """No trial starts after this; running ones get ``grace`` seconds (default
        ``stop_grace_s``; None: as long as they take)."""
        if self.stopping is None:  # the first reason to stop is the one reported
            self.stopping, self.stop_message = code, message
            log.log(_LOG_LEVEL.get(code, logging.ERROR), message)
        if grace is not None:
            deadline = self.clock() + (self.cfg.stop_grace_s if grace < 0 else grace)
            if self.stop_deadline is None or deadline < self.stop_deadline:
                self.stop_deadline = deadline

    def _finished(self) -> bool:
        busy = bool(self.pool.running())
        if self.stopping is not None:
            if busy and self.stop_deadline is not None and self.clock() >= self.stop_deadline:
                self.pool.kill_running(Imposed(FC.INTERRUPTED, self.stop_message))
            return not busy
        return not busy and self.store.n_done() >= self.cfg.n_trials

    # ------------------------------------------------------------------ starting trials
    def _fill(self) -> None:
        for slot in self.pool.slots:
            usable = self.planner.usable(slot.device)
            why = self.pool.recycle_reason(slot) if usable else "device quarantined"
            if slot.worker is not None and slot.running is None and why:
                self._retire(slot, why)
            if slot.worker is None and usable:
                self.pool.start(slot)
        idle = [s for s in self.pool.idle() if self.planner.usable(s.device)]
        while idle and self.stopping is None:
            if not self.pending:
                if not self.store.budget_left(self.cfg.n_trials):
                    return
                self.pending.append(self._ask())
            alone = bool(self.pending[0].user_attrs.get(attrs.RUN_ALONE))
            at = self.planner.place(self.pending[0].params or None, [s.device for s in idle], alone)
            if at is None:
                return  # the trial waits until a running one frees memory
            self._start(idle.pop(at), self.pending.pop(0))

    def _ask(self) -> Asked:
        try:
            asked = self.store.ask(self.planner.ask_distributions(self.store.search_space))
        except StorageError as exc:
            raise StopRun(ExitCode.STORAGE, str(exc)) from None
        if self.planner.on_gpu:  # the trial may wait for GPU memory: own it now
            self.store.claim(asked.number, owner_record(self.run_dir, None, None))
        return asked

    def _start(self, slot: Slot, asked: Asked) -> None:
        w, n = slot.worker, asked.number
        assert w is not None
        fault = chaos.pick(self.rng, self.cfg.chaos, self.cfg.chaos_faults)
        spec = asked.spec(
            self.n_objectives, str(self.paths.trial_log(n)), str(self.paths.outcome(n)), fault
        )
        self.store.claim(n, owner_record(self.run_dir, w.pid, slot.device))
        timeout, mem = chaos.limits(
            fault[0], self.cfg.timeout_per_trial, self.cfg.max_host_mem_mb, w.tree_rss_mb
        )
        self.pool.assign(slot, spec, asked.attempt, timeout, mem, origin=asked)
        alone = bool(asked.user_attrs.get(attrs.RUN_ALONE))
        self.planner.started(n, slot.device, spec.params, alone)
        self.stats.trial_started(n, slot, w.pid, asked.attempt, fault[0])

    def _retire(self, slot: Slot, reason: str) -> None:
        w = self.pool.retire(slot)
        if w is not None:
            self.stats.worker("worker_recycled", slot, w.pid, reason=reason)

    # ------------------------------------------------------------------ events from workers
    def _on_event(self, kind: str, slot: Any, payload: Any) -> None:
        if kind == "message":
            worker, (msg, body) = payload
            if slot.worker is worker:  # else stale: the worker was retired meanwhile
                # pytest-xdist style: each message kind has its ``_on_<kind>`` handler.
                getattr(self, f"_on_{Msg(msg).value}")(slot, body)
        elif kind == "exit" and slot.worker is payload:
            self._on_exit(slot)

    def _on_ready(self, slot: Slot, payload: dict[str, Any]) -> None:
        self.pool.ready(slot)
        boot_s = round(payload["boot_s"], 3)
        self.stats.worker("worker_started", slot, payload["pid"], boot_s=boot_s)

    def _on_boot_error(self, slot: Slot, payload: tuple[str, str, str]) -> None:
        type_name, message, _tb = payload
        if not type_name.endswith("ObjectiveLoadError"):
            message = f"objective {self.cfg.objective} failed at import: {type_name}: {message}"
        raise StopRun(ExitCode.CONFIG, message)

    def _on_retire(self, slot: Slot, reason: str) -> None:
        """The worker cannot go on; a trial handed to it after its DONE is placed again (first)."""
        run = self.pool.release(slot) if slot.running is not None else None
        self._retire(slot, reason)
        if run is not None:
            self.planner.finished(run.number, None)
            self.pending.insert(0, run.origin)

    def _on_call(self, slot: Slot, payload: tuple[str, Any, Any]) -> None:
        if slot.running is not None and slot.worker is not None:
            if payload[0] == "study.stop":  # Optuna's: no new trial; the running ones finish
                self._begin_stop(
                    ExitCode.OK, f"trial {slot.running.number} called study.stop()", None
                )
            slot.worker.send((Msg.REPLY, self.store.serve(slot.running.number, payload)))

    def _on_done(self, slot: Slot, payload: dict[str, Any]) -> None:
        run = self.pool.release(slot)
        if run is None:
            return
        pid, outcome = slot.worker.pid if slot.worker else 0, Outcome.from_dict(payload)
        result = build_result(
            run.number, outcome=outcome, worker_pid=pid, log_path=run.spec.log_path
        )
        self._finish(result, run.spec.user_attrs, run.device, slot, run.origin)

    def _on_exit(self, slot: Slot) -> None:
        w = slot.worker
        assert w is not None
        code, sig, was_ready = self.pool.exited(slot)  # raises BootLoop, a StopRun
        if code == WorkerExit.BOOT_ERROR and not was_ready and slot.running is None:
            raise StopRun(
                ExitCode.CONFIG,
                f"objective {self.cfg.objective} could not be loaded in the worker "
                f"(see {w.proc.name} log)",
            )
        run = self.pool.release(slot) if slot.running is not None else None
        if run is not None:
            result = self.pool.lost(run, code, sig, w.pid)
            self._finish(result, run.spec.user_attrs, run.device, None)
        elif code == WorkerExit.RECYCLE:
            self.stats.worker("worker_recycled", slot, w.pid, reason="sticky CUDA error at cleanup")
        elif was_ready or code not in (0, None):
            self.stats.worker("worker_lost", slot, w.pid, exit_code=code, signal=sig)

    # ------------------------------------------------------------------ timers
    def _next_timer_in(self) -> float:
        now = self.clock()
        times = [self._hb_next, now + 1.0, self.pool.next_deadline() or now + 1.0]
        if self.stopping is not None and self.stop_deadline is not None:
            times.append(self.stop_deadline)
        return max(0.0, min(times) - now)

    def _timers(self) -> None:
        now = self.clock()
        if now >= self._hb_next:
            self._hb_next = now + self.cfg.heartbeat_interval
            numbers = [s.running.number for s in self.pool.running() if s.running]
            try:
                self.store.heartbeat(numbers + [a.number for a in self.pending])
            except Exception as exc:  # a missed heartbeat is not fatal; the grace period covers it
                log.warning("heartbeat failed: %s", exc)
            for ev in self.planner.check_health():
                self._quarantined(ev)
        if now >= self._orphans_next:  # trials of a supervisor (another host) that died meanwhile
            self._orphans_next = now + self.cfg.heartbeat_grace
            try:
                if n := self._recover_orphans():
                    self.echo(f"recovered {n} trial(s) of a supervisor that died")
            except Exception as exc:  # storage hiccup: try again next time
                log.warning("orphan check failed: %s", exc)
        self.pool.enforce_limits()
        self._reset_gpus()

    # ------------------------------------------------------------------ finishing trials
    def _recover_orphans(self) -> int:
        """Finish the trials a dead supervisor left RUNNING (see :func:`hpo.failures.recover`)."""
        orphans = self.store.orphans(os.getpid(), pid_alive, self.cfg.heartbeat_grace)
        for o in orphans:
            rd = str(o.run_dir) if o.run_dir else None
            result = recover(o.number, o.why, rd, worker_pid=o.worker_pid, age_s=o.age_s)
            self._finish(result, o.user_attrs, o.device, None)
            self.stats.recovered(result, o.why)
        return len(orphans)

    def _finish(
        self,
        result: TrialResult,
        lineage: Mapping[str, Any],
        device: int | None,
        slot: Slot | None,
        origin: Any = None,
    ) -> Decision:
        """Decide and carry out the decision: the one place a trial is finished. ``lineage`` is
        the trial's user attributes (attempt and retry counts of its parameters); ``origin``
        the asked trial, for a decision to place it again unfinished (``no_expandable``)."""
        result = self.store.constrain(result)  # the study's constraints function, if any
        number, diag = result.number, result.diagnosis
        shared, lost = self.planner.was_shared(number), not self.planner.usable(device)
        self.planner.finished(number, result)
        sticky = bool(diag and diag.sticky)
        n_sticky, health = self.planner.sticky_context(device) if sticky else (0, None)
        situation = replace(
            self.ctx,
            attempt=int(lineage.get(attrs.ATTEMPT, 1)),
            infra_retries=int(lineage.get(attrs.INFRA_RETRIES, 0)),
            on_gpu=device is not None,
            gpu_shared=shared,
            device_lost=lost,
            sticky_on_device=n_sticky,
            device_health=health,
        )
        decision = decide(result, situation)
        if decision.no_expandable and self.pool.drop_expandable(device):  # once per GPU
            self.echo(f"GPU {device}: {allocator.WSL_FALLBACK}")
            self.store.record_no_expandable(device, result.message)
        if decision.no_expandable and origin is not None:  # the attempt does not count
            if slot is not None:
                self._retire(slot, decision.recycle or decision.note)
            self.pending.insert(0, origin)
            return decision
        if sticky:
            self.planner.note_sticky(device)
        try:
            if not self.store.finish(result, decision, lineage=lineage, device=device):
                log.warning("[trial %d] was already finished by someone else", number)
        except StorageError as exc:
            raise StopRun(ExitCode.STORAGE, str(exc)) from None
        self.ctx = advance(self.ctx, decision)
        self.stats.finished(number, result, decision, situation.attempt)
        if decision.quarantine and device is not None:
            ev = self.planner.quarantine(device, decision.quarantine)
            if ev is not None:
                self._quarantined(ev)
        if slot is not None and slot.worker is not None and decision.recycle:
            self._retire(slot, decision.recycle)  # recycle_every: at the next _fill
        if decision.stop:
            self._begin_stop(decision.stop_code, stop_message(decision, result))
        return decision

    def _quarantined(self, ev: QuarantineEvent) -> None:
        self.events.emit("device_quarantined", device=ev.device, reason=ev.reason)
        self.echo(f"GPU {ev.device} quarantined: {ev.reason}")
        if not ev.restored:
            self.store.record_quarantine(ev.device, ev.uuid, ev.reason)
        if ev.none_left:
            self._begin_stop(ExitCode.NO_DEVICE, f"every GPU is quarantined (last GPU {ev.device})")

    def _reset_gpus(self) -> None:
        """``allow_gpu_reset``: reset quarantined GPUs none of our workers holds (see planner)."""
        for r in self.planner.reset_idle(self.pool.devices_in_use()):
            self.events.emit("gpu_reset", device=r.device, done=r.done, message=r.message)
            if r.back:
                self.store.lift_quarantine(r.device, r.uuid)
            elif r.none_left:
                self._begin_stop(ExitCode.NO_DEVICE, f"every GPU is quarantined ({r.message})")

    # ------------------------------------------------------------------ shutdown
    def _shutdown(self) -> None:
        if hasattr(self, "pool"):
            why = self.stop_message or "the supervisor stopped"
            cut = [
                (res, r.spec.user_attrs, r.device)
                for r, res in self.pool.shutdown(Imposed(FC.INTERRUPTED, why))
            ]
            note = Imposed(FC.INTERRUPTED, f"asked but never started: {why}")
            for asked in self.pending:
                cut.append((build_result(asked.number, imposed=note), asked.user_attrs, None))
            self.pending.clear()
            for result, lineage, device in cut:
                try:
                    self._finish(result, lineage, device, None)
                except Exception as exc:
                    log.error("[trial %d] could not be marked interrupted: %s", result.number, exc)
        if hasattr(self, "planner"):
            self.planner.close()


def run_study(
    cfg: StudyConfig, echo: Callable[[str], None] | None = None, progress: Any = None
) -> int:
    """Run the study described by ``cfg``; returns the exit code (see :class:`ExitCode`)."""
    return Supervisor(cfg, echo=echo, progress=progress).run()


__all__ = ["ExitCode", "StopRun", "Supervisor", "run_study"]
