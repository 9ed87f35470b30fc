"""Worker slots: start, retire, reap, enforce limits. The pool knows processes and trials'
deadlines, never what a failure means (that is :mod:`hpo.failures`).

A slot is one place a trial can run, pinned to a device (or the CPU). Its state machine::

    EMPTY --start()--> BOOTING --READY--> IDLE --assign()--> RUNNING --release()--> IDLE
      ^                   |                 |                   |
      +----- exited() / retire() -----------+-------------------+

``retire`` asks the worker to exit between trials (a planned recycle: ``recycle_every``, after a
failure that may have left state behind, a quarantined device); the retiring process is kept in
:attr:`WorkerPool.retiring` until it is reaped. One that has not exited ``RETIRE_GRACE_S`` later
(stuck in ``torch.cuda.synchronize()`` after a sticky error, say) has its tree killed: it would
otherwise hold its GPU's memory, and block that GPU's reset, for ever. A slot whose workers die while booting
``BOOT_FAILURES_PER_MINUTE`` times in a minute raises :class:`BootLoop` (gunicorn's
``WORKER_BOOT_ERROR``: a worker that cannot start must not restart forever).
"""

from __future__ import annotations

import enum
import importlib.util
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from multiprocessing.context import BaseContext
from typing import Any

from hpo import allocator
from hpo.child import worker_main
from hpo.errors import ExitCode, StopRun
from hpo.failures import FailureClass, Imposed, TrialResult, build_result
from hpo.objective import may_use_torch
from hpo.paths import RunPaths, log_tail
from hpo.process import WorkerProcess, make_context, recv_all, sweep_orphans, terminate_all
from hpo.protocol import Msg, TrialSpec, WorkerBoot

log = logging.getLogger(__name__)
BOOT_FAILURES_PER_MINUTE = 5
MEM_CHECK_EVERY_S = 0.25
RETIRE_GRACE_S = 30.0  # a retiring worker's cleanup (synchronize, empty_cache) takes < 1 s


class SlotState(str, enum.Enum):
    """Where a slot is in its life (see the module docstring for the transitions)."""

    EMPTY = "empty"
    BOOTING = "booting"
    IDLE = "idle"
    RUNNING = "running"

    def __str__(self) -> str:
        return self.value


class BootLoop(StopRun):
    """A slot's workers keep dying before they are ready: the run stops (exit 1)."""

    def __init__(self, message: str) -> None:
        super().__init__(ExitCode.ERROR, message)


@dataclass
class Running:
    """A trial on a slot: what the worker was sent, and the limits the pool enforces."""

    spec: TrialSpec
    attempt: int
    started: float
    device: int | None
    deadline: float | None = None
    mem_limit_mb: float | None = None
    imposed: Imposed | None = None  # set when the pool (or a stop) killed the trial
    origin: Any = None  # what the trial was started from (the supervisor's Asked: placed again)

    @property
    def number(self) -> int:
        return self.spec.number


@dataclass
class Slot:
    """One place a trial can run, and the worker currently behind it."""

    index: int
    device: int | None
    state: SlotState = SlotState.EMPTY
    worker: WorkerProcess | None = None
    running: Running | None = None
    trials_done: int = 0
    generation: int = 0
    boot_failures: list[float] = field(default_factory=list)
    expandable: bool = True  # the worker runs with expandable segments (see hpo.allocator)


def worker_env(
    cfg: Any,
    device_env: Mapping[str, str],
    on_cpu: bool,
    n_slots: int,
    run_dir: str,
    expandable: bool = True,
) -> dict[str, str]:
    """The environment of a worker: the one place allocator, thread and CUDA settings are made.

    The allocator config is :func:`hpo.allocator.env` of the user's (both variable names);
    ``expandable=False`` after the WSL2 fallback (see :mod:`hpo.allocator`).
    """
    env = dict(cfg.env)
    env.update(allocator.env(allocator.user_value(env, os.environ), expandable))
    if on_cpu:
        env.setdefault("OMP_NUM_THREADS", str(cpu_threads(n_slots)))
        env.setdefault("MKL_NUM_THREADS", str(cpu_threads(n_slots)))
        # joblib's n_jobs=-1 (scikit-learn's too) means loky's cpu_count(), which reads this:
        # each slot's pools get its share of the cores, not all of them per slot.
        env.setdefault("LOKY_MAX_CPU_COUNT", str(cpu_threads(n_slots)))
    env.update(device_env)
    if cfg.cuda.launch_blocking:
        env["CUDA_LAUNCH_BLOCKING"] = "1"
    if cfg.cuda.amp != "none":
        env["HPO_AMP"] = cfg.cuda.amp
    if cfg.cuda.deterministic:
        env.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    env["HPO_RUN_DIR"] = run_dir
    env.setdefault("TOKENIZERS_PARALLELISM", "false")  # tokenizers' threads and fork do not mix
    return env


def cpu_threads(n_slots: int) -> int:
    """Threads per CPU worker, so that the slots together use every core once."""
    return max(1, (os.cpu_count() or 1) // max(1, n_slots))


def helper_limit(cfg: Any) -> int:
    """How many helper processes (library pools) a worker may keep between trials:
    ``max_helper_processes``, by default two pools' worth of CPUs plus a few servers."""
    if cfg.max_helper_processes is not None:
        return int(cfg.max_helper_processes)
    return 2 * (os.cpu_count() or 1) + 8


def boot_record(
    cfg: Any, slot: Slot, n_slots: int, device_env: Mapping[str, str], paths: RunPaths
) -> WorkerBoot:
    """What a new worker of ``slot`` is told: objective, environment, log file, torch settings."""
    on_cpu = slot.device is None
    env = worker_env(cfg, device_env, on_cpu, n_slots, str(paths.root), slot.expandable)
    return WorkerBoot(
        slot=slot.index,
        objective=cfg.objective,
        objective_kwargs=dict(cfg.objective_kwargs),
        env=env,
        log_path=str(paths.worker_log(slot.index, slot.generation)),
        storage_url=cfg.storage_url,
        study_name=cfg.study,
        threads=cpu_threads(n_slots) if on_cpu else None,
        cudnn_benchmark=cfg.cuda.cudnn_benchmark,
        deterministic=cfg.cuda.deterministic,
        max_helpers=helper_limit(cfg),
        max_host_mem_mb=cfg.max_host_mem_mb,
        rss_growth_mb=cfg.recycle_rss_growth_mb,
        gpu_growth_mb=cfg.recycle_gpu_growth_mb,
    )


def default_preload(objective: str) -> list[str]:
    """``["torch"]`` when torch is installed and the objective's module imports it (or a library
    built on it, or its source cannot be read), else nothing.

    torch in a worker is not free for objectives that do not use it: it registers a warning
    filter naming a torch class, scikit-learn sends the warning filters with each joblib task,
    and so every loky pool process imports torch too (a ``cross_val_score(n_jobs=-1)`` pool
    started 2.5x slower on 2 cores).
    """
    if importlib.util.find_spec("torch") is None:
        return []
    return ["torch"] if may_use_torch(objective) else []


def start_forkserver(cfg: Any, paths: RunPaths) -> BaseContext:
    """The workers' multiprocessing context; the forkserver starts now, so that its imports
    (torch, preloaded without touching CUDA) overlap the supervisor opening the study."""
    preload = cfg.preload
    if preload is None:
        preload = default_preload(cfg.objective)
    # HPO_RUN_DIR marks every process of the run (forkserver, workers, their children). The
    # allocator config must be in the server's environment before it imports torch: a CUDA
    # build parses it when the library loads (issue 14, point 7).
    env = {"HPO_RUN_DIR": str(paths.root)}
    env.update(allocator.env(allocator.user_value(dict(cfg.env), os.environ)))
    return make_context(cfg.start_method, preload, env)


class Mechanism:
    """How the pool starts, watches and kills real processes: the seam that the loop's tests
    replace with scripted fakes (``hpo.testing.fakes``), as elastic's agent tests do."""

    def __init__(self, ctx: BaseContext) -> None:
        self.ctx = ctx

    def spawn(self, slot: Slot, boot: WorkerBoot) -> WorkerProcess:
        return WorkerProcess(self.ctx, worker_main, (boot,), f"hpo-worker-{slot.index}")

    def wait(self, objects: list[Any], timeout: float) -> list[Any]:
        return list(wait(objects, timeout=timeout))

    def sweep(self, known: set[int]) -> None:
        sweep_orphans(known)

    def terminate(self, workers: list[WorkerProcess], grace_s: float) -> None:
        terminate_all(workers, grace_s)


class WorkerPool:
    """The slots and their worker processes. ``device_env(device)`` is the pinning environment
    of a worker; ``mechanism`` starts and watches processes; ``clock`` is monotonic seconds."""

    def __init__(
        self,
        mechanism: Mechanism,
        devices: list[int | None],
        cfg: Any,
        paths: RunPaths,
        device_env: Callable[[int | None], Mapping[str, str]],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.slots = [Slot(i, d) for i, d in enumerate(devices)]
        self.retiring: list[WorkerProcess] = []
        self._retired: dict[int, tuple[int | None, float]] = {}  # pid -> (device, kill deadline)
        self.no_expandable: set[int | None] = set()  # devices whose workers run without them
        self.mech = mechanism
        self._cfg = cfg
        self._paths = paths
        self._device_env = device_env
        self._recycle_every = cfg.recycle_every
        self._clock = clock
        self._mem_next = 0.0

    # -- life of a slot ------------------------------------------------------------------------
    def start(self, slot: Slot) -> None:
        slot.generation += 1
        slot.expandable = slot.device not in self.no_expandable
        env = self._device_env(slot.device)
        boot = boot_record(self._cfg, slot, len(self.slots), env, self._paths)
        slot.worker = self.mech.spawn(slot, boot)
        slot.state = SlotState.BOOTING
        slot.trials_done = 0

    def ready(self, slot: Slot) -> None:
        if slot.state is SlotState.BOOTING:
            slot.state = SlotState.IDLE

    def idle(self) -> list[Slot]:
        return [s for s in self.slots if s.state is SlotState.IDLE]

    def assign(
        self,
        slot: Slot,
        spec: TrialSpec,
        attempt: int,
        timeout_s: float | None,
        mem_limit_mb: float | None,
        origin: Any = None,
    ) -> Running:
        """Send ``spec`` to the slot's ready worker with its limits (a dead worker's sentinel
        reports the loss); the pool kills the trial past ``timeout_s`` or ``mem_limit_mb``."""
        assert slot.worker is not None and slot.state is SlotState.IDLE
        now = self._clock()
        deadline = now + timeout_s if timeout_s else None
        run = Running(spec, attempt, now, slot.device, deadline, mem_limit_mb, origin=origin)
        slot.worker.send((Msg.RUN, spec))
        slot.running = run
        slot.state = SlotState.RUNNING
        return run

    def release(self, slot: Slot) -> Running | None:
        """The slot's trial is over; the worker may run another."""
        run, slot.running = slot.running, None
        slot.trials_done += 1
        if slot.state is SlotState.RUNNING:
            slot.state = SlotState.IDLE
        return run

    def recycle_reason(self, slot: Slot) -> str | None:
        """Why the slot's worker should be replaced before its next trial, or None."""
        if slot.trials_done >= self._recycle_every:
            return f"recycle_every={self._recycle_every}"
        if slot.expandable and slot.device in self.no_expandable:
            return "restarting without expandable segments"
        return None

    def drop_expandable(self, device: int | None) -> bool:
        """From now on ``device``'s workers start without expandable segments (their current
        workers are replaced at their next :meth:`recycle_reason`). True the first time."""
        if device in self.no_expandable:
            return False
        self.no_expandable.add(device)
        log.warning("GPU %s: %s", device, allocator.WSL_FALLBACK)
        return True

    def retire(self, slot: Slot) -> WorkerProcess | None:
        """Ask the slot's worker to exit after its current message; the slot becomes EMPTY."""
        w = slot.worker
        if w is None:
            return None
        w.send((Msg.STOP, None))
        self.retiring.append(w)
        self._retired[w.pid] = (slot.device, self._clock() + RETIRE_GRACE_S)
        slot.worker, slot.state = None, SlotState.EMPTY
        return w

    def exited(self, slot: Slot) -> tuple[int | None, int | None, bool]:
        """The slot's worker ended: ``(exit_code, signal, was_ready)``; the slot becomes EMPTY.

        Raises :class:`BootLoop` when the slot's workers keep dying before they are ready.
        """
        w = slot.worker
        assert w is not None
        w.join(2.0)
        code, sig = w.exit_status()
        was_ready = slot.state in (SlotState.IDLE, SlotState.RUNNING)
        w.close()
        slot.worker, slot.state = None, SlotState.EMPTY
        if not was_ready and slot.running is None:
            now = self._clock()
            slot.boot_failures = [t for t in slot.boot_failures if now - t < 60] + [now]
            if len(slot.boot_failures) >= BOOT_FAILURES_PER_MINUTE:
                how = f"signal {sig}" if sig else f"exit code {code}"
                raise BootLoop(
                    f"workers of slot {slot.index} died {len(slot.boot_failures)} times in a "
                    f"minute while starting (last: {how}); see {self._paths.logs}"
                )
        self.mech.sweep(self.known_pids())
        return code, sig, was_ready

    def reap(self, w: WorkerProcess) -> None:
        w.join(1.0)
        w.close()
        self.retiring.remove(w)
        self._retired.pop(w.pid, None)
        self.mech.sweep(self.known_pids())

    def poll(self, timeout: float, wake_fd: int | None = None) -> list[tuple[str, Any, Any]]:
        """Wait up to ``timeout`` for workers; returns events in arrival order:
        ``("message", slot, (worker, msg))``, ``("exit", slot, worker)`` (after that worker's
        last messages) and ``("reaped", worker, None)`` for a retired worker that has gone.
        A message or exit of a worker the slot no longer has (retired meanwhile) is stale."""
        by_obj: dict[Any, tuple[str, Any]] = {}
        for slot in self.slots:
            if slot.worker is not None:
                by_obj[slot.worker.chan] = ("chan", slot)
                by_obj[slot.worker.sentinel] = ("exit", slot)
        for w in self.retiring:
            by_obj[w.sentinel] = ("retired", w)
        waitables = [*by_obj] + ([wake_fd] if wake_fd is not None else [])
        events: list[tuple[str, Any, Any]] = []
        exits = []
        for obj in self.mech.wait(waitables, timeout):
            kind, target = by_obj.get(obj, ("wake", None))
            if kind == "chan":
                w = target.worker
                try:
                    while w is not None and w.chan.poll():
                        events.append(("message", target, (w, w.chan.recv())))
                except (EOFError, OSError):
                    pass  # the exit sentinel follows
            elif kind == "exit":
                exits.append(target)
            elif kind == "retired":
                self.reap(target)
                events.append(("reaped", target, None))
        for slot in exits:
            # A result may still be in the pipe (billiard's lesson): read it before the exit.
            events.extend(("message", slot, (slot.worker, m)) for m in recv_all(slot.worker.chan))
            events.append(("exit", slot, slot.worker))
        return events

    def known_pids(self) -> set[int]:
        pids = {s.worker.pid for s in self.slots if s.worker is not None}
        pids.update(w.pid for w in self.retiring)
        return pids

    def running(self) -> list[Slot]:
        return [s for s in self.slots if s.running is not None]

    def devices_in_use(self) -> set[int | None]:
        """Devices on which a worker of ours is alive (retiring ones included)."""
        return {s.device for s in self.slots if s.worker is not None} | {
            device for device, _ in self._retired.values()
        }

    # -- limits ---------------------------------------------------------------------------------
    def next_deadline(self) -> float | None:
        times = [s.running.deadline for s in self.running() if s.running and s.running.deadline]
        times += [deadline for _, deadline in self._retired.values()]
        if any(s.running and s.running.mem_limit_mb for s in self.slots):
            times.append(self._mem_next)
        return min(times) if times else None

    def enforce_limits(self) -> list[Slot]:
        """Kill trials past their deadline or host-memory limit, and retiring workers past
        theirs; returns the slots killed."""
        now = self._clock()
        for gone in self.retiring:
            device, deadline = self._retired.get(gone.pid, (None, now))
            if now >= deadline:
                log.warning(
                    "[worker %d] still alive %.0fs after it was asked to stop: killing it",
                    gone.pid,
                    RETIRE_GRACE_S,
                )
                self._retired[gone.pid] = (device, float("inf"))  # killed once; reaped by poll
                gone.kill()
        check_mem = now >= self._mem_next
        if check_mem:
            self._mem_next = now + MEM_CHECK_EVERY_S
        killed = []
        for s in self.running():
            run, w = s.running, s.worker
            if run is None or w is None or run.imposed is not None:
                continue
            if run.deadline is not None and now >= run.deadline:
                limit = run.deadline - run.started
                run.imposed = Imposed(
                    FailureClass.TIMEOUT,
                    f"trial exceeded its wall-clock limit of {limit:.1f}s and was killed",
                )
                log.warning(
                    "[trial %d] timeout after %.1fs: killing worker %d",
                    run.number,
                    now - run.started,
                    w.pid,
                )
            elif check_mem and run.mem_limit_mb is not None:
                rss = w.tree_rss_mb()
                if rss <= run.mem_limit_mb:
                    continue
                run.imposed = Imposed(
                    FailureClass.HOST_OOM,
                    f"trial's processes used {rss:.0f} MB of host memory, over the limit of "
                    f"{run.mem_limit_mb:.0f} MB, and were killed",
                )
                log.warning(
                    "[trial %d] host memory %.0f MB over limit: killing worker %d",
                    run.number,
                    rss,
                    w.pid,
                )
            else:
                continue
            w.kill()
            killed.append(s)
        return killed

    def lost(self, run: Running, code: int | None, sig: int | None, pid: int) -> TrialResult:
        """The result of ``run`` whose worker ended without reporting one."""
        return build_result(
            run.number,
            imposed=run.imposed,
            exit_code=code,
            signal=sig,
            log_tail=log_tail(run.spec.log_path),
            worker_pid=pid,
            duration_s=self._clock() - run.started,
            fault=run.spec.fault,
            log_path=run.spec.log_path,
        )

    def kill_running(self, imposed: Imposed) -> None:
        """Kill every running trial (a stop whose grace period is over)."""
        for s in self.running():
            if s.running is not None and s.worker is not None:
                if s.running.imposed is None:
                    s.running.imposed = imposed
                s.worker.kill()

    def shutdown(self, imposed: Imposed) -> list[tuple[Running, TrialResult]]:
        """Stop every worker; running trials are killed and marked ``imposed``.

        Returns each trial that was still running, with its result.
        """
        workers = [s.worker for s in self.slots if s.worker is not None] + list(self.retiring)
        cut = []
        for s in self.slots:
            if s.running is not None and s.running.imposed is None:
                s.running.imposed = imposed
        for w in workers:
            w.send((Msg.STOP, None))
        self.mech.terminate(workers, 0.0 if self.running() else 2.0)
        for s in self.running():
            gone, run = s.worker, self.release(s)
            if run is not None and gone is not None:
                cut.append((run, self.lost(run, *gone.exit_status(), gone.pid)))
        for w in workers:
            w.close()
        self.mech.sweep(set())
        self.retiring.clear()
        self._retired.clear()
        return cut
