"""What this run did, for people and machines: per-class counts, the best value, and the event
(``events.jsonl``) and log line for each thing that happened to a trial or a worker. The
supervisor feeds it; the progress display and the end-of-run summary read it."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from hpo.events import EventLog
from hpo.failures import Decision, Source, TrialResult
from hpo.outcome import Status

if TYPE_CHECKING:
    from hpo.workers import Slot

log = logging.getLogger("hpo.supervisor")


class NullDisplay:
    """What the supervisor calls to show a run (``hpo.progress.Progress`` implements it): nothing,
    for runs nobody watches (tests, the API)."""

    def attach(self, sup: Any) -> None:
        """The run starts: ``sup.events`` and ``sup.stats`` exist."""

    def tick(self, sup: Any) -> None:
        """Called on every turn of the loop (at least once a second)."""

    def finish(self, sup: Any, code: int) -> None:
        """The run ended with exit code ``code``."""


class RunStats:
    """Counts and best value of the trials this supervisor finished."""

    def __init__(self, events: EventLog, directions: list[str]) -> None:
        self.events = events
        self.counts: dict[str, int] = {}
        self.best: float | None = None
        self._maximize = directions == ["maximize"]
        self._single = len(directions) == 1

    def recovered(self, result: TrialResult, why: str) -> None:
        """A trial of a dead supervisor was finished (``why`` says how its death was found)."""
        how = "outcome file" if result.source is Source.RECORDED else why
        state = "FAIL" if result.status is Status.FAILED else result.status.name
        self.events.emit("trial_recovered", trial=result.number, state=state, how=how)

    def tally(self) -> str:
        """``complete 3, oom 2``: what this run's trials ended as."""
        return ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items())) or "no trial ran"

    def finished(self, number: int, result: TrialResult, decision: Decision, attempt: int) -> None:
        diag = result.diagnosis
        key = diag.failure_class.value if diag else result.status.value
        self.counts[key] = self.counts.get(key, 0) + 1
        state = decision.state.name
        if diag is None:
            if result.values and self._single:
                v = result.values[0]
                if self.best is None or (v > self.best if self._maximize else v < self.best):
                    self.best = v
            values = list(result.values) if result.values else None
            self.events.emit(
                "trial_finished",
                trial=number,
                state=state,
                values=values,
                duration_s=round(result.duration_s, 3),
            )
            log.info("[trial %d] %s %s (%.2fs)", number, state, values or "", result.duration_s)
            return
        action = decision.action.value if decision.action else ""
        self.events.emit(
            "trial_failed",
            trial=number,
            state=state,
            failure_class=key,
            action=action,
            retry=decision.retry,
            attempt=attempt,
            fault=result.fault,
        )
        note = f" ({decision.note})" if decision.note else ""
        log.info("[trial %d] %s: %s -> %s%s", number, state, key, action, note)

    def supervisor_started(self, study: str, storage: str, n_trials: int, n_slots: int) -> None:
        pid = os.getpid()
        self.events.emit(
            "supervisor_started",
            study=study,
            storage=storage,
            n_trials=n_trials,
            workers=n_slots,
            pid=pid,
        )
        log.info(
            "supervisor %d started: study %r, %d slot(s), target %d", pid, study, n_slots, n_trials
        )

    def trial_started(
        self, number: int, slot: Slot, pid: int, attempt: int, fault: str | None
    ) -> None:
        self.events.emit(
            "trial_started",
            trial=number,
            slot=slot.index,
            worker_pid=pid,
            device=slot.device,
            attempt=attempt,
            fault=fault,
        )

    def worker(self, event: str, slot: Slot, pid: int, **fields: Any) -> None:
        """``worker_started``, ``worker_recycled`` (logged, with its ``reason``), ``worker_lost``."""
        self.events.emit(event, slot=slot.index, pid=pid, device=slot.device, **fields)
        if event == "worker_recycled":
            log.info("[worker %d] recycled (%s)", pid, fields.get("reason"))
