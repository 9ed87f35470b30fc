"""The supervisor's study: :class:`StudyStore`, the only object that touches Optuna during a
run (ask, claim, serve trial calls, heartbeat, budget, finish, retries, orphans)."""

from __future__ import annotations

import datetime
import functools
import logging
import os
import pickle
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import optuna
from optuna.distributions import BaseDistribution
from optuna.storages import RDBStorage
from optuna.trial import FrozenTrial, TrialState

from hpo import attrs
from hpo.errors import StorageError
from hpo.failures import Decision, TrialResult, constraints_failed
from hpo.outcome import Status
from hpo.protocol import TRIAL_CALLS, CallKind, TrialSpec, encode_exception
from hpo.samplers import (
    Constraints,
    ConstraintsError,
    ConstraintsUnavailable,
    make_pruner,
    make_sampler,
)
from hpo.storage.connect import (
    _is_storage_error,
    create_or_load_study,
    describe_storage_error,
    is_connection_lost,
    open_storage,
)
from hpo.storage.queries import (
    HOST,
    OWNER_KEY,
    lift_quarantine,
    quarantine_key,
    quarantines,
    trials,
)

log = logging.getLogger("hpo.storage")

# -- the supervisor's study ---------------------------------------------------------------------
#: A RUNNING trial with neither owner nor heartbeat is an orphan after this long (a supervisor
#: killed inside ``study.ask()``); an hpo supervisor records both within milliseconds.
NO_EVIDENCE_S = 60.0


@dataclass(frozen=True)
class Asked:
    """A trial this supervisor asked for, as the worker needs it."""

    number: int
    trial_id: int
    params: dict[str, Any]
    user_attrs: dict[str, Any]
    datetime_start: datetime.datetime | None
    attempt: int

    def spec(self, n_objectives: int, log_path: str, outcome_path: str, fault: Any) -> TrialSpec:
        """The ``RUN`` record for a worker; ``fault`` is chaos's ``(fault, delay_s)``."""
        return TrialSpec(
            number=self.number,
            trial_id=self.trial_id,
            n_objectives=n_objectives,
            log_path=log_path,
            outcome_path=outcome_path,
            params=dict(self.params),
            user_attrs=dict(self.user_attrs),
            datetime_start=self.datetime_start,
            fault=fault[0],
            fault_delay_s=fault[1],
        )


@functools.cache
def _own_ctime() -> float:
    import psutil

    return float(psutil.Process().create_time())


def owner_record(run_dir: Path, worker_pid: int | None, device: int | None) -> dict[str, Any]:
    """The ``hpo:owner`` system attribute: who runs a trial (read on resume). The start time
    tells this process from a later one with the same pid; it is read once, not per trial."""
    return {
        "host": HOST,
        "pid": os.getpid(),
        "ctime": _own_ctime(),
        "run_dir": str(run_dir),
        "worker_pid": worker_pid,
        "device": device,
    }


@dataclass(frozen=True)
class Orphan:
    """A RUNNING trial whose supervisor is gone; ``why`` says how that is known."""

    number: int
    why: str
    user_attrs: Mapping[str, Any]
    age_s: float
    owner: Mapping[str, Any] | None

    @property
    def run_dir(self) -> Path | None:
        """The dead supervisor's run folder, when it ran on this host (its outcome files)."""
        if self.owner and self.owner.get("host") == HOST and self.owner.get("run_dir"):
            return Path(self.owner["run_dir"])
        return None

    @property
    def worker_pid(self) -> int:
        return int((self.owner or {}).get("worker_pid") or 0)

    @property
    def device(self) -> int | None:
        d = (self.owner or {}).get("device")
        return int(d) if d is not None else None


def _age_s(started: datetime.datetime | None) -> float:
    """Seconds since ``started`` (Optuna 5 stores RDB timestamps as naive UTC)."""
    if started is None:
        return 0.0
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    return max(0.0, (now - started.replace(tzinfo=None)).total_seconds())


_T = TypeVar("_T")

#: System attributes the runner keeps besides its ``hpo:`` ones (retry links, Optuna's keys).
_RUNNER_KEYS = frozenset({attrs.FAILED_TRIAL, attrs.RETRY_HISTORY, "fixed_params"})


def _sendable(name: str, value: Any) -> Any:
    """``value`` if it can travel to the worker; a one-line error naming what cannot."""
    try:
        pickle.dumps(value)
    except Exception as exc:
        raise TypeError(
            f"hpo: trial.{name} cannot be sent to the worker ({type(value).__name__} does not "
            f"pickle: {exc!s:.200})"
        ) from None
    return value


def _told(doing: str) -> Callable[[Callable[..., _T]], Callable[..., _T]]:
    """A StudyStore method whose storage failures become one plain StorageError (exit 3)."""

    def wrap(fn: Callable[..., _T]) -> Callable[..., _T]:
        @functools.wraps(fn)
        def inner(self: StudyStore, *args: Any, **kwargs: Any) -> _T:
            try:
                return fn(self, *args, **kwargs)
            except StorageError:
                raise
            except Exception as exc:
                if not _is_storage_error(exc):
                    raise
                raise StorageError(describe_storage_error(exc, self.url, doing)) from exc

        return inner

    return wrap


class StudyStore:
    """The supervisor's study: every read and write of a run goes through here.

    It keeps the ``optuna.Trial`` of each trial this supervisor asked for until the trial is
    finished, serves the workers' trial calls on them, and finishes trials idempotently.
    """

    def __init__(
        self, study: optuna.Study, url: str, constraints: Constraints | None = None
    ) -> None:
        self.study = study
        self.url = url
        self.constraints = constraints
        self._live: dict[int, optuna.Trial] = {}
        self._reported: dict[int, tuple[int, float]] = {}  # last (step, value) of live trials
        self._user_keys: dict[int, set[str]] = {}  # user attrs of live trials, kept as they are set
        self._asked = 0
        self._reseeded = False
        self.n_seen = 0
        self.outage_grace_s = 60.0  # how long a lost database connection is waited out

    @classmethod
    def open(
        cls,
        url: str,
        name: str,
        directions: Sequence[str],
        sampler: optuna.samplers.BaseSampler,
        pruner: optuna.pruners.BasePruner,
        *,
        heartbeat_interval: int | None = None,
        grace_period: int | None = None,
        constraints: Constraints | None = None,
        metric_names: Sequence[str] | None = None,
    ) -> StudyStore:
        storage = open_storage(url, heartbeat_interval, grace_period)
        study = create_or_load_study(storage, name, directions, sampler, pruner)
        if metric_names and study.metric_names != list(metric_names):
            study.set_metric_names(list(metric_names))  # read by the summary, status, reports
        return cls(study, url, constraints)

    @classmethod
    def for_config(cls, cfg: Any) -> StudyStore:
        """The study a :class:`~hpo.config.StudyConfig` names, with its sampler and pruner (and
        the sampler's constraints function, imported here: the sampler lives in this process)."""
        from hpo.objective import load_callable

        s, p = cfg.sampler, cfg.pruner
        constraints = None
        if cfg.constraints:
            constraints = Constraints(
                load_callable(cfg.constraints, "constraints"), cfg.constraints
            )
        return cls.open(
            cfg.storage_url,
            cfg.study,
            cfg.study_directions,
            make_sampler(s.name, s.seed, s.kwargs, constraints),
            make_pruner(p.name, p.kwargs),
            heartbeat_interval=cfg.heartbeat_interval,
            grace_period=cfg.heartbeat_grace,
            constraints=constraints,
            metric_names=cfg.metric_names,
        )

    @property
    def name(self) -> str:
        return self.study.study_name

    @property
    def _storage(self) -> Any:
        return self.study._storage

    @_told("write a study attribute")
    def set_study_attr(self, key: str, value: Any) -> None:
        self.study.set_user_attr(key, value)

    def record_quarantine(self, device: int, uuid: str | None, reason: str) -> None:
        """Write ``hpo:quarantine:<host>:<uuid>`` on the study (read back by the next run on this
        host); a failure is logged, never raised."""
        record = {"reason": reason, "time": time.time(), "host": HOST, "gpu": device, "uuid": uuid}
        try:
            self.study.set_user_attr(quarantine_key(HOST, device, uuid), record)
        except Exception as exc:
            log.warning("could not record the quarantine in the study: %s", exc)

    def record_no_expandable(self, device: int | None, error: str) -> None:
        """Write that GPU ``device`` of this host runs without expandable segments (the WSL2
        fallback), with the error that caused it; a failure is logged, never raised."""
        try:
            self.study.set_user_attr(attrs.no_expandable_key(HOST, device), error[:500])
        except Exception as exc:
            log.warning("could not record the allocator fallback in the study: %s", exc)

    def lift_quarantine(self, device: int, uuid: str | None) -> None:
        """Mark this host's quarantine record of ``device`` lifted (it was reset and is healthy
        again); a failure is logged, never raised."""
        try:
            lift_quarantine(self.study, uuid or str(device), host=HOST)
        except Exception as exc:
            log.warning("could not lift the quarantine in the study: %s", exc)

    def quarantines(self, expires_s: float | None) -> list[dict[str, Any]]:
        """The quarantines recorded for this host that are neither lifted nor expired."""
        return quarantines(self.study, host=HOST, expires_s=expires_s)

    # -- asking and owning -----------------------------------------------------------------------
    def ask(
        self,
        distributions: Mapping[str, BaseDistribution] | None,
        retry_delays_s: Sequence[float] = (0.0, 0.5, 1.0, 2.0, 4.0),
    ) -> Asked:
        """Ask for a trial, retrying storage hiccups (an overnight run must not end on one);
        StorageError when every try failed."""
        last: Exception | None = None
        for delay in retry_delays_s:
            time.sleep(delay)
            try:
                return self._ask(distributions)
            except Exception as exc:
                last = exc
                log.warning("ask failed (%s); retrying", exc)
        assert last is not None
        raise StorageError(describe_storage_error(last, self.url, "start a trial"))

    def _ask(self, distributions: Mapping[str, BaseDistribution] | None) -> Asked:
        """Ask the sampler for a trial (a WAITING retry first) and record its first heartbeat."""
        self._reseed_unless_alone(self.n_seen)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "Heartbeat ... used with Study.optimize"
            trial = self.study.ask(dict(distributions) if distributions else None)
        self._asked += 1
        self._reseed_unless_alone(trial.number + 1)
        self._live[trial.number] = trial
        self.heartbeat([trial.number])
        user_attrs = dict(trial.user_attrs)
        self._user_keys[trial.number] = set(user_attrs)
        return Asked(
            number=trial.number,
            trial_id=trial._trial_id,
            params=dict(trial.params),
            user_attrs=user_attrs,
            datetime_start=trial.datetime_start,
            attempt=int(user_attrs.get(attrs.ATTEMPT, 1)),
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

    @_told("record which supervisor runs a trial")
    def claim(self, number: int, owner: Mapping[str, Any]) -> None:
        """Record who runs trial ``number`` (read on resume to find orphans without waiting)."""
        trial = self._live[number]
        self._storage.set_trial_system_attr(trial._trial_id, OWNER_KEY, dict(owner))

    def heartbeat(self, numbers: Sequence[int]) -> None:
        storage = self._storage
        if not hasattr(storage, "record_heartbeat") or storage.get_heartbeat_interval() is None:
            return
        for n in numbers:
            trial = self._live.get(n)
            if trial is not None:
                storage.record_heartbeat(trial._trial_id)

    @_told("count the study's trials")
    def budget_left(self, n_trials: int) -> bool:
        """Whether another trial may start: COMPLETE+PRUNED+RUNNING (anyone's) < n_trials."""
        all_trials = trials(self.study)
        self.n_seen = len(all_trials)
        busy = sum(
            t.state in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING)
            for t in all_trials
        )
        return busy < n_trials

    @_told("count the study's trials")
    def n_done(self) -> int:
        return len(trials(self.study, (TrialState.COMPLETE, TrialState.PRUNED)))

    @_told("count the study's trials")
    def n_complete(self) -> int:
        return len(trials(self.study, (TrialState.COMPLETE,)))

    @_told("read the study's search space")
    def search_space(self) -> dict[str, BaseDistribution]:
        """The distributions of the most recent finished trial (to ask with fixed distributions)."""
        for t in reversed(trials(self.study, (TrialState.COMPLETE, TrialState.PRUNED))):
            if t.distributions:
                return dict(t.distributions)
        return {}

    # -- the workers' trial calls ----------------------------------------------------------------
    def serve(self, number: int, call: tuple[str, Any, Any]) -> tuple[bool, Any]:
        """Carry out a worker's ``(name, args, kwargs)`` on trial ``number``'s ``optuna.Trial``,
        on the study (``study.*``) or on the trial's records in the storage (``storage.*``).

        Only what :data:`hpo.protocol.TRIAL_CALLS` lists is served; the reply is ``(True,
        value)`` or ``(False, encoded exception)`` for the worker to raise.
        """
        name, args, kwargs = call
        try:
            kind = TRIAL_CALLS.get(name)
            if kind is None:
                raise AttributeError(f"hpo: trial.{name} is not available in a worker")
            trial = self._live[number]
            owner, _, attr = name.rpartition(".")
            if owner == "study":
                return True, _sendable(name, self._study_member(attr, kind, args, kwargs))
            if owner == "storage":
                return True, _sendable(name, self._trial_storage(trial, attr, args, kwargs))
            if kind in (CallKind.READ, CallKind.SNAPSHOT):
                return True, getattr(trial, name)
            value = getattr(trial, name)(*args, **kwargs)
            if name == "set_user_attr":
                self._user_keys[number].add(args[0] if args else kwargs["key"])
            elif name == "report":
                self._note_report(number, args, kwargs)
            return True, value
        except Exception as exc:
            return False, encode_exception(exc)

    def _note_report(self, number: int, args: Any, kwargs: Any) -> None:
        got = {**dict(zip(("value", "step"), args, strict=False)), **kwargs}
        try:
            self._reported[number] = (int(got["step"]), float(got["value"]))
        except (KeyError, TypeError, ValueError):
            pass  # Optuna accepted it; the progress line just does not show it

    def last_reported(self, number: int) -> tuple[int, float] | None:
        """The last ``(step, value)`` live trial ``number`` reported, if any (progress lines)."""
        return self._reported.get(number)

    # -- constraints -----------------------------------------------------------------------------
    def constrain(self, result: TrialResult) -> TrialResult:
        """Check the study's constraints on a trial that completed or pruned, before it is told.

        Optuna would call the constraints function inside ``tell``, where a function that raises
        leaves the trial COMPLETE and stops the optimisation; here it runs first, on the trial as
        Optuna would pass it, and a failure fails this trial only (``user_error``)."""
        if self.constraints is None or result.status not in (Status.COMPLETE, Status.PRUNED):
            return result
        frozen = self._storage.get_trial(self._trial_id(result.number))
        if frozen.state.is_finished():
            return result
        try:
            self.constraints.evaluate(frozen)
        except ConstraintsError as exc:
            log.warning("[trial %d] %s", result.number, exc)
            return constraints_failed(result, exc.exception_type, str(exc), exc.traceback)
        return result

    def _study_member(self, attr: str, kind: CallKind, args: Any, kwargs: Any) -> Any:
        if attr == "stop":  # carried out by the supervisor (Study.stop works only in optimize)
            return None
        member = getattr(self.study, attr)
        return member(*args, **kwargs) if kind is CallKind.CALL else member

    def _trial_storage(self, trial: optuna.Trial, attr: str, args: Any, kwargs: Any) -> Any:
        """``trial.storage.<attr>(trial_id, ...)`` in a worker: its own trial, and none of the
        runner's system attributes written."""
        trial_id = args[0] if args else kwargs.get("trial_id")
        if trial_id != trial._trial_id:
            raise ValueError(
                f"hpo: trial.storage.{attr}() reaches only the worker's own trial (id "
                f"{trial._trial_id}), not trial id {trial_id!r}"
            )
        if attr == "set_trial_system_attr":
            key = args[1] if len(args) > 1 else kwargs.get("key")
            if not isinstance(key, str) or key.startswith(attrs.PREFIX) or key in _RUNNER_KEYS:
                raise ValueError(
                    f"hpo: system attribute {key!r} is the runner's; an objective may not write it"
                )
        return getattr(self._storage, attr)(*args, **kwargs)

    # -- finishing -------------------------------------------------------------------------------
    def finish(
        self,
        result: TrialResult,
        decision: Decision,
        *,
        lineage: Mapping[str, Any],
        device: int | None,
    ) -> bool:
        """Tag and tell ``result``'s trial as ``decision`` says, and queue its retry.

        Idempotent: a trial already finished (by us before a crash, or by someone else) is left
        as it is and False is returned, and a retry already queued is not queued again. The
        runner's attributes never overwrite one the objective set itself. ``lineage`` is the
        trial's user attributes (attempt and retry counts of its parameters).
        """
        number = result.number
        deadline = time.monotonic() + self.outage_grace_s
        delay = 0.5
        try:
            while True:
                try:
                    return self._finish(result, decision, lineage, device)
                except optuna.exceptions.UpdateFinishedTrialError:
                    return False
                except StorageError:
                    raise
                except Exception as exc:
                    if not _is_storage_error(exc):
                        raise
                    # A brief database outage is waited out (finishing is idempotent); a full
                    # disk or a read-only file is not going to heal by itself.
                    if is_connection_lost(exc) and time.monotonic() + delay < deadline:
                        log.warning("[trial %d] storage unreachable (%s); retrying", number, exc)
                        time.sleep(delay)
                        delay = min(delay * 2, 8.0)
                        continue
                    doing = f"record trial {number}"
                    raise StorageError(describe_storage_error(exc, self.url, doing)) from exc
        finally:
            self._live.pop(number, None)
            self._user_keys.pop(number, None)
            self._reported.pop(number, None)

    def _finish(
        self,
        result: TrialResult,
        decision: Decision,
        lineage: Mapping[str, Any],
        device: int | None,
    ) -> bool:
        number = result.number
        trial_id = self._trial_id(number)
        attempt = int(lineage.get(attrs.ATTEMPT, 1))
        tags: dict[str, Any] = {
            attrs.HOST: HOST,
            attrs.WORKER_PID: result.worker_pid,
            attrs.LOG_PATH: result.log_path,
            attrs.DURATION_S: round(result.duration_s, 3),
            attrs.ATTEMPT: attempt,
        }
        if device is not None:
            tags[attrs.DEVICE] = device
        if result.peak_gpu_mem_mb is not None:
            tags[attrs.PEAK_GPU_MEM_MB] = round(result.peak_gpu_mem_mb, 1)
        if result.fault:
            tags[attrs.CHAOS_FAULT] = result.fault
        if result.log_error:
            tags[attrs.LOG_ERROR] = result.log_error
        if result.allocator:
            tags[attrs.ALLOCATOR] = result.allocator
        tags.update(decision.tags)
        # A live trial's state and user keys are known here (no read per trial); a recovered
        # one is read from the storage.
        frozen: FrozenTrial | None = None
        user = self._user_keys.get(number)
        if user is None:
            frozen = self._storage.get_trial(trial_id)
            if frozen.state.is_finished():
                return False
            user = set(frozen.user_attrs)
        for key, plain in attrs.COMPAT.items():
            if key in tags and plain != key and plain not in user:
                tags[plain] = tags[key]
        # A key the objective set itself is the objective's (only un-namespaced keys can clash).
        tags = {k: v for k, v in tags.items() if k.startswith(attrs.PREFIX) or k not in user}
        if decision.retry:
            frozen = frozen or self._storage.get_trial(trial_id)
            # Queued before the original is told, so the original can say which trial retries it
            # (finished trials are immutable); a retry queued before a crash is found, not doubled.
            infra = int(lineage.get(attrs.INFRA_RETRIES, 0)) + decision.blameless
            tags[attrs.RETRIED_AS] = self._retry_of(number) or self._enqueue_retry(
                frozen, attempt + 1, infra, decision.alone, result
            )
        self._set_user_attrs(trial_id, tags)
        complete = decision.state == TrialState.COMPLETE
        values = list(result.values) if complete and result.values else None
        try:
            self.study.tell(
                self._live.get(number, number),
                values=values,
                state=decision.state,
                skip_if_finished=True,
            )
        except ConstraintsUnavailable as exc:
            # A trial pruned after a failure: no constraint values (Optuna records None, which its
            # samplers rank below every feasible trial). Optuna stores the state in a ``finally``;
            # should it ever stop doing so, the trial is finished here all the same.
            log.info("[trial %d] no constraint values: %s", number, exc)
            if not self._storage.get_trial(trial_id).state.is_finished():
                self._storage.set_trial_state_values(trial_id, decision.state, values)
        return True

    def _retry_of(self, number: int) -> int | None:
        """The number of a retry of trial ``number`` already queued, if any."""
        for t in trials(self.study, (TrialState.WAITING,)):
            if t.user_attrs.get(attrs.RETRY_OF) == number:
                return t.number
        return None

    def _trial_id(self, number: int) -> int:
        trial = self._live.get(number)
        if trial is not None:
            return int(trial._trial_id)
        return int(
            self._storage.get_trial_id_from_study_id_trial_number(self.study._study_id, number)
        )

    def _set_user_attrs(self, trial_id: int, tags: Mapping[str, Any]) -> None:
        """Several user attrs of a RUNNING trial in one transaction on RDB storages."""
        backend = getattr(self._storage, "_backend", self._storage)
        if isinstance(backend, RDBStorage) and hasattr(backend, "_set_trial_attr_without_commit"):
            try:
                from optuna.storages._rdb import models
                from optuna.storages._rdb.storage import _create_scoped_session

                with _create_scoped_session(backend.scoped_session, True) as session:
                    for key, value in tags.items():
                        backend._set_trial_attr_without_commit(
                            session, models.TrialUserAttributeModel, trial_id, key, value
                        )
                return
            except optuna.exceptions.UpdateFinishedTrialError:
                raise
            except Exception as exc:  # private API changed: fall back to the public path
                log.debug("bulk attribute write failed (%s); writing one by one", exc)
        for key, value in tags.items():
            self._storage.set_trial_user_attr(trial_id, key, value)

    def _enqueue_retry(
        self, original: FrozenTrial, attempt: int, infra: int, alone: bool, result: TrialResult
    ) -> int:
        """Queue the original's parameters as a WAITING trial linked to it (Optuna's keys too);
        returns its number. A trial that failed before its first suggestion has no parameters:
        its retry has none either, and the sampler picks them anew."""
        history = [*original.system_attrs.get(attrs.RETRY_HISTORY, []), original.number]
        system_attrs = {
            attrs.FAILED_TRIAL: original.system_attrs.get(attrs.FAILED_TRIAL, original.number),
            attrs.RETRY_HISTORY: history,
        }
        if "fixed_params" in original.system_attrs:
            system_attrs["fixed_params"] = original.system_attrs["fixed_params"]
        user_attrs: dict[str, Any] = {
            attrs.RETRY_OF: original.number,
            attrs.ATTEMPT: attempt,
            attrs.RETRY_REASON: result.failure_class.value if result.failure_class else "unknown",
            attrs.INFRA_RETRIES: infra,
        }
        if alone:
            user_attrs[attrs.RUN_ALONE] = True
        template = optuna.create_trial(
            state=TrialState.WAITING,
            params=original.params,
            distributions=original.distributions,
            user_attrs=user_attrs,
            system_attrs=system_attrs,
        )
        trial_id = self._storage.create_new_trial(self.study._study_id, template_trial=template)
        return int(self._storage.get_trial_number_from_id(trial_id))

    # -- orphans ---------------------------------------------------------------------------------
    @_told("look for trials of dead supervisors")
    def orphans(self, me: int, alive: Any, grace_s: float) -> list[Orphan]:
        """RUNNING trials of a dead supervisor: a stale heartbeat (Optuna's own query), an owner
        on this host that ``alive(pid, ctime)`` says is gone, or no owner and no heartbeat after
        ``max(NO_EVIDENCE_S, 3 * grace_s)`` (a supervisor killed inside ``study.ask()``; a plain
        ``study.optimize`` without heartbeats sharing the study would look the same)."""
        storage = self._storage
        stale: set[int] = set()
        if (
            hasattr(storage, "_get_stale_trial_ids")
            and storage.get_heartbeat_interval() is not None
        ):
            stale = set(storage._get_stale_trial_ids(self.study._study_id))
        backend = getattr(storage, "_backend", storage)
        running = backend.get_all_trials(
            self.study._study_id, deepcopy=False, states=(TrialState.RUNNING,)
        )
        found = []
        for t in running:
            owner = t.system_attrs.get(OWNER_KEY)
            local = bool(owner) and owner.get("host") == HOST
            if local and owner.get("pid") == me:
                continue  # ours: alive by definition
            age = _age_s(t.datetime_start)
            if t._trial_id in stale:
                why = "heartbeat stale"
            elif local and not alive(int(owner.get("pid", -1)), owner.get("ctime")):
                why = f"supervisor pid {owner.get('pid')} is gone"
            elif (
                owner is None
                and age >= max(NO_EVIDENCE_S, 3 * grace_s)
                and not self._has_heartbeat(t._trial_id)
            ):
                why = "it died while asking for the trial: no owner, no heartbeat"
            else:
                continue
            found.append(Orphan(t.number, why, dict(t.user_attrs), age, owner))
        return found

    def _has_heartbeat(self, trial_id: int) -> bool:
        backend = getattr(self._storage, "_backend", self._storage)
        if not isinstance(backend, RDBStorage):
            return True
        try:
            from optuna.storages._rdb import models
            from optuna.storages._rdb.storage import _create_scoped_session

            with _create_scoped_session(backend.scoped_session) as session:
                return models.TrialHeartbeatModel.where_trial_id(trial_id, session) is not None
        except Exception:
            return True
