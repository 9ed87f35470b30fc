"""The worker process: runs trials one after another for the supervisor.

Mechanism only: the worker does not know the study's policy. It imports the objective once,
then for each ``run`` message redirects its output to the trial's log, calls the objective with a
:class:`ProxyTrial`, and reports an :class:`~hpo.outcome.Outcome`. Every ``suggest_*``,
``report``, ``should_prune`` and ``set_user_attr`` is a round trip to the supervisor, which owns
the study and its sampler: one writer, one seeded sampler, no study loaded per worker.

The worker leads its own process group (``os.setsid``) so that the supervisor can kill it with
every descendant at once, and it watches a lifeline pipe: when the supervisor vanishes (even by
SIGKILL) the pipe reaches EOF and the worker kills its whole group, so no orphan keeps a GPU busy.
"""

from __future__ import annotations

import datetime
import gc
import math
import numbers
import os
import pickle
import signal
import sys
import threading
import time
import traceback as tb
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from hpo.outcome import EXIT_BOOT_ERROR, EXIT_LIFELINE, EXIT_OK, Outcome, Status

TRACEBACK_TAIL = 8000


@dataclass
class WorkerBoot:
    """What a worker needs to start; sent once at process start."""

    slot: int
    objective: str
    objective_kwargs: dict[str, Any]
    env: dict[str, str]
    log_path: str
    storage_url: str
    study_name: str
    threads: int | None = None
    cudnn_benchmark: bool = False
    deterministic: bool = False


@dataclass
class TrialSpec:
    """One trial to run; sent with each ``run`` message."""

    number: int
    trial_id: int
    n_objectives: int
    log_path: str
    outcome_path: str
    params: dict[str, Any] = field(default_factory=dict)
    user_attrs: dict[str, Any] = field(default_factory=dict)
    datetime_start: datetime.datetime | None = None
    fault: str | None = None
    fault_delay_s: float | None = None  # None: inject before the objective starts


class RemoteError(RuntimeError):
    """An exception raised in the supervisor that could not be sent back as itself."""


def _import_optuna_base() -> type:
    from optuna.trial import BaseTrial

    return BaseTrial


class ProxyTrial(_import_optuna_base()):  # type: ignore[misc]
    """An ``optuna.Trial`` look-alike whose calls are carried out by the supervisor.

    The objective sees the same API and behaviour as under ``study.optimize``: suggestions come
    from the study's sampler, ``report``/``should_prune`` reach the pruner, ``set_user_attr`` is
    written at once (so it survives a crash later in the trial), and ``optuna.TrialPruned`` works.
    """

    def __init__(
        self, chan: Connection, spec: TrialSpec, storage_url: str, study_name: str
    ) -> None:
        self._chan = chan
        self._number = spec.number
        self._trial_id = spec.trial_id
        self._params = dict(spec.params)
        self._user_attrs = dict(spec.user_attrs)
        self._datetime_start = spec.datetime_start
        self._storage_url = storage_url
        self._study_name = study_name
        self._study: Any = None

    # -- the round trip -----------------------------------------------------------------------
    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        self._chan.send(("call", (method, args, kwargs)))
        kind, payload = self._chan.recv()
        if kind != "reply":
            raise RemoteError(f"unexpected message {kind!r} from the supervisor")
        ok, value = payload
        if ok:
            return value
        raise _rebuild_exception(value)

    # -- suggestions --------------------------------------------------------------------------
    def suggest_float(
        self, name: str, low: float, high: float, *, step: float | None = None, log: bool = False
    ) -> float:
        v = self._call("suggest_float", name, low, high, step=step, log=log)
        self._params[name] = v
        return v

    def suggest_uniform(self, name: str, low: float, high: float) -> float:
        return self.suggest_float(name, low, high)

    def suggest_loguniform(self, name: str, low: float, high: float) -> float:
        return self.suggest_float(name, low, high, log=True)

    def suggest_discrete_uniform(self, name: str, low: float, high: float, q: float) -> float:
        return self.suggest_float(name, low, high, step=q)

    def suggest_int(
        self, name: str, low: int, high: int, *, step: int = 1, log: bool = False
    ) -> int:
        v = self._call("suggest_int", name, low, high, step=step, log=log)
        self._params[name] = v
        return v

    def suggest_categorical(self, name: str, choices: Sequence[Any]) -> Any:
        v = self._call("suggest_categorical", name, list(choices))
        self._params[name] = v
        return v

    # -- reporting ----------------------------------------------------------------------------
    def report(self, value: float, step: int) -> None:
        self._call("report", value, step)

    def should_prune(self) -> bool:
        return bool(self._call("should_prune"))

    def set_user_attr(self, key: str, value: Any) -> None:
        self._call("set_user_attr", key, value)
        self._user_attrs[key] = value

    def set_system_attr(self, key: str, value: Any) -> None:
        self._call("set_system_attr", key, value)

    def set_constraint(self, key: str, value: float) -> None:
        self._call("set_constraint", key, value)

    # -- read-only views ----------------------------------------------------------------------
    @property
    def number(self) -> int:
        return self._number

    @property
    def params(self) -> dict[str, Any]:
        return dict(self._params)

    @property
    def user_attrs(self) -> dict[str, Any]:
        return dict(self._user_attrs)

    @property
    def distributions(self) -> dict[str, Any]:
        return self._call("__get__", "distributions")

    @property
    def system_attrs(self) -> dict[str, Any]:
        return self._call("__get__", "system_attrs")

    @property
    def relative_params(self) -> dict[str, Any]:
        return self._call("__get__", "relative_params")

    @property
    def datetime_start(self) -> datetime.datetime | None:
        return self._datetime_start

    @property
    def constraints(self) -> dict[str, float]:
        return self._call("__get__", "constraints")

    @property
    def study(self) -> Any:
        """A read-only view of the study, loaded in this worker on first use (costly)."""
        if self._study is None:
            import optuna

            self._study = optuna.load_study(study_name=self._study_name, storage=self._storage_url)
        return self._study


def _rebuild_exception(value: Any) -> BaseException:
    blob, type_name, message = value
    if isinstance(blob, bytes):
        try:
            exc = pickle.loads(blob)
            if isinstance(exc, BaseException):
                return exc
        except Exception:
            pass
    return RemoteError(f"{type_name}: {message}")


def encode_exception(exc: BaseException) -> tuple[bytes | None, str, str]:
    """Encode an exception raised in the supervisor for the worker (pickled where possible)."""
    blob: bytes | None
    try:
        data = pickle.dumps(exc)
        pickle.loads(data)
        blob = data
    except Exception:
        blob = None
    return blob, qualified_name(type(exc)), str(exc)


def qualified_name(cls: type) -> str:
    module = cls.__module__
    if module in ("builtins", "__main__") or not module:
        return cls.__qualname__
    if module.startswith("torch") and hasattr(sys.modules.get("torch"), cls.__name__):
        return f"torch.{cls.__name__}"  # torch._C._OutOfMemoryError and friends: the public name
    return f"{module}.{cls.__qualname__}"


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
    me = os.getpid()
    try:
        import psutil

        victims = psutil.Process(root_pid).children(recursive=True)
    except Exception:
        victims = []
    for p in victims:
        if p.pid != me:
            try:
                p.kill()
            except Exception:
                pass
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
        os._exit(EXIT_LIFELINE)


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


def _kill_leftover_children() -> None:
    """Kill processes the trial left behind (a DataLoader worker, a forgotten subprocess)."""
    try:
        import psutil

        kids = psutil.Process().children(recursive=True)
    except Exception:
        return
    kids = [p for p in kids if p.pid != _REAPER_PID]
    for p in kids:
        try:
            p.kill()
        except Exception:
            pass
    if kids:
        psutil.wait_procs(kids, timeout=2)


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
    try:
        Path(boot.log_path).parent.mkdir(parents=True, exist_ok=True)
        _redirect_output(boot.log_path)
    except OSError:
        pass
    worker_log = os.dup(1)
    # Objectives that log (logging.getLogger(__name__).info) should see it in their trial log,
    # as they would in a terminal; only if the objective did not configure logging itself.
    import logging

    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO,
            stream=sys.stderr,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )

    t0 = time.perf_counter()
    try:
        from hpo.objective import load_objective

        objective = load_objective(boot.objective, boot.objective_kwargs)
        _apply_torch_settings(boot)
    except BaseException as exc:
        chan.send(("boot_error", (qualified_name(type(exc)), str(exc), format_traceback(exc))))
        chan.close()
        os._exit(EXIT_BOOT_ERROR)
    measure = _measure()
    # Everything imported so far (torch, transformers, the objective's module) lives as long as
    # the worker: freeze it so the collections between trials scan only what trials created
    # (a full collection with torch loaded otherwise costs ~60-100 ms per trial).
    gc.collect()
    gc.freeze()
    chan.send(("ready", {"pid": os.getpid(), "boot_s": time.perf_counter() - t0}))

    while True:
        try:
            kind, payload = chan.recv()
        except (EOFError, OSError):
            os._exit(EXIT_LIFELINE)
        if kind == "stop":
            chan.close()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(EXIT_OK)
        if kind != "run":
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
        chan.send(("done", outcome.to_dict()))
        _kill_leftover_children()
        try:
            _clear_caches(measure)
        except Exception:
            # A sticky CUDA error surfaces here: only a new process gets a new context.
            os._exit(EXIT_OK)


def run_trial(
    chan: Connection,
    spec: TrialSpec,
    objective: Callable[[Any], Any],
    boot: WorkerBoot,
    measure: Any,
) -> Outcome:
    import optuna

    log_note = ""
    try:
        _redirect_output(spec.log_path)
    except OSError as exc:
        log_note = f"log file unwritable ({exc}); output went to the worker log"
    if measure is not None:
        measure.reset_peak()
    trial = ProxyTrial(chan, spec, boot.storage_url, boot.study_name)
    outcome = Outcome(
        trial_number=spec.number, status=Status.FAILED, worker_pid=os.getpid(), fault=spec.fault
    )
    if log_note:
        outcome.extra["log_error"] = log_note
    start = time.perf_counter()
    try:
        ret = _call(objective, trial, spec)
        outcome.values = validate_values(ret, spec.n_objectives)
        outcome.status = Status.COMPLETE
    except optuna.TrialPruned as exc:
        outcome.status = Status.PRUNED
        outcome.message = str(exc)
    except _ChaosReturn as exc:
        try:
            outcome.values = validate_values(exc.value, spec.n_objectives)
            outcome.status = Status.COMPLETE
        except ValueError as verr:
            _fill_failure(outcome, verr)
    except BaseException as exc:  # noqa: BLE001 - the trial may die in any way it likes
        _fill_failure(outcome, exc)
    outcome.duration_s = time.perf_counter() - start
    if measure is not None:
        try:
            outcome.peak_gpu_mem_mb = measure.peak_gpu_mem_mb()
        except Exception:
            pass
    return outcome


def _call(objective: Callable[[Any], Any], trial: ProxyTrial, spec: TrialSpec) -> Any:
    """Call the objective; with a chaos fault, the fault always happens: before the objective,
    while it runs (a timer interrupts it), or at its end if it finished first."""
    if spec.fault is None:
        return objective(trial)
    from hpo.testing.faults import inject

    fault = spec.fault
    if spec.fault_delay_s is None:
        raise _ChaosReturn(inject(fault))
    fired = False

    def on_alarm(*_: Any) -> None:
        nonlocal fired
        fired = True
        raise _ChaosReturn(inject(fault))

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(spec.fault_delay_s, 0.001))
    try:
        objective(trial)
    except BaseException:
        if fired:
            raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    raise _ChaosReturn(inject(fault))


class _ChaosReturn(BaseException):
    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value


def _fill_failure(outcome: Outcome, exc: BaseException) -> None:
    outcome.status = Status.FAILED
    outcome.exception_type = qualified_name(type(exc))
    outcome.message = str(exc)[:4000]
    outcome.traceback = format_traceback(exc)
