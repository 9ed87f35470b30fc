"""The only module that talks to Optuna storages: open, create/load, ask, claim, heartbeat,
budget, serve trial calls, finish, retry, orphans; and the read-only queries of the reports.

Design notes:
- The supervisor is the single writer of the study on its host; workers never open it. During
  a run it holds one :class:`StudyStore`, which keeps the live ``optuna.Trial`` objects; no
  other module reaches into an Optuna object's private attributes.
- Optuna's ``RDBStorage`` (SQLite, PostgreSQL, MySQL) is used with its own heartbeat machinery
  (``heartbeat_interval``/``grace_period`` and ``_get_stale_trial_ids``), the supervisor recording
  the heartbeats of the trials its workers run.
- Tags are written before a trial is finished (finished trials are immutable), several in one
  transaction where the backend allows it. Finishing is idempotent (``skip_if_finished``), so
  recovering a trial after a crash is the same code path as finishing it normally.
- Retries use the system attrs of Optuna's ``RetryHeartbeatStaleTrialCallback`` (``failed_trial``,
  ``retry_history``) so ``RetryHeartbeatStaleTrialCallback.retried_trial_number`` works on them,
  plus the runner's retry attributes (see :mod:`hpo.attrs`).
"""

from __future__ import annotations

import datetime
import logging
import os
import re
import socket
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.storages import RDBStorage
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from hpo import attrs
from hpo.errors import ConfigError, StorageError
from hpo.failures import Decision, TrialResult
from hpo.protocol import TRIAL_CALLS, CallKind, TrialSpec, encode_exception
from hpo.samplers import make_pruner, make_sampler

log = logging.getLogger(__name__)

OWNER_KEY = attrs.OWNER  # system attr: which supervisor runs the trial (host, pid, ctime, run dir)
HOST = socket.gethostname()

warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)


def redact(url: str) -> str:
    """The URL with any password replaced by ``***`` (safe for logs, tags and output)."""
    try:
        from sqlalchemy.engine import make_url

        u = make_url(url)
        if u.password is not None:
            return u.render_as_string(hide_password=True)
        return url
    except Exception:
        return re.sub(r"(//[^:/@]+:)[^@]*@", r"\1***@", url)


def _sqlite_path(url: str) -> Path | None:
    if not url.startswith("sqlite:///"):
        return None
    rest = url[len("sqlite:///") :].split("?")[0]
    if rest in ("", ":memory:"):
        return None
    return Path(rest)


def open_storage(
    url: str, heartbeat_interval: int | None = None, grace_period: int | None = None
) -> RDBStorage:
    """Open an RDB storage tuned for the runner; StorageError (password redacted) on failure."""
    if not re.match(r"^(sqlite|postgresql|postgres|mysql|mariadb)(\+\w+)?://", url):
        raise StorageError(
            f"storage {redact(url)!r} is not supported: use sqlite:///path.db, postgresql://… or mysql+pymysql://…"
        )
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    url = _with_available_driver(url)
    engine_kwargs: dict[str, Any] = {}
    path = _sqlite_path(url)
    if path is not None:
        _check_sqlite_writable(path)
        # Supervisors on one host share the file; readers (hpo status, the dashboard) must not
        # make them fail: a long busy timeout, and WAL so readers never block the writer.
        engine_kwargs["connect_args"] = {"timeout": 60.0}
    else:
        engine_kwargs["pool_pre_ping"] = True
        if url.startswith(("postgresql", "mysql", "mariadb")):
            engine_kwargs["connect_args"] = {"connect_timeout": 10}
    for attempt in range(6):
        try:
            storage = RDBStorage(
                url,
                engine_kwargs=engine_kwargs,
                heartbeat_interval=heartbeat_interval,
                grace_period=grace_period,
            )
            break
        except ImportError as exc:
            raise StorageError(
                f"storage {redact(url)!r}: database driver missing ({exc}); pip install 'hpo[postgres]' or 'hpo[mysql]'"
            ) from None
        except Exception as exc:  # OperationalError, version mismatch, …
            text = str(exc).lower()
            # Two supervisors creating the schema at once: the loser sees the winner's tables.
            if attempt < 5 and any(
                w in text
                for w in ("already exists", "duplicate", "unique constraint", "database is locked")
            ):
                time.sleep(0.2 * (attempt + 1))
                continue
            raise StorageError(
                f"cannot open storage {redact(url)!r}: {_first_line(exc, url)}"
            ) from None
    if path is not None:
        _enable_wal(storage)
    return storage


def _with_available_driver(url: str) -> str:
    """SQLAlchemy 2.1 reads ``postgresql://`` as psycopg 3; fall back to psycopg2 if only it is here."""
    import importlib.util

    if (
        url.startswith("postgresql://")
        and importlib.util.find_spec("psycopg") is None
        and importlib.util.find_spec("psycopg2") is not None
    ):
        return "postgresql+psycopg2://" + url[len("postgresql://") :]
    if (
        url.startswith(("mysql://", "mariadb://"))
        and importlib.util.find_spec("MySQLdb") is None
        and importlib.util.find_spec("pymysql") is not None
    ):
        return "mysql+pymysql://" + url.split("://", 1)[1]
    return url


def _first_line(exc: BaseException, url: str) -> str:
    # Optuna wraps driver errors (StorageInternalError from SQLAlchemy's from the driver's):
    # the innermost one says what is wrong ("attempt to write a readonly database").
    seen = 0
    while seen < 5 and (exc.__cause__ is not None or getattr(exc, "orig", None) is not None):
        exc = getattr(exc, "orig", None) or exc.__cause__  # type: ignore[assignment]
        seen += 1
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    try:
        from sqlalchemy.engine import make_url

        pw = make_url(url).password
        if pw:
            line = line.replace(str(pw), "***")
    except Exception:
        pass
    return line[:300]


def _check_sqlite_writable(path: Path) -> None:
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(
            f"cannot create the folder of SQLite storage {str(path)!r}: {exc.strerror}"
        ) from None
    if path.exists() and not os.access(path, os.W_OK):
        raise StorageError(f"SQLite storage {str(path)!r} is read-only")
    if not os.access(parent, os.W_OK):
        raise StorageError(f"SQLite storage folder {str(parent)!r} is not writable")


def _enable_wal(storage: RDBStorage) -> None:
    import sqlalchemy

    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    sqlalchemy.event.listen(storage.engine, "connect", _on_connect)
    try:
        with storage.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA journal_mode=WAL")
    except Exception as exc:  # e.g. a filesystem without shared memory: keep the default journal
        log.warning("could not enable SQLite WAL mode: %s", exc)
    # Connections pooled before the listener was attached keep synchronous=FULL (an fsync per
    # commit); drop them so every connection gets NORMAL, which is safe with WAL.
    storage.engine.dispose()


def create_or_load_study(
    storage: RDBStorage,
    name: str,
    directions: Sequence[str],
    sampler: optuna.samplers.BaseSampler,
    pruner: optuna.pruners.BasePruner,
) -> optuna.Study:
    """Create the study, or load it and refuse if it was made with other directions."""
    wanted = [
        StudyDirection.MAXIMIZE if d == "maximize" else StudyDirection.MINIMIZE for d in directions
    ]
    try:
        existing = storage.get_study_id_from_name(name)
    except KeyError:
        existing = None
    except Exception as exc:
        raise StorageError(
            f"cannot read storage {redact(storage.url)!r}: {_first_line(exc, storage.url)}"
        ) from None
    if existing is not None:
        have = storage.get_study_directions(existing)
        if list(have) != wanted:
            raise StorageError(
                f"study {name!r} exists in {redact(storage.url)} with direction(s) "
                f"{', '.join(d.name.lower() for d in have)}, but the config says "
                f"{', '.join(directions)}: use another study name rather than mix results"
            )
    try:
        return optuna.create_study(
            study_name=name,
            storage=storage,
            directions=[d for d in directions],  # type: ignore[misc]
            sampler=sampler,
            pruner=pruner,
            load_if_exists=True,
        )
    except Exception as exc:
        raise StorageError(
            f"cannot create study {name!r} in {redact(storage.url)}: {_first_line(exc, storage.url)}"
        ) from None


def load_study(storage_url: str, name: str | None) -> optuna.Study:
    """Load a study for the read-only commands (status, failures, report, replay)."""
    storage = open_storage(storage_url)
    names = [s.study_name for s in storage.get_all_studies()]
    if name is None:
        if len(names) == 1:
            name = names[0]
        else:
            raise StorageError(
                f"storage {redact(storage_url)} holds {len(names)} studies; name one with --study "
                f"({', '.join(names[:10]) or 'none'})"
            )
    if name not in names:
        raise StorageError(
            f"no study {name!r} in {redact(storage_url)} (it has: {', '.join(names[:10]) or 'no studies'})"
        )
    return optuna.load_study(study_name=name, storage=storage)


def trials(study: optuna.Study, states: Sequence[TrialState] | None = None) -> list[FrozenTrial]:
    return study._storage.get_all_trials(
        study._study_id, deepcopy=False, states=tuple(states) if states else None
    )


def trial_by_number(study: optuna.Study, number: int) -> FrozenTrial:
    """Trial ``number`` of the study, or a ConfigError saying which numbers exist."""
    all_trials = trials(study)
    for t in all_trials:
        if t.number == number:
            return t
    if not all_trials:
        raise ConfigError(f"study {study.study_name!r} has no trials")
    raise ConfigError(
        f"trial {number} is out of range: study {study.study_name!r} has trials 0..{len(all_trials) - 1}"
    )


def trials_uncached(study: optuna.Study, states: Sequence[TrialState]) -> list[FrozenTrial]:
    """Trials in ``states`` read straight from the database (Optuna's cache would first load
    every trial with every attribute: over a second for 5000 trials)."""
    storage: Any = study._storage
    backend = getattr(storage, "_backend", storage)
    return list(backend.get_all_trials(study._study_id, deepcopy=False, states=tuple(states)))


def state_counts(study: optuna.Study) -> dict[str, int]:
    """Number of trials per state name, counted by the database where it can."""
    backend = getattr(study._storage, "_backend", study._storage)
    if isinstance(backend, RDBStorage):
        import sqlalchemy

        q = sqlalchemy.text(
            "SELECT state, COUNT(*) FROM trials WHERE study_id = :sid GROUP BY state"
        )
        with backend.engine.connect() as conn:
            rows = conn.execute(q, {"sid": study._study_id}).all()
        return {str(getattr(s, "name", s)).rsplit(".", 1)[-1]: int(n) for s, n in rows}
    out: dict[str, int] = {}
    for t in trials(study):
        out[t.state.name] = out.get(t.state.name, 0) + 1
    return out


def completion_times(study: optuna.Study) -> list[Any]:
    """``datetime_complete`` of the COMPLETE and PRUNED trials (one column, not whole trials)."""
    backend = getattr(study._storage, "_backend", study._storage)
    if isinstance(backend, RDBStorage):
        import sqlalchemy

        q = sqlalchemy.text(
            "SELECT datetime_complete FROM trials WHERE study_id = :sid "
            "AND state IN ('COMPLETE', 'PRUNED') AND datetime_complete IS NOT NULL"
        )
        with backend.engine.connect() as conn:
            rows = conn.execute(q, {"sid": study._study_id}).all()
        import datetime as _dt

        return [
            r[0] if isinstance(r[0], _dt.datetime) else _dt.datetime.fromisoformat(str(r[0]))
            for r in rows
        ]
    return [
        t.datetime_complete
        for t in trials(study, (TrialState.COMPLETE, TrialState.PRUNED))
        if t.datetime_complete
    ]


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


def owner_record(run_dir: Path, worker_pid: int | None, device: int | None) -> dict[str, Any]:
    """The ``hpo:owner`` system attribute: who runs a trial (read on resume)."""
    import psutil

    return {
        "host": HOST,
        "pid": os.getpid(),
        "ctime": psutil.Process().create_time(),
        "run_dir": str(run_dir),
        "worker_pid": worker_pid,
        "device": device,
    }


@dataclass(frozen=True)
class Orphan:
    """A RUNNING trial whose supervisor is gone; ``why`` says how that is known."""

    number: int
    why: str
    attempt: int
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


class StudyStore:
    """The supervisor's study: every read and write of a run goes through here.

    It keeps the ``optuna.Trial`` of each trial this supervisor asked for until the trial is
    finished, serves the workers' trial calls on them, and finishes trials idempotently.
    """

    def __init__(self, study: optuna.Study, url: str) -> None:
        self.study = study
        self.url = url
        self._live: dict[int, optuna.Trial] = {}
        self._asked = 0
        self._reseeded = False
        self.n_seen = 0

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
    ) -> StudyStore:
        storage = open_storage(url, heartbeat_interval, grace_period)
        return cls(create_or_load_study(storage, name, directions, sampler, pruner), url)

    @classmethod
    def for_config(cls, cfg: Any) -> StudyStore:
        """The study a :class:`~hpo.config.StudyConfig` names, with its sampler and pruner."""
        s, p = cfg.sampler, cfg.pruner
        return cls.open(
            cfg.storage_url,
            cfg.study,
            cfg.study_directions,
            make_sampler(s.name, s.seed, s.kwargs),
            make_pruner(p.name, p.kwargs),
            heartbeat_interval=cfg.heartbeat_interval,
            grace_period=cfg.heartbeat_grace,
        )

    @property
    def name(self) -> str:
        return self.study.study_name

    @property
    def _storage(self) -> Any:
        return self.study._storage

    def set_study_attr(self, key: str, value: Any) -> None:
        self.study.set_user_attr(key, value)

    def record_quarantine(self, device: int, reason: str) -> None:
        """Write ``hpo:quarantine:<gpu>`` on the study; a failure is logged, never raised."""
        try:
            record = {"reason": reason, "time": time.time(), "host": HOST}
            self.study.set_user_attr(f"hpo:quarantine:{device}", record)
        except Exception as exc:
            log.warning("could not record the quarantine in the study: %s", exc)

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
        raise StorageError(f"storage {redact(self.url)}: cannot start a trial: {last}")

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

    def budget_left(self, n_trials: int) -> bool:
        """Whether another trial may start: COMPLETE+PRUNED+RUNNING (anyone's) < n_trials."""
        all_trials = trials(self.study)
        self.n_seen = len(all_trials)
        busy = sum(
            t.state in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING)
            for t in all_trials
        )
        return busy < n_trials

    def n_done(self) -> int:
        return len(trials(self.study, (TrialState.COMPLETE, TrialState.PRUNED)))

    def search_space(self) -> dict[str, BaseDistribution]:
        """The distributions of the most recent finished trial (to ask with fixed distributions)."""
        for t in reversed(trials(self.study, (TrialState.COMPLETE, TrialState.PRUNED))):
            if t.distributions:
                return dict(t.distributions)
        return {}

    # -- the workers' trial calls ----------------------------------------------------------------
    def serve(self, number: int, call: tuple[str, Any, Any]) -> tuple[bool, Any]:
        """Carry out a worker's ``(name, args, kwargs)`` on trial ``number``'s ``optuna.Trial``.

        Only what :data:`hpo.protocol.TRIAL_CALLS` lists is served; the reply is ``(True,
        value)`` or ``(False, encoded exception)`` for the worker to raise.
        """
        name, args, kwargs = call
        try:
            kind = TRIAL_CALLS.get(name)
            if kind is None:
                raise AttributeError(f"hpo: trial method {name!r} is not available in a worker")
            trial = self._live[number]
            if kind is CallKind.READ:
                return True, getattr(trial, name)
            return True, getattr(trial, name)(*args, **kwargs)
        except Exception as exc:
            return False, encode_exception(exc)

    # -- finishing -------------------------------------------------------------------------------
    def finish(
        self,
        number: int,
        result: TrialResult,
        decision: Decision,
        *,
        attempt: int,
        device: int | None,
    ) -> bool:
        """Tag and tell trial ``number`` as ``decision`` says, and queue its retry.

        Idempotent: a trial already finished (by us before a crash, or by someone else) is left
        as it is and False is returned. The runner's attributes never overwrite one the
        objective set itself.
        """
        try:
            return self._finish(number, result, decision, attempt, device)
        except optuna.exceptions.UpdateFinishedTrialError:
            return False
        except StorageError:
            raise
        except Exception as exc:
            if isinstance(exc, optuna.exceptions.StorageInternalError) or type(
                exc
            ).__module__.startswith("sqlalchemy"):
                raise StorageError(
                    f"storage {redact(self.url)} failed while recording trial {number}: "
                    f"{_first_line(exc, self.url)}"
                ) from exc
            raise
        finally:
            self._live.pop(number, None)

    def _finish(
        self, number: int, result: TrialResult, decision: Decision, attempt: int, device: int | None
    ) -> bool:
        trial_id = self._trial_id(number)
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
        tags.update(decision.tags)
        frozen = self._storage.get_trial(trial_id)
        if frozen.state.is_finished():
            return False
        user = frozen.user_attrs
        for key, plain in attrs.COMPAT.items():
            if key in tags and plain != key and plain not in user:
                tags[plain] = tags[key]
        # A key the objective set itself is the objective's (only un-namespaced keys can clash).
        tags = (
            {k: v for k, v in tags.items() if k.startswith(attrs.PREFIX) or k not in user}
            if attrs.PREFIX
            else tags
        )
        self._set_user_attrs(trial_id, tags)
        complete = decision.state == TrialState.COMPLETE
        self.study.tell(
            self._live.get(number, number),
            values=list(result.values) if complete and result.values else None,
            state=decision.state,
            skip_if_finished=True,
        )
        if decision.retry:
            self._enqueue_retry(self._storage.get_trial(trial_id), attempt + 1, result)
        return True

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

    def _enqueue_retry(self, original: FrozenTrial, attempt: int, result: TrialResult) -> None:
        """Queue the original's parameters as a WAITING trial linked to it (Optuna's keys too)."""
        history = [*original.system_attrs.get(attrs.RETRY_HISTORY, []), original.number]
        system_attrs = {
            attrs.FAILED_TRIAL: original.system_attrs.get(attrs.FAILED_TRIAL, original.number),
            attrs.RETRY_HISTORY: history,
        }
        if "fixed_params" in original.system_attrs:
            system_attrs["fixed_params"] = original.system_attrs["fixed_params"]
        reason = result.failure_class.value if result.failure_class else "unknown"
        self.study.add_trial(
            optuna.create_trial(
                state=TrialState.WAITING,
                params=original.params,
                distributions=original.distributions,
                user_attrs={
                    attrs.RETRY_OF: original.number,
                    attrs.ATTEMPT: attempt,
                    attrs.RETRY_REASON: reason,
                },
                system_attrs=system_attrs,
            )
        )

    # -- orphans ---------------------------------------------------------------------------------
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
            attempt = int(t.user_attrs.get(attrs.ATTEMPT, 1))
            found.append(Orphan(t.number, why, attempt, age, owner))
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
