"""The worker process: runs trials one after another for the supervisor.

Mechanism only: the worker does not know the study's policy. It imports the objective once,
then for each ``run`` message redirects its output to the trial's log, calls the objective with a
:class:`~hpo.proxy.ProxyTrial`, and reports an :class:`~hpo.outcome.Outcome`. Every ``suggest_*``,
``report``, ``should_prune`` and ``set_user_attr`` is a round trip to the supervisor, which owns
the study and its sampler: one writer, one seeded sampler, no study loaded per worker.

The worker leads its own process group (``os.setsid``) so that the supervisor can kill it with
every descendant at once, and it watches a lifeline pipe: when the supervisor vanishes (even by
SIGKILL) the pipe reaches EOF and the worker kills its whole group, so no orphan keeps a GPU busy.
"""

from __future__ import annotations

import gc
import math
import numbers
import os
import signal
import sys
import threading
import time
import traceback as tb
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from hpo import allocator
from hpo.events import log_unprinted_to
from hpo.growth import GrowthLimits, GrowthWatch
from hpo.outcome import Outcome, Status
from hpo.pools import end_pools, library_helpers, run_exit_handlers, track_targets
from hpo.process import kill_tree, tree_usage
from hpo.protocol import Msg, TrialSpec, WorkerBoot, WorkerExit, qualified_name
from hpo.proxy import ProxyTrial

TRACEBACK_TAIL = 8000


def validate_values(ret: Any, n_objectives: int) -> list[float]:
    """The objective's return value as floats, or ValueError with a message the taxonomy reads."""

    def one(v: Any) -> float:
        if v is None:
            raise ValueError(
                "The objective returned None; it must return a float (one per objective)"
            )
        if isinstance(v, str | bytes) or not (
            isinstance(v, numbers.Real) or hasattr(v, "__float__")
        ):
            raise ValueError(
                f"The objective returned a {type(v).__name__} ({v!r:.60}); it must return a float"
            )
        try:
            f = float(v)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"The objective returned {v!r:.60}, which is not a float: {exc}"
            ) from None
        if math.isnan(f) or math.isinf(f):
            raise ValueError(f"The objective returned {f}, which is not a finite number")
        return f

    if n_objectives == 1:
        if isinstance(ret, list | tuple) and len(ret) == 1:
            ret = ret[0]
        elif isinstance(ret, list | tuple):
            from hpo.errors import ConfigError

            # Every trial would fail the same way: a configuration error, which stops the run.
            raise ConfigError(
                f"the objective returned {len(ret)} values but the study has one direction: for "
                f"a multi-objective study set `directions: [minimize, maximize, ...]` (one per "
                f"value) in the study YAML"
            )
        return [one(ret)]
    if not isinstance(ret, list | tuple) or len(ret) != n_objectives:
        raise ValueError(
            f"The objective returned {ret!r:.60}; the study has {n_objectives} objectives, so it must "
            f"return a sequence of {n_objectives} floats"
        )
    return [one(v) for v in ret]


def format_traceback(exc: BaseException) -> str:
    text = "".join(tb.format_exception(type(exc), exc, exc.__traceback__))
    return text[-TRACEBACK_TAIL:]


# -- process hygiene ---------------------------------------------------------------------------
_REAPER_PID: int | None = None


def _kill_tree_and_group(root_pid: int) -> None:
    """SIGKILL every descendant of ``root_pid`` (those that left the group too), then the group."""
    kill_tree(root_pid, signal.SIGKILL, include_root=False)
    os.killpg(os.getpgid(0), signal.SIGKILL)


def _watch_lifeline(lifeline: Connection) -> None:
    try:
        lifeline.recv()
    except (EOFError, OSError):
        pass
    # The supervisor is gone: take the whole process group (DataLoader workers, grandchildren).
    try:
        _kill_tree_and_group(os.getpid())
    finally:
        os._exit(WorkerExit.LIFELINE)


def _start_reaper(lifeline: Connection) -> int | None:
    """Fork a tiny process that watches the lifeline too, for a worker stuck in C code that holds
    the GIL (the watcher thread could then never run). Same process group as the worker; it only
    blocks in ``read`` and, at EOF, kills the worker's descendants and the group, itself last."""
    fd = lifeline.fileno()
    worker = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid:
        return pid
    try:  # the reaper: keep nothing of the worker's open but the lifeline
        os.closerange(3, fd)
        os.closerange(fd + 1, 65536)
        while True:
            try:
                if not os.read(fd, 1):
                    break
            except InterruptedError:
                continue
        _kill_tree_and_group(worker)
    except BaseException:
        pass
    finally:
        try:
            os.killpg(os.getpgid(0), signal.SIGKILL)
        finally:
            os._exit(0)


def _redirect_output(path: str) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _kill_leftover_children(finished_normally: bool, boot: WorkerBoot) -> str | None:
    """Kill what the trial left behind (a forgotten subprocess, a stray fork); keep the pools
    its libraries own and reuse (:mod:`hpo.pools`) if the trial finished normally and they stay
    within bounds. Returns why this worker must be recycled, or None.

    Pools go, and the worker with them, after a failed trial (they may be what failed, and a
    library holding a dead pool fails its next call), past ``max_helpers`` processes (0: keep
    none) or past half of ``max_host_mem_mb`` at rest: only a new process starts without them.
    """
    spared = [_REAPER_PID] if _REAPER_PID else []
    helpers = library_helpers()
    reason = None
    if helpers and finished_normally and boot.max_helpers > 0:
        kill_tree(
            os.getpid(),
            include_root=False,
            exclude=[*spared, *helpers.servers],
            spare_trees=helpers.pools,
            grace_s=2.0,
            reap_children=True,
        )
        kept, rss = tree_usage(os.getpid(), exclude=spared)
        if kept > boot.max_helpers:
            reason = f"{kept} helper processes kept ({helpers.owners()}), over {boot.max_helpers}"
        elif boot.max_host_mem_mb and rss > boot.max_host_mem_mb / 2:
            reason = (
                f"the worker and its helpers ({helpers.owners()}) hold {rss:.0f} MB at rest, "
                f"over half of max_host_mem_mb={boot.max_host_mem_mb:.0f}"
            )
        if reason is None:
            return None
    elif helpers:
        why = "max_helper_processes=0" if finished_normally else "the trial failed"
        reason = f"{why}: its helper processes ({helpers.owners()}) go with the worker"
    if reason is not None:
        end_pools()
    kill_tree(os.getpid(), include_root=False, exclude=spared, grace_s=2.0, reap_children=True)
    return reason


def _kill_descendants() -> None:
    """At exit: the pools end their own way, every process below the worker but its reaper and
    the pools' resource trackers is killed, then the exit handlers the libraries registered
    run (bounded), as at a normal interpreter exit, which ``os._exit`` skips: joblib deletes its
    temporary folders and loky its semaphores. The trackers, left with nothing registered, end
    when the worker does (or the group kill takes them)."""
    end_pools()
    spared = [_REAPER_PID] if _REAPER_PID else []
    trackers = library_helpers().servers
    kill_tree(
        os.getpid(),
        include_root=False,
        exclude=[*spared, *trackers],
        grace_s=1.0,
        reap_children=True,
    )
    run_exit_handlers()


def _measure() -> Any:
    try:
        from hpo.devices import measure
    except Exception:
        return None
    return measure


def _clear_caches(measure: Any) -> None:
    if measure is not None:
        measure.clear_caches()
    else:
        gc.collect()


def _apply_torch_settings(boot: WorkerBoot) -> None:
    if "torch" not in sys.modules:
        return
    import torch

    if boot.threads:
        torch.set_num_threads(boot.threads)
    torch.backends.cudnn.benchmark = boot.cudnn_benchmark
    if boot.deterministic:
        torch.use_deterministic_algorithms(True)


# -- the worker ---------------------------------------------------------------------------------
def worker_main(chan: Connection, lifeline: Connection, boot: WorkerBoot) -> None:
    """Entry point of a worker process (multiprocessing target)."""
    try:
        os.setsid()
    except OSError:
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the supervisor's to handle
    global _REAPER_PID
    _REAPER_PID = _start_reaper(lifeline)
    threading.Thread(target=_watch_lifeline, args=(lifeline,), daemon=True, name="lifeline").start()
    os.environ.update(boot.env)
    # The forkserver's torch parsed the allocator config of its own environment; this worker's
    # may differ (no expandable segments after the WSL2 fallback): apply it before any trial.
    allocator.apply(boot.env.get("PYTORCH_ALLOC_CONF", ""))
    track_targets()  # so that the pools the objective's libraries start are recognised
    try:
        Path(boot.log_path).parent.mkdir(parents=True, exist_ok=True)
        _redirect_output(boot.log_path)
    except OSError:
        pass
    worker_log = os.dup(1)
    # Objectives that log (logging.getLogger(__name__).info) should see it in their trial log,
    # as they would in a terminal; each line once (hpo.events.log_unprinted_to).
    log_unprinted_to(sys.stderr)

    t0 = time.perf_counter()
    try:
        from hpo.objective import load_objective

        objective = load_objective(boot.objective, boot.objective_kwargs)
        _apply_torch_settings(boot)
    except BaseException as exc:
        chan.send((Msg.BOOT_ERROR, (qualified_name(type(exc)), str(exc), format_traceback(exc))))
        chan.close()
        os._exit(WorkerExit.BOOT_ERROR)
    measure = _measure()
    # Everything imported so far (torch, transformers, the objective's module) lives as long as
    # the worker: freeze it so the collections between trials scan only what trials created
    # (a full collection with torch loaded otherwise costs ~60-100 ms per trial).
    gc.collect()
    gc.freeze()
    growth = GrowthWatch(GrowthLimits(boot.rss_growth_mb, boot.gpu_growth_mb), measure)
    chan.send((Msg.READY, {"pid": os.getpid(), "boot_s": time.perf_counter() - t0}))

    while True:
        try:
            kind, payload = chan.recv()
        except (EOFError, OSError):
            os._exit(WorkerExit.LIFELINE)
        if kind == Msg.STOP:
            _kill_descendants()  # the pools it kept end with it
            chan.close()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(WorkerExit.OK)
        if kind != Msg.RUN:
            continue
        spec: TrialSpec = payload
        outcome = run_trial(chan, spec, objective, boot, measure)
        try:
            Outcome.write_atomic(outcome, Path(spec.outcome_path))
        except OSError:
            pass
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(worker_log, 1)
        os.dup2(worker_log, 2)
        chan.send((Msg.DONE, outcome.to_dict()))  # first: cleaning up is off the critical path
        normal = outcome.status in (Status.COMPLETE, Status.PRUNED)
        recycle = _kill_leftover_children(normal, boot)
        try:
            _clear_caches(measure)
        except Exception as exc:
            # A sticky CUDA error surfaces here: only a new process gets a new context.
            recycle = f"cleanup after trial {spec.number} failed: {exc!r:.200}"
        if recycle is None:
            recycle = growth.check()
        if recycle is not None:
            # Say so; a trial the supervisor handed over meanwhile is not started (it requeues it).
            chan.send((Msg.RETIRE, recycle))
            _await_stop(chan)


def _await_stop(chan: Connection) -> None:
    """Retiring: start no trial, wait for the supervisor's STOP (or its death), then exit."""
    try:
        while chan.recv()[0] != Msg.STOP:
            pass
    except (EOFError, OSError):
        pass
    _kill_descendants()
    os._exit(WorkerExit.RECYCLE)


def run_trial(
    chan: Connection,
    spec: TrialSpec,
    objective: Callable[[Any], Any],
    boot: WorkerBoot,
    measure: Any,
) -> Outcome:
    import optuna

    from hpo.chaos import FaultReturn

    log_note = ""
    try:
        _redirect_output(spec.log_path)
    except OSError as exc:
        log_note = f"log file unwritable ({exc}); output went to the worker log"
    if measure is not None:
        measure.reset_peak()
    trial = ProxyTrial(chan, spec, boot.study_name)
    outcome = Outcome(
        trial_number=spec.number, status=Status.FAILED, worker_pid=os.getpid(), fault=spec.fault
    )
    if log_note:
        outcome.extra["log_error"] = log_note
    if measure is not None:
        try:  # what earlier trials left alive: an OOM then may not be this trial's fault
            outcome.gpu_mem_at_start_mb = measure.reserved_gpu_mem_mb()
        except Exception:
            pass
    first_on_gpu = boot.env.get("HPO_DEVICE_INDEX", "") != "" and not _gpu_trials_run
    start = time.perf_counter()
    try:
        ret = _call(objective, trial, spec)
        outcome.values = validate_values(ret, spec.n_objectives)
        outcome.status = Status.COMPLETE
    except optuna.TrialPruned as exc:
        outcome.status = Status.PRUNED
        outcome.message = str(exc)
    except FaultReturn as exc:
        try:
            outcome.values = validate_values(exc.value, spec.n_objectives)
            outcome.status = Status.COMPLETE
        except ValueError as verr:
            _fill_failure(outcome, verr)
    except BaseException as exc:  # noqa: BLE001 - the trial may die in any way it likes
        _fill_failure(outcome, exc)
    outcome.duration_s = time.perf_counter() - start
    if first_on_gpu:
        _check_allocator(outcome)
    if measure is not None:
        try:
            outcome.peak_gpu_mem_mb = measure.peak_gpu_mem_mb()
            outcome.gpu_overhead_mb = measure.process_overhead_mb()
        except Exception:
            pass
    return outcome


_gpu_trials_run = 0


def _check_allocator(outcome: Outcome) -> None:
    """On a GPU worker's first trial: record the allocator in effect, and whether this is WSL,
    where expandable segments can fail the first allocation (pytorch#192330): the supervisor's
    policy judges that failure (:func:`hpo.failures.decide`), not the worker."""
    global _gpu_trials_run
    _gpu_trials_run += 1
    try:
        alloc = allocator.in_effect()
    except Exception:
        alloc = None
    if alloc is None:
        return
    alloc["wsl"] = allocator.is_wsl()
    outcome.extra["allocator"] = alloc


def _call(objective: Callable[[Any], Any], trial: ProxyTrial, spec: TrialSpec) -> Any:
    if spec.fault is None:
        return objective(trial)
    from hpo.chaos import call_with_fault

    return call_with_fault(objective, trial, spec.fault, spec.fault_delay_s)


def _fill_failure(outcome: Outcome, exc: BaseException) -> None:
    from hpo.failures.classify import exception_chain, exception_error_code

    outcome.status = Status.FAILED
    outcome.exception_type = qualified_name(type(exc))
    outcome.message = str(exc)[:4000]
    outcome.traceback = format_traceback(exc)
    try:  # what a wrapper (Ray, joblib, accelerate) hides: the causes and the CUDA error code
        outcome.chain = [(t, m[:2000]) for t, m in exception_chain(exc)]
        outcome.error_code = exception_error_code(exc)
    except Exception:
        pass
