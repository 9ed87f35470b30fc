"""Scripted workers for testing the supervisor's loop without processes.

:class:`FakeMechanism` replaces :class:`hpo.workers.Mechanism`: it "spawns" :class:`FakeWorker`
objects and answers the pool's ``wait`` from a discrete-event simulation on a
:class:`FakeClock`, so a test asserts exact restart, retry and recycle counts in milliseconds.
What each worker does is a script: ``boot(n)`` says how the n-th spawned worker starts, and
``trial(spec, worker)`` how it runs a trial (:class:`Done`, :class:`Die` or :class:`Hang`),
after how many seconds of fake time. Everything else (the pool, the policy, the storage) is
the real code.
"""

from __future__ import annotations

import itertools
import signal
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hpo.outcome import Outcome, Status
from hpo.protocol import Msg, TrialSpec, WorkerBoot, WorkerExit


class FakeClock:
    """Monotonic seconds that only move when the fake mechanism waits."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Done:
    """The trial ends with ``status`` (and ``values``, or an exception) after ``after_s``."""

    status: Status = Status.COMPLETE
    values: tuple[float, ...] | None = (1.0,)
    exception_type: str | None = None
    message: str = ""
    after_s: float = 0.1
    recycle: str | None = None  # after its DONE the worker says RETIRE and starts no more trials
    stuck: bool = False  # after its DONE the worker hangs (in synchronize, say): STOP goes unread


@dataclass(frozen=True)
class Die:
    """The worker exits with ``code`` or dies of ``sig`` after ``after_s``, without a result."""

    code: int | None = None
    sig: int | None = signal.SIGSEGV
    after_s: float = 0.1


@dataclass(frozen=True)
class Hang:
    """The trial never ends by itself (a timeout or a stop must kill it)."""


Reaction = Done | Die | Hang


class FakeChan:
    """A worker's end of the pipe, as the supervisor reads it."""

    def __init__(self) -> None:
        self.inbox: deque[Any] = deque()
        self.closed = False

    def poll(self) -> bool:
        return bool(self.inbox)

    def recv(self) -> Any:
        if not self.inbox:
            raise EOFError
        return self.inbox.popleft()


class _Proc:
    def __init__(self, name: str) -> None:
        self.name = name


@dataclass(eq=False)
class FakeWorker:
    """Stands in for :class:`hpo.process.WorkerProcess`."""

    pid: int
    boot: WorkerBoot
    mech: FakeMechanism
    chan: FakeChan = field(default_factory=FakeChan)
    sentinel: object = field(default_factory=object)
    sent: list[Any] = field(default_factory=list)
    killed: list[int] = field(default_factory=list)
    exit: tuple[int | None, int | None] | None = None
    rss_mb: float = 100.0
    retiring: bool = False  # said RETIRE: starts no trial, exits RECYCLE at STOP
    stuck: bool = False  # hangs between trials: reads no message, exits only when killed

    def __post_init__(self) -> None:
        self.proc = _Proc(f"hpo-worker-{self.boot.slot}")

    def send(self, message: Any) -> bool:
        if self.exit is not None:
            return False
        self.sent.append(message)
        kind, payload = message
        if self.stuck:
            return True
        if kind == Msg.STOP:
            code = WorkerExit.RECYCLE if self.retiring else WorkerExit.OK
            self.mech.at(0.0, self, lambda: self._exit(code, None))
        elif kind == Msg.RUN and not self.retiring:
            self.mech.run(self, payload)
        return True

    def kill(self, sig: int = signal.SIGKILL) -> None:
        self.killed.append(sig)
        self.mech.at(0.0, self, lambda: self._exit(None, sig))

    def _exit(self, code: int | None, sig: int | None) -> None:
        if self.exit is None:
            self.exit = (code, sig)
            self.mech.cancel(self)

    def join(self, timeout: float) -> bool:
        return self.exit is not None

    def exit_status(self) -> tuple[int | None, int | None]:
        return self.exit or (None, None)

    def alive(self) -> bool:
        return self.exit is None

    def descendants(self) -> list[Any]:
        return []

    def tree_rss_mb(self) -> float:
        return self.rss_mb

    def close(self) -> None:
        self.chan.closed = True


class FakeMechanism:
    """Scripted processes on a fake clock (see the module docstring)."""

    def __init__(
        self,
        clock: FakeClock,
        trial: Callable[[TrialSpec, FakeWorker], Reaction],
        boot: Callable[[int], Die | None] = lambda n: None,
        boot_s: float = 0.05,
        on_wait: Callable[[FakeMechanism], bool] | None = None,
    ) -> None:
        self.clock = clock
        self.trial = trial
        self.boot = boot
        self.boot_s = boot_s
        self.on_wait = on_wait
        self.spawned: list[FakeWorker] = []
        self.runs: list[tuple[int, int]] = []  # (trial number, worker pid) in start order
        self._events: list[tuple[float, int, FakeWorker, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._pids = itertools.count(50000)

    # -- the Mechanism interface ---------------------------------------------------------------
    def spawn(self, slot: Any, boot: WorkerBoot) -> FakeWorker:
        w = FakeWorker(next(self._pids), boot, self)
        n = len(self.spawned)
        self.spawned.append(w)
        death = self.boot(n)
        if death is not None:
            self.at(death.after_s, w, lambda: w._exit(death.code, death.sig))
        else:
            ready = {"pid": w.pid, "boot_s": self.boot_s}
            self.at(self.boot_s, w, lambda: w.chan.inbox.append((Msg.READY, ready)))
        return w

    def wait(self, objects: list[Any], timeout: float) -> list[Any]:
        if self.on_wait is not None and self.on_wait(self):
            return []  # e.g. a signal was delivered: the loop wakes at once
        watched = set(map(id, objects))
        deadline = self.clock.now + timeout
        while True:
            ready: list[Any] = []
            for w in self.spawned:  # as multiprocessing.connection.wait: a message, or an exit
                if w.chan.inbox and id(w.chan) in watched:
                    ready.append(w.chan)
                if w.exit is not None and id(w.sentinel) in watched:
                    ready.append(w.sentinel)
            if ready:
                return ready
            due = [e for e in self._events if e[0] <= deadline]
            if not due:
                self.clock.now = max(self.clock.now, deadline)
                return []
            event = min(due)
            self._events.remove(event)
            self.clock.now = max(self.clock.now, event[0])
            event[3]()

    def sweep(self, known: set[int]) -> None:
        return None

    def terminate(self, workers: list[Any], grace_s: float) -> None:
        for w in workers:
            if w.exit is None:
                w._exit(None, signal.SIGTERM)

    # -- the simulation ------------------------------------------------------------------------
    def at(self, delay_s: float, worker: FakeWorker, action: Callable[[], None]) -> None:
        self._events.append((self.clock.now + delay_s, next(self._seq), worker, action))

    def cancel(self, worker: FakeWorker) -> None:
        self._events = [e for e in self._events if e[2] is not worker]

    def run(self, worker: FakeWorker, spec: TrialSpec) -> None:
        self.runs.append((spec.number, worker.pid))
        reaction = self.trial(spec, worker)
        if isinstance(reaction, Hang):
            return
        if isinstance(reaction, Die):
            self.at(reaction.after_s, worker, lambda: worker._exit(reaction.code, reaction.sig))
            return
        outcome = Outcome(
            trial_number=spec.number,
            status=reaction.status,
            values=list(reaction.values)
            if reaction.status is Status.COMPLETE and reaction.values
            else None,
            exception_type=reaction.exception_type,
            message=reaction.message,
            duration_s=reaction.after_s,
            worker_pid=worker.pid,
        )

        def report() -> None:
            worker.chan.inbox.append((Msg.DONE, outcome.to_dict()))
            worker.stuck = reaction.stuck
            if reaction.recycle:  # cleanup failed: RETIRE a moment later, after a RUN may come
                worker.retiring = True
                self.at(
                    0.05, worker, lambda: worker.chan.inbox.append((Msg.RETIRE, reaction.recycle))
                )

        self.at(reaction.after_s, worker, report)

    @property
    def stops(self) -> int:
        """STOP messages sent (planned recycles and shutdown)."""
        return sum(1 for w in self.spawned for m in w.sent if m[0] == Msg.STOP)
