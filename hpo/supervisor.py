"""The supervisor: keeps ``workers`` trials running in isolated processes and finishes each one.

One thread, one loop (as gunicorn's arbiter): signal handlers only set a flag and wake the loop;
the loop waits on every worker's channel and exit sentinel, serves the trials' calls (suggest,
report, should_prune, set_user_attr) on the real ``optuna.Trial``, records heartbeats, enforces
timeouts and memory limits, and refills the slots. Mechanism lives in ``hpo.process``, the
reading of failures in ``hpo.failures``, storage access in ``hpo.storage``; this module decides.

Stopping rule: the study holds ``n_trials`` trials in COMPLETE or PRUNED state (the semantics of
``optuna.study.MaxTrialsCallback``), counted in the storage so that a restarted or a second
supervisor counts what is already there.
"""

from __future__ import annotations

import enum
import logging
import os
import random
import signal
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import TrialState

from hpo import storage as st
from hpo.child import TrialSpec, WorkerBoot, encode_exception
from hpo.config import StudyConfig
from hpo.errors import ConfigError, HpoError, StorageError
from hpo.events import EventLog
from hpo.failures import Action, Diagnosis, FailureClass, Policy, classify, diagnosis_for
from hpo.outcome import EXIT_BOOT_ERROR, Outcome, Status
from hpo.process import (
    WorkerProcess,
    become_subreaper,
    make_context,
    recv_all,
    sweep_orphans,
    terminate_all,
)
from hpo.testing.faults import Fault

log = logging.getLogger("hpo.supervisor")

ALLOWED_CALLS = frozenset(
    {
        "suggest_float",
        "suggest_int",
        "suggest_categorical",
        "suggest_uniform",
        "suggest_loguniform",
        "suggest_discrete_uniform",
        "report",
        "should_prune",
        "set_user_attr",
        "set_system_attr",
        "set_constraint",
    }
)
READABLE = frozenset({"distributions", "system_attrs", "relative_params", "constraints"})
LOG_TAIL_BYTES = 8192
CHAOS_HANG_TIMEOUT_S = 5.0
CHAOS_MEM_HEADROOM_MB = 512
BOOT_FAILURES_PER_MINUTE = 5
CONFIG_ERRORS = frozenset({"hpo.errors.ConfigError", "hpo.errors.ObjectiveLoadError"})


class ExitCode(enum.IntEnum):
    """The supervisor's exit codes (documented in docs/cli.md)."""

    OK = 0  # the study holds n_trials COMPLETE+PRUNED trials
    ERROR = 1  # an unexpected internal error
    CONFIG = 2  # bad config, flags, objective, or run folder
    STORAGE = 3  # the storage cannot be used
    FAILURES = 4  # stopped by the circuit breaker (max_failed_trials / max_consecutive_failures / policy 'stop')
    NO_DEVICE = 5  # every device is quarantined
    INTERRUPTED = 130  # SIGINT or SIGTERM


@dataclass
class Running:
    trial: optuna.Trial | None  # None for a trial recovered on resume
    spec: TrialSpec
    attempt: int
    started: float
    device: int | None
    deadline: float | None = None
    mem_limit_mb: float | None = None
    kill_reason: FailureClass | None = None
    kill_note: str = ""


@dataclass
class Slot:
    index: int
    device: int | None
    worker: WorkerProcess | None = None
    ready: bool = False
    trials_done: int = 0
    running: Running | None = None
    generation: int = 0
    boot_failures: list[float] = field(default_factory=list)


class StopRun(Exception):
    def __init__(self, code: ExitCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def merge_alloc_conf(existing: str | None) -> str:
    """The user's allocator config with ``expandable_segments:True`` added (never clobbered)."""
    existing = (existing or "").strip().strip(",")
    if "expandable_segments" in existing or "cudaMallocAsync" in existing:
        return existing
    return f"{existing},expandable_segments:True" if existing else "expandable_segments:True"


class Supervisor:
    def __init__(
        self, cfg: StudyConfig, *, echo: Callable[[str], None] | None = None, progress: Any = None
    ) -> None:
        self.cfg = cfg
        self.progress = progress
        self.run_dir = cfg.run_path.resolve()
        self.policy = Policy(cfg.on_failure)
        self.echo = echo or (lambda s: None)
        self.slots: list[Slot] = []
        self.retiring: list[WorkerProcess] = []
        self.stopping: ExitCode | None = None
        self.stop_message = ""
        self.stop_deadline: float | None = None
        self.signals_seen = 0
        self.failures_this_run = 0
        self.consecutive_failures = 0
        self.last_failure: tuple[Diagnosis, str, str] | None = None
        self.counts: dict[str, int] = {}
        self.finished_here = 0
        self.best: float | None = None
        self.rng = random.Random(cfg.chaos_seed)
        self.started_at = time.time()
        self._hb_next = 0.0
        self._mem_next = 0.0
        self._pending_signal: int | None = None
        self.study: optuna.Study
        self.events: EventLog
        self.n_objectives = len(cfg.study_directions)
        self.preflight_facts: dict[str, Any] = {}
        self._asked = 0
        self._reseeded = False
        self.recovered = 0
        self._n_seen = 0
        self.done_at_start = 0
        self._orphans_next = time.monotonic() + cfg.heartbeat_grace
        self.pending: optuna.Trial | None = None  # asked, waiting for a slot (GPU packing)
        self.devices: Any = None  # hpo.gpu.Devices when GPUs are in use

    # ------------------------------------------------------------------ set-up
    def _prepare_run_dir(self) -> None:
        try:
            for sub in ("logs", "outcomes"):
                (self.run_dir / sub).mkdir(parents=True, exist_ok=True)
            probe = self.run_dir / ".write-test"
            probe.write_text("ok")
            probe.unlink()
        except OSError as exc:
            raise ConfigError(
                f"run folder {str(self.run_dir)!r} cannot be written: {exc.strerror or exc}"
            ) from None

    def _setup_logging(self) -> None:
        handler = logging.FileHandler(self.run_dir / "supervisor.log", encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger("hpo")
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        self._log_handler = handler

    def _make_sampler(self) -> optuna.samplers.BaseSampler:
        s = self.cfg.sampler
        kw = dict(s.kwargs)
        if s.seed is not None:
            kw.setdefault("seed", s.seed)
        table: dict[str, Callable[..., optuna.samplers.BaseSampler]] = {
            "tpe": optuna.samplers.TPESampler,
            "random": optuna.samplers.RandomSampler,
            "cmaes": optuna.samplers.CmaEsSampler,
            "nsga2": optuna.samplers.NSGAIISampler,
            "qmc": optuna.samplers.QMCSampler,
            "gp": optuna.samplers.GPSampler,
            "bruteforce": optuna.samplers.BruteForceSampler,
        }
        try:
            if s.name == "grid":
                return optuna.samplers.GridSampler(**kw)
            return table[s.name](**kw)
        except TypeError as exc:
            raise ConfigError(f"sampler.kwargs: {exc}") from None

    def _make_pruner(self) -> optuna.pruners.BasePruner:
        p = self.cfg.pruner
        table: dict[str, Callable[..., optuna.pruners.BasePruner]] = {
            "median": optuna.pruners.MedianPruner,
            "nop": optuna.pruners.NopPruner,
            "none": optuna.pruners.NopPruner,
            "hyperband": optuna.pruners.HyperbandPruner,
            "successive_halving": optuna.pruners.SuccessiveHalvingPruner,
            "percentile": optuna.pruners.PercentilePruner,
            "threshold": optuna.pruners.ThresholdPruner,
            "patient": lambda **kw: optuna.pruners.PatientPruner(
                optuna.pruners.MedianPruner(), **kw
            ),
            "wilcoxon": optuna.pruners.WilcoxonPruner,
        }
        try:
            return table[p.name](**p.kwargs)
        except TypeError as exc:
            raise ConfigError(f"pruner.kwargs: {exc}") from None

    def _open_study(self) -> None:
        storage = st.open_storage(
            self.cfg.storage_url,
            heartbeat_interval=self.cfg.heartbeat_interval,
            grace_period=self.cfg.heartbeat_grace,
        )
        self.study = st.create_or_load_study(
            storage,
            self.cfg.study,
            self.cfg.study_directions,
            self._make_sampler(),
            self._make_pruner(),
        )

    def _run_preflight(self) -> None:
        if not self.cfg.preflight:
            return
        from hpo.objective import load_callable

        fn = load_callable(self.cfg.preflight, what="preflight")
        try:
            facts = fn(**self.cfg.objective_kwargs) or {}
        except HpoError:
            raise
        except Exception as exc:
            raise ConfigError(
                f"preflight {self.cfg.preflight}: {type(exc).__name__}: {exc}"
            ) from None
        self.preflight_facts = dict(facts)

    def _slots_and_devices(self) -> list[int | None]:
        """One entry per slot: the device index the slot is pinned to, or None (CPU)."""
        from hpo.gpu import plan_slots

        return plan_slots(self)

    # ------------------------------------------------------------------ the run
    def run(self) -> int:
        self._prepare_run_dir()
        self._setup_logging()
        self._start_process_machinery()
        self.events = EventLog(self.run_dir / "events.jsonl")
        if self.progress is not None:
            self.progress.attach(self)
        try:
            from hpo.objective import check_ref

            check_ref(self.cfg.objective)
            from hpo.gpu import check_gpu_requirement

            check_gpu_requirement(self.cfg, self.run_dir)
            self._run_preflight()  # before the study exists: bad data or models create nothing
            self._open_study()
            for k, v in self.preflight_facts.items():
                self.study.set_user_attr(k, v)
            from hpo.resume import reconcile

            self.recovered = reconcile(self)
            if self.recovered:
                self.echo(
                    f"resumed: recovered {self.recovered} trial(s) left running by a dead supervisor"
                )
            code = self._loop()
        except StopRun as stop:
            code = stop.code
            self.stop_message = stop.message
        except HpoError as exc:
            code = ExitCode(exc.exit_code) if exc.exit_code in (2, 3) else ExitCode.ERROR
            self.stop_message = str(exc)
        finally:
            self._shutdown()
        self.events.emit("supervisor_stopped", exit_code=int(code), message=self.stop_message)
        self.events.close()
        if self.progress is not None:
            self.progress.finish(self, int(code))
        logging.getLogger("hpo").removeHandler(self._log_handler)
        self._log_handler.close()
        return int(code)

    def _install_signals(self) -> tuple[int, Any, Any]:
        r, w = os.pipe()
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        old_wakeup = signal.set_wakeup_fd(w)

        def handler(signum: int, _frame: Any) -> None:
            self._pending_signal = signum
            self.signals_seen += 1

        old = (signal.signal(signal.SIGINT, handler), signal.signal(signal.SIGTERM, handler))
        self._wakeup = (r, w, old_wakeup)
        return r, old, old_wakeup

    def _restore_signals(self, old: Any) -> None:
        signal.signal(signal.SIGINT, old[0])
        signal.signal(signal.SIGTERM, old[1])
        r, w, old_wakeup = self._wakeup
        signal.set_wakeup_fd(old_wakeup)
        os.close(r)
        os.close(w)

    def _start_process_machinery(self) -> None:
        """Start the forkserver first, so its imports (torch) overlap opening the study."""
        become_subreaper()
        preload = self.cfg.preload
        if preload is None:
            import importlib.util

            preload = ["torch"] if importlib.util.find_spec("torch") is not None else []
        # HPO_RUN_DIR marks every process of the run (forkserver, workers, their children).
        self.ctx = make_context(self.cfg.start_method, preload, {"HPO_RUN_DIR": str(self.run_dir)})

    def _loop(self) -> ExitCode:
        devices = self._slots_and_devices()
        self.slots = [Slot(i, d) for i, d in enumerate(devices)]
        self.done_at_start = self._n_done()
        wake_r, old, _ = self._install_signals()
        self.events.emit(
            "supervisor_started",
            study=self.cfg.study,
            storage=st.redact(self.cfg.storage_url),
            n_trials=self.cfg.n_trials,
            workers=len(self.slots),
            pid=os.getpid(),
        )
        log.info(
            "supervisor %d started: study %r, %d slot(s), target %d",
            os.getpid(),
            self.cfg.study,
            len(self.slots),
            self.cfg.n_trials,
        )
        try:
            while True:
                self._handle_signal()
                if self.stopping is None:
                    self._fill_slots()
                if self._finished():
                    break
                self._wait_and_dispatch(wake_r)
                self._timers()
        finally:
            self._restore_signals(old)
        return self.stopping or ExitCode.OK

    # ------------------------------------------------------------------ signals and stopping
    def _handle_signal(self) -> None:
        if self._pending_signal is None:
            return
        signum = self._pending_signal
        self._pending_signal = None
        if self.signals_seen >= 2:
            log.warning("second signal: stopping now")
            self.echo("second signal: killing running trials now")
            self.stop_deadline = time.monotonic()
        else:
            name = signal.Signals(signum).name
            self.echo(
                f"{name}: no new trials; running trials have {self.cfg.stop_grace_s:.0f}s to finish (again to stop now)"
            )
            log.warning(
                "%s received: stopping with a %.0fs grace period", name, self.cfg.stop_grace_s
            )
        self._begin_stop(
            ExitCode.INTERRUPTED,
            f"interrupted by {signal.Signals(signum).name}",
            grace=self.cfg.stop_grace_s,
        )

    def request_stop(self, code: ExitCode, message: str) -> None:
        """Stop the run (no new trials; running ones get the stop grace period)."""
        log.error("%s", message)
        self._begin_stop(code, message, grace=self.cfg.stop_grace_s)

    def _begin_stop(self, code: ExitCode, message: str, grace: float) -> None:
        if self.stopping is None:  # the first reason to stop is the one reported
            self.stopping = code
            self.stop_message = message
        deadline = time.monotonic() + grace
        if self.stop_deadline is None or deadline < self.stop_deadline:
            self.stop_deadline = deadline

    def _finished(self) -> bool:
        running = any(s.running for s in self.slots)
        if self.stopping is not None:
            if not running:
                return True
            if self.stop_deadline is not None and time.monotonic() >= self.stop_deadline:
                for s in self.slots:
                    if s.running and s.worker is not None:
                        s.running.kill_reason = FailureClass.INTERRUPTED
                        s.running.kill_note = self.stop_message
                        s.worker.kill()
            return False
        if running:
            return False
        return self._n_done() >= self.cfg.n_trials

    def _n_done(self) -> int:
        return st.count(self.study, (TrialState.COMPLETE, TrialState.PRUNED))

    # ------------------------------------------------------------------ workers
    def _boot(self, slot: Slot) -> WorkerBoot:
        cfg = self.cfg
        env = dict(cfg.env)
        alloc = merge_alloc_conf(
            env.get("PYTORCH_CUDA_ALLOC_CONF")
            or os.environ.get("PYTORCH_CUDA_ALLOC_CONF")
            or env.get("PYTORCH_ALLOC_CONF")
            or os.environ.get("PYTORCH_ALLOC_CONF")
        )
        env["PYTORCH_CUDA_ALLOC_CONF"] = alloc
        env["PYTORCH_ALLOC_CONF"] = alloc
        threads: int | None = None
        if slot.device is None:
            threads = max(1, (os.cpu_count() or 1) // max(1, len(self.slots)))
            env.setdefault("OMP_NUM_THREADS", str(threads))
            env.setdefault("MKL_NUM_THREADS", str(threads))
        from hpo.gpu import device_env

        env.update(device_env(self, slot))
        if cfg.cuda.launch_blocking:
            env["CUDA_LAUNCH_BLOCKING"] = "1"
        if cfg.cuda.amp != "none":
            env["HPO_AMP"] = cfg.cuda.amp
        if cfg.cuda.deterministic:
            env.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        env["HPO_RUN_DIR"] = str(self.run_dir)
        env.setdefault("TOKENIZERS_PARALLELISM", "false")  # tokenizers' threads and fork do not mix
        slot.generation += 1
        return WorkerBoot(
            slot=slot.index,
            objective=cfg.objective,
            objective_kwargs=dict(cfg.objective_kwargs),
            env=env,
            log_path=str(self.run_dir / "logs" / f"worker-{slot.index}-{slot.generation}.log"),
            storage_url=cfg.storage_url,
            study_name=cfg.study,
            threads=threads,
            cudnn_benchmark=cfg.cuda.cudnn_benchmark,
            deterministic=cfg.cuda.deterministic,
        )

    def _start_worker(self, slot: Slot) -> None:
        slot.worker = WorkerProcess(self.ctx, self._boot(slot))
        slot.ready = False
        slot.trials_done = 0

    def _retire(self, slot: Slot, reason: str) -> None:
        """Replace the slot's worker: the old one exits (planned) and a new one starts."""
        w = slot.worker
        if w is None:
            return
        w.stop()
        self.retiring.append(w)
        slot.worker = None
        slot.ready = False
        self.events.emit(
            "worker_recycled", slot=slot.index, pid=w.pid, reason=reason, device=slot.device
        )
        log.info("[worker %d] recycled (%s)", w.pid, reason)

    def _fill_slots(self) -> None:
        from hpo.gpu import place, slot_usable

        for slot in self.slots:
            if not slot_usable(self, slot):
                if slot.worker is not None and slot.running is None:
                    self._retire(slot, "device quarantined")
                continue
            if slot.worker is None:
                self._start_worker(slot)
        idle = [
            s
            for s in self.slots
            if s.worker is not None and s.ready and s.running is None and slot_usable(self, s)
        ]
        while idle and self.stopping is None:
            if self.pending is None:
                if not self._budget_left():
                    return
                self.pending = self._ask()
            target = place(self, dict(self.pending.params) or None, idle)
            if target is None:
                return  # the trial waits until a running one frees memory
            trial, self.pending = self.pending, None
            self._dispatch(target, trial)
            idle.remove(target)

    # ------------------------------------------------------------------ dispatch
    def _budget_left(self) -> bool:
        """Whether another trial may start: COMPLETE+PRUNED+RUNNING (anyone's) < n_trials."""
        all_trials = st.trials(self.study)
        self._n_seen = len(all_trials)
        busy = sum(
            t.state in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING)
            for t in all_trials
        )
        return busy < self.cfg.n_trials

    def _dispatch(self, slot: Slot, trial: optuna.Trial) -> None:
        """Start ``trial`` on the slot's ready worker."""
        from hpo.gpu import on_trial_started

        number = trial.number
        user_attrs = dict(trial.user_attrs)
        attempt = int(user_attrs.get("attempt", 1))
        fault, delay = self._chaos_pick()
        spec = TrialSpec(
            number=number,
            trial_id=trial._trial_id,
            n_objectives=self.n_objectives,
            log_path=str(self.run_dir / "logs" / f"trial-{number:06d}.log"),
            outcome_path=str(self.run_dir / "outcomes" / f"trial-{number:06d}.json"),
            params=dict(trial.params),
            user_attrs=user_attrs,
            datetime_start=trial.datetime_start,
            fault=fault,
            fault_delay_s=delay,
        )
        assert slot.worker is not None
        self._claim(trial, slot.worker.pid, slot.device)
        now = time.monotonic()
        run = Running(trial=trial, spec=spec, attempt=attempt, started=now, device=slot.device)
        timeout = self.cfg.timeout_per_trial
        if fault == Fault.HANG.value and timeout is None:
            timeout = CHAOS_HANG_TIMEOUT_S
        run.deadline = now + timeout if timeout else None
        run.mem_limit_mb = self.cfg.max_host_mem_mb
        if fault == Fault.HOST_OOM.value and run.mem_limit_mb is None:
            run.mem_limit_mb = slot.worker.tree_rss_mb() + CHAOS_MEM_HEADROOM_MB
        try:
            slot.worker.chan.send(("run", spec))
        except (OSError, ValueError):
            pass  # the worker died: its sentinel tells us and the trial is recorded as lost
        slot.running = run
        on_trial_started(self, slot, run)
        self.events.emit(
            "trial_started",
            trial=number,
            slot=slot.index,
            worker_pid=slot.worker.pid,
            device=slot.device,
            attempt=attempt,
            fault=fault,
        )

    def _claim(self, trial: optuna.Trial, worker_pid: int | None, device: int | None) -> None:
        """Record this supervisor as the trial's owner (read on resume: see hpo.resume)."""
        owner = {
            "host": st.HOST,
            "pid": os.getpid(),
            "ctime": _my_ctime(),
            "run_dir": str(self.run_dir),
            "worker_pid": worker_pid,
            "device": device,
        }
        st.set_system_attr(self.study._storage, trial._trial_id, st.OWNER_KEY, owner)

    def _ask(self) -> optuna.Trial:
        from hpo.gpu import ask_distributions

        last: Exception | None = None
        for delay in (0.0, 0.5, 1.0, 2.0, 4.0):
            if delay:
                time.sleep(delay)
            try:
                self._reseed_unless_alone(self._n_seen)
                with warnings.catch_warnings():
                    warnings.simplefilter(
                        "ignore", UserWarning
                    )  # "Heartbeat ... used with Study.optimize"
                    trial = self.study.ask(ask_distributions(self))
                self._asked += 1
                self._reseed_unless_alone(trial.number + 1)
                if self.devices is not None:  # the trial may wait for GPU memory: own it now
                    self._claim(trial, None, None)
                st.record_heartbeat(self.study._storage, trial._trial_id)
                return trial
            except Exception as exc:  # a storage hiccup must not end an overnight run
                last = exc
                log.warning("ask failed (%s); retrying", exc)
        raise StopRun(
            ExitCode.STORAGE,
            f"storage {st.redact(self.cfg.storage_url)}: cannot start a trial: {last}",
        )

    def _reseed_unless_alone(self, n_trials_seen: int) -> None:
        """Keep the configured seed only while every trial of the study is this supervisor's.

        A fresh single-supervisor run is reproducible; a resumed run, or a second supervisor on
        the same study, reseeds its sampler so that two samplers never walk in lockstep.
        """
        if not self._reseeded and n_trials_seen != self._asked:
            self.study.sampler.reseed_rng()
            self._reseeded = True
            log.info("sampler reseeded: the study has trials this supervisor did not ask")

    def _chaos_pick(self) -> tuple[str | None, float | None]:
        cfg = self.cfg
        if cfg.chaos <= 0 or self.rng.random() >= cfg.chaos:
            return None, None
        names = cfg.chaos_faults or [f.value for f in Fault]
        fault = self.rng.choice(names)
        delay = None if self.rng.random() < 0.5 else self.rng.uniform(0.0, 0.05)
        return fault, delay

    # ------------------------------------------------------------------ events from workers
    def _wait_and_dispatch(self, wake_r: int) -> None:
        by_obj: dict[Any, tuple[str, Slot | WorkerProcess]] = {}
        for slot in self.slots:
            if slot.worker is not None:
                by_obj[slot.worker.chan] = ("chan", slot)
                by_obj[slot.worker.sentinel] = ("exit", slot)
        for w in self.retiring:
            by_obj[w.sentinel] = ("retired", w)
        timeout = self._next_timer_in()
        ready = wait([*by_obj.keys(), wake_r], timeout=timeout)
        if wake_r in ready:
            try:
                while os.read(wake_r, 512):
                    pass
            except (BlockingIOError, OSError):
                pass
        exits: list[Slot] = []
        for obj in ready:
            if obj == wake_r:
                continue
            kind, target = by_obj[obj]
            if kind == "chan":
                assert isinstance(target, Slot)
                self._drain(target)
            elif kind == "exit":
                assert isinstance(target, Slot)
                exits.append(target)
            else:
                assert isinstance(target, WorkerProcess)
                target.join(1.0)
                target.close()
                self.retiring.remove(target)
                sweep_orphans(self._known_pids())
        for slot in exits:
            self._on_exit(slot)

    def _drain(self, slot: Slot) -> None:
        w = slot.worker
        if w is None:
            return
        try:
            while w.chan.poll():
                msg = w.chan.recv()
                self._on_message(slot, msg)
                if slot.worker is not w:
                    return
        except (EOFError, OSError):
            pass  # the exit sentinel follows

    def _on_message(self, slot: Slot, msg: Any) -> None:
        kind, payload = msg
        if kind == "call":
            self._serve_call(slot, *payload)
        elif kind == "done":
            run = slot.running
            if run is None:
                return
            outcome = Outcome.from_dict(payload)
            self._finish(slot, run, outcome)
        elif kind == "ready":
            slot.ready = True
            self.events.emit(
                "worker_started",
                slot=slot.index,
                pid=payload["pid"],
                boot_s=round(payload["boot_s"], 3),
                device=slot.device,
            )
        elif kind == "boot_error":
            type_name, message, _tb = payload
            text = (
                message
                if type_name.endswith("ObjectiveLoadError")
                else f"objective {self.cfg.objective} failed at import: {type_name}: {message}"
            )
            raise StopRun(ExitCode.CONFIG, text)

    def _serve_call(
        self, slot: Slot, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        run = slot.running
        w = slot.worker
        if run is None or w is None:
            return
        try:
            if method == "__get__" and args and args[0] in READABLE:
                value = getattr(run.trial, args[0])
            elif method in ALLOWED_CALLS:
                value = getattr(run.trial, method)(*args, **kwargs)
            else:
                raise AttributeError(f"hpo: trial method {method!r} is not available in a worker")
            reply: tuple[bool, Any] = (True, value)
        except Exception as exc:
            reply = (False, encode_exception(exc))
        try:
            w.chan.send(("reply", reply))
        except (OSError, ValueError):
            pass

    def _on_exit(self, slot: Slot) -> None:
        w = slot.worker
        if w is None:
            return
        # A result may still be in the pipe (billiard's lesson): read it before declaring loss.
        for msg in recv_all(w.chan):
            try:
                self._on_message(slot, msg)
            except StopRun:
                raise
        w.join(2.0)
        code, sig = w.exit_status()
        if code == EXIT_BOOT_ERROR and slot.running is None and not slot.ready:
            raise StopRun(
                ExitCode.CONFIG,
                f"objective {self.cfg.objective} could not be loaded in the worker (see {w.proc.name} log)",
            )
        run = slot.running
        if run is not None:
            self._finish_lost(slot, run, w, code, sig)
        elif slot.ready or code not in (0, None):
            self.events.emit("worker_lost", slot=slot.index, pid=w.pid, exit_code=code, signal=sig)
        if not slot.ready and run is None:
            # Died while booting (not after a trial): a restart budget, as pytest-xdist's, so a
            # worker that cannot even start does not spin forever.
            now = time.monotonic()
            slot.boot_failures = [t for t in slot.boot_failures if now - t < 60] + [now]
            if len(slot.boot_failures) >= BOOT_FAILURES_PER_MINUTE:
                how = f"signal {_signame(sig)}" if sig else f"exit code {code}"
                raise StopRun(
                    ExitCode.ERROR,
                    f"workers of slot {slot.index} died {len(slot.boot_failures)} times in a minute while "
                    f"starting (last: {how}); see {self.run_dir / 'logs'}",
                )
        w.close()
        slot.worker = None
        slot.ready = False
        sweep_orphans(self._known_pids())

    def _known_pids(self) -> set[int]:
        pids = {s.worker.pid for s in self.slots if s.worker is not None}
        pids.update(w.pid for w in self.retiring)
        return pids

    # ------------------------------------------------------------------ timers
    def _next_timer_in(self) -> float:
        now = time.monotonic()
        t = min(self._hb_next, now + 1.0)
        for s in self.slots:
            if s.running and s.running.deadline:
                t = min(t, s.running.deadline)
            if s.running and s.running.mem_limit_mb:
                t = min(t, self._mem_next)
        if self.stopping is not None and self.stop_deadline is not None:
            t = min(t, self.stop_deadline)
        return max(0.0, t - now)

    def _timers(self) -> None:
        now = time.monotonic()
        if now >= self._hb_next:
            self._hb_next = now + self.cfg.heartbeat_interval
            ids = [s.running.spec.trial_id for s in self.slots if s.running]
            if self.pending is not None:
                ids.append(self.pending._trial_id)
            for trial_id in ids:
                try:
                    st.record_heartbeat(self.study._storage, trial_id)
                except (
                    Exception
                ) as exc:  # a missed heartbeat is not fatal; the grace period covers it
                    log.warning("heartbeat failed: %s", exc)
            from hpo.gpu import check_health

            check_health(self)
        if now >= self._orphans_next:
            # Trials of another supervisor (another host) that died while this one runs.
            self._orphans_next = now + self.cfg.heartbeat_grace
            from hpo.resume import reconcile

            try:
                n = reconcile(self)
            except Exception as exc:  # storage hiccup: try again next time
                log.warning("orphan check failed: %s", exc)
                n = 0
            if n:
                self.echo(f"recovered {n} trial(s) of a supervisor that died")
        check_mem = now >= self._mem_next
        if check_mem:
            self._mem_next = now + 0.25
        for s in self.slots:
            run, w = s.running, s.worker
            if run is None or w is None or run.kill_reason is not None:
                continue
            if run.deadline is not None and now >= run.deadline:
                run.kill_reason = FailureClass.TIMEOUT
                run.kill_note = f"trial exceeded its wall-clock limit of {run.deadline - run.started:.1f}s and was killed"
                log.warning(
                    "[trial %d] timeout after %.1fs: killing worker %d",
                    run.spec.number,
                    now - run.started,
                    w.pid,
                )
                w.kill()
            elif check_mem and run.mem_limit_mb is not None:
                rss = w.tree_rss_mb()
                if rss > run.mem_limit_mb:
                    run.kill_reason = FailureClass.HOST_OOM
                    run.kill_note = f"trial's processes used {rss:.0f} MB of host memory, over the limit of {run.mem_limit_mb:.0f} MB, and were killed"
                    log.warning(
                        "[trial %d] host memory %.0f MB over limit: killing worker %d",
                        run.spec.number,
                        rss,
                        w.pid,
                    )
                    w.kill()

    # ------------------------------------------------------------------ finishing trials
    def _finish_lost(
        self, slot: Slot, run: Running, w: WorkerProcess, code: int | None, sig: int | None
    ) -> None:
        tail = _log_tail(Path(run.spec.log_path))
        if run.kill_reason is not None:
            diag = diagnosis_for(run.kill_reason, summary=run.kill_note)
            message = run.kill_note
        else:
            diag = classify(None, "", tail, exit_code=code, signal=sig)
            how = f"signal {sig} ({_signame(sig)})" if sig else f"exit code {code}"
            message = f"worker {w.pid} died with {how} without reporting a result"
        outcome = Outcome(
            trial_number=run.spec.number,
            status=Status.FAILED,
            message=message,
            traceback=tail,
            duration_s=time.monotonic() - run.started,
            worker_pid=w.pid,
            fault=run.spec.fault,
        )
        self._finish(slot, run, outcome, diag=diag, exit_code=code, sig=sig, lost=True)

    def _finish(
        self,
        slot: Slot,
        run: Running,
        outcome: Outcome,
        *,
        diag: Diagnosis | None = None,
        exit_code: int | None = None,
        sig: int | None = None,
        lost: bool = False,
    ) -> None:
        from hpo.gpu import on_trial_finished

        slot.running = None
        slot.trials_done += 1
        if outcome.worker_pid == 0 and slot.worker is not None:
            outcome.worker_pid = slot.worker.pid
        if outcome.status is Status.FAILED and diag is None:
            diag = classify(outcome.exception_type, outcome.message, outcome.traceback)
        on_trial_finished(self, run, outcome, diag)
        recycle_reason = self.record(run, outcome, diag=diag, exit_code=exit_code, sig=sig)
        if slot.worker is not None and not lost:
            if recycle_reason:
                self._retire(slot, recycle_reason)
            elif slot.trials_done >= self.cfg.recycle_every:
                self._retire(slot, f"recycle_every={self.cfg.recycle_every}")

    def record(
        self,
        run: Running,
        outcome: Outcome,
        *,
        diag: Diagnosis | None = None,
        exit_code: int | None = None,
        sig: int | None = None,
    ) -> str | None:
        """Tag and tell one trial from its outcome; the one place trials are finished.

        Returns a reason to recycle the worker, or None. Also used on resume for outcomes that a
        worker recorded just before its supervisor died.
        """
        number = run.spec.number
        base: dict[str, Any] = {
            "host": st.HOST,
            "worker_pid": outcome.worker_pid,
            "log_path": run.spec.log_path,
            "duration_s": round(outcome.duration_s, 3),
            "attempt": run.attempt,
        }
        if run.device is not None:
            base["device"] = run.device
        if outcome.peak_gpu_mem_mb is not None:
            base["peak_gpu_mem_mb"] = round(outcome.peak_gpu_mem_mb, 1)
        if outcome.fault:
            base["chaos_fault"] = outcome.fault
        if outcome.extra.get("log_error"):
            base["log_error"] = outcome.extra["log_error"]
        recycle_reason: str | None = None
        try:
            if outcome.status is Status.COMPLETE:
                st.set_user_attrs(self.study._storage, run.spec.trial_id, base)
                st.finish_trial(
                    self.study, run.trial or number, TrialState.COMPLETE, outcome.values
                )
                self.consecutive_failures = 0
                self._count("complete")
                self._note_value(outcome.values)
                self.events.emit(
                    "trial_finished",
                    trial=number,
                    state="COMPLETE",
                    values=outcome.values,
                    duration_s=base["duration_s"],
                )
                log.info(
                    "[trial %d] COMPLETE %s (%.2fs)", number, outcome.values, outcome.duration_s
                )
            elif outcome.status is Status.PRUNED:
                st.set_user_attrs(self.study._storage, run.spec.trial_id, base)
                st.finish_trial(self.study, run.trial or number, TrialState.PRUNED, None)
                self.consecutive_failures = 0
                self._count("pruned")
                self.events.emit(
                    "trial_finished", trial=number, state="PRUNED", duration_s=base["duration_s"]
                )
                log.info("[trial %d] PRUNED (%.2fs)", number, outcome.duration_s)
            else:
                recycle_reason = self._finish_failed(run, outcome, base, diag, exit_code, sig)
        except optuna.exceptions.UpdateFinishedTrialError:
            log.warning("[trial %d] was already finished by someone else; outcome dropped", number)
        except StopRun:
            raise
        except Exception as exc:
            log.exception("[trial %d] could not be recorded: %s", number, exc)
            if _is_storage_error(exc):
                raise StopRun(
                    ExitCode.STORAGE,
                    f"storage {st.redact(self.cfg.storage_url)} failed while recording trial {number}: {exc}",
                ) from None
        self.finished_here += 1
        return recycle_reason

    def _finish_failed(
        self,
        run: Running,
        outcome: Outcome,
        base: dict[str, Any],
        diag: Diagnosis | None,
        exit_code: int | None,
        sig: int | None,
    ) -> str | None:
        from hpo.gpu import on_device_failure

        number = run.spec.number
        if diag is None:
            diag = classify(outcome.exception_type, outcome.message, outcome.traceback)
        action = self.policy.action_for(diag.failure_class)
        note = ""
        if outcome.exception_type in CONFIG_ERRORS:
            # The objective itself says its configuration is wrong (a missing model, bad data):
            # every other trial would fail the same way.
            action, note = Action.STOP, "the objective reported a configuration error"
        retry = False
        if action is Action.QUARANTINE:
            if run.device is not None and on_device_failure(self, run.device, diag, force=True):
                retry = True
                note = f"device {run.device} quarantined"
            else:
                action, note = Action.FAIL, "no device to quarantine (CPU run)"
        elif diag.sticky and run.device is not None:
            on_device_failure(self, run.device, diag, force=False)
        if action is Action.RETRY:
            if run.attempt <= self.cfg.max_retries:
                retry = True
            else:
                action, note = Action.PRUNE, f"retries exhausted after {run.attempt} attempt(s)"
        state = TrialState.PRUNED if action is Action.PRUNE else TrialState.FAIL
        first = (
            (outcome.message or diag.summary).strip().splitlines()[0]
            if (outcome.message or diag.summary).strip()
            else ""
        )
        tags: dict[str, Any] = {
            **base,
            "failure_class": diag.failure_class.value,
            "failure_action": action.value if not retry else Action.RETRY.value,
            "failure_summary": diag.summary,
            "failure_hint": diag.hint,
            "sticky": diag.sticky,
            "exception_type": outcome.exception_type,
            "error_msg": (outcome.message or diag.summary)[:500],
            "traceback": outcome.traceback[-4000:],
            "exit_code": exit_code,
            "signal": _signame(sig) if sig else None,
            "cuda_error": bool(diag.cuda),
            "cuda_error_type": diag.cuda_error_type,
            "cuda_error_msg": first[:500] if diag.cuda else None,
        }
        if note:
            tags["failure_note"] = note
        st.set_user_attrs(self.study._storage, run.spec.trial_id, tags)
        st.finish_trial(self.study, run.trial or number, state, None)
        frozen = self.study._storage.get_trial(run.spec.trial_id)
        if retry:
            st.enqueue_retry(self.study, frozen, run.attempt + 1, diag.failure_class.value)
        self._count(diag.failure_class.value)
        self.failures_this_run += state == TrialState.FAIL
        self.last_failure = (diag, tags["error_msg"], run.spec.log_path)
        self.events.emit(
            "trial_failed",
            trial=number,
            state=state.name,
            failure_class=diag.failure_class.value,
            action=tags["failure_action"],
            retry=retry,
            attempt=run.attempt,
            fault=outcome.fault,
        )
        log.info(
            "[trial %d] %s: %s -> %s%s",
            number,
            state.name,
            diag.failure_class.value,
            tags["failure_action"],
            f" ({note})" if note else "",
        )
        if action in (Action.FAIL, Action.STOP) and not retry:
            self.consecutive_failures += 1
        if action is Action.STOP:
            self._trip(
                f"policy stops the study on {diag.failure_class.value}",
                diag,
                tags["error_msg"],
                run.spec.log_path,
            )
        elif self.consecutive_failures >= self.cfg.max_consecutive_failures:
            self._trip(
                f"{self.consecutive_failures} consecutive failures",
                diag,
                tags["error_msg"],
                run.spec.log_path,
            )
        elif self.failures_this_run >= self.cfg.failed_trial_limit:
            self._trip(
                f"{self.failures_this_run} failed trials (max_failed_trials={self.cfg.failed_trial_limit})",
                diag,
                tags["error_msg"],
                run.spec.log_path,
            )
        benign = {FailureClass.USER_ERROR, FailureClass.DATA_ERROR, FailureClass.NUMERICAL}
        if diag.sticky or diag.cuda or diag.failure_class not in benign:
            return f"after {diag.failure_class.value}"
        return None

    def _trip(self, why: str, diag: Diagnosis, sample: str, log_path: str) -> None:
        msg = (
            f"stopping: {why}; last class {diag.failure_class.value}: {sample.splitlines()[0][:200] if sample else diag.summary} "
            f"(log: {log_path})"
        )
        log.error(msg)
        self._begin_stop(ExitCode.FAILURES, msg, grace=self.cfg.stop_grace_s)

    def _count(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    def _note_value(self, values: list[float] | None) -> None:
        if not values or self.n_objectives != 1:
            return
        v = values[0]
        better = (
            (lambda a, b: a > b)
            if self.cfg.study_directions[0] == "maximize"
            else (lambda a, b: a < b)
        )
        if self.best is None or better(v, self.best):
            self.best = v

    # ------------------------------------------------------------------ shutdown
    def _shutdown(self) -> None:
        workers = [s.worker for s in self.slots if s.worker is not None] + list(self.retiring)
        for s in self.slots:
            if s.running is not None and s.worker is not None and s.running.kill_reason is None:
                s.running.kill_reason = FailureClass.INTERRUPTED
                s.running.kill_note = self.stop_message or "the supervisor stopped"
        for w in workers:
            w.stop()
        terminate_all(workers, grace_s=0.0 if any(s.running for s in self.slots) else 2.0)
        for s in self.slots:
            if s.running is not None and s.worker is not None:
                try:
                    self._finish_lost(s, s.running, s.worker, *s.worker.exit_status())
                except Exception as exc:
                    log.error(
                        "[trial %d] could not be marked interrupted: %s",
                        s.running.spec.number if s.running else -1,
                        exc,
                    )
        for w in workers:
            w.close()
        sweep_orphans(set())
        self.retiring.clear()
        if self.pending is not None:
            trial, self.pending = self.pending, None
            spec = TrialSpec(
                number=trial.number,
                trial_id=trial._trial_id,
                n_objectives=self.n_objectives,
                log_path="",
                outcome_path="",
            )
            run = Running(
                trial=trial,
                spec=spec,
                attempt=int(trial.user_attrs.get("attempt", 1)),
                started=time.monotonic(),
                device=None,
            )
            note = "asked but never started: " + (self.stop_message or "the supervisor stopped")
            try:
                self.record(
                    run,
                    Outcome(trial_number=trial.number, status=Status.FAILED, message=note),
                    diag=diagnosis_for(FailureClass.INTERRUPTED, summary=note),
                )
            except Exception as exc:
                log.error("[trial %d] could not be marked interrupted: %s", trial.number, exc)
        from hpo.gpu import close

        close(self)


def _my_ctime() -> float:
    import psutil

    return psutil.Process().create_time()


def _signame(sig: int | None) -> str:
    if sig is None:
        return ""
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"SIG{sig}"


def _log_tail(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - LOG_TAIL_BYTES))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _is_storage_error(exc: BaseException) -> bool:
    name = type(exc).__module__
    return name.startswith("sqlalchemy") or isinstance(
        exc, optuna.exceptions.StorageInternalError | StorageError
    )


def run_study(
    cfg: StudyConfig, echo: Callable[[str], None] | None = None, progress: Any = None
) -> int:
    """Run the study described by ``cfg``; returns the exit code (see :class:`ExitCode`)."""
    return Supervisor(cfg, echo=echo, progress=progress).run()


__all__ = ["ExitCode", "Supervisor", "run_study", "merge_alloc_conf"]
