"""The only module that talks to Optuna storages: open, create/load, tag, tell, retry, reconcile.

Design notes:
- The supervisor is the single writer of the study on its host; workers never open it. Optuna's
  ``RDBStorage`` (SQLite, PostgreSQL, MySQL) is used with its own heartbeat machinery
  (``heartbeat_interval``/``grace_period`` and ``_get_stale_trial_ids``), the supervisor recording
  the heartbeats of the trials its workers run.
- Tags are written before a trial is finished (finished trials are immutable), several in one
  transaction where the backend allows it.
- Retries use the system attrs of Optuna's ``RetryHeartbeatStaleTrialCallback`` (``failed_trial``,
  ``retry_history``) so ``RetryHeartbeatStaleTrialCallback.retried_trial_number`` works on them,
  plus the user attrs ``retry_of`` and ``attempt``.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.storages import RDBStorage
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from hpo.errors import StorageError

log = logging.getLogger(__name__)

OWNER_KEY = (
    "hpo:owner"  # system attr: which supervisor runs the trial (host, pid, start time, run dir)
)
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


def set_user_attrs(storage: Any, trial_id: int, attrs: Mapping[str, Any]) -> None:
    """Write several user attrs of a RUNNING trial, in one transaction on RDB storages."""
    backend = getattr(storage, "_backend", storage)
    if isinstance(backend, RDBStorage) and hasattr(backend, "_set_trial_attr_without_commit"):
        try:
            from optuna.storages._rdb import models
            from optuna.storages._rdb.storage import _create_scoped_session

            with _create_scoped_session(backend.scoped_session, True) as session:
                for key, value in attrs.items():
                    backend._set_trial_attr_without_commit(
                        session, models.TrialUserAttributeModel, trial_id, key, value
                    )
            return
        except optuna.exceptions.UpdateFinishedTrialError:
            raise
        except Exception as exc:  # private API changed: fall back to the public path
            log.debug("bulk attribute write failed (%s); writing one by one", exc)
    for key, value in attrs.items():
        storage.set_trial_user_attr(trial_id, key, value)


def set_system_attr(storage: Any, trial_id: int, key: str, value: Any) -> None:
    storage.set_trial_system_attr(trial_id, key, value)


def record_heartbeat(storage: Any, trial_id: int) -> None:
    if hasattr(storage, "record_heartbeat") and storage.get_heartbeat_interval() is not None:
        storage.record_heartbeat(trial_id)


def has_heartbeat(study: optuna.Study, trial_id: int) -> bool:
    """Whether the trial ever had a heartbeat recorded (True where this cannot be known)."""
    backend = getattr(study._storage, "_backend", study._storage)
    if not isinstance(backend, RDBStorage):
        return True
    try:
        from optuna.storages._rdb import models
        from optuna.storages._rdb.storage import _create_scoped_session

        with _create_scoped_session(backend.scoped_session) as session:
            return models.TrialHeartbeatModel.where_trial_id(trial_id, session) is not None
    except Exception:
        return True


def stale_trial_ids(study: optuna.Study) -> list[int]:
    """RUNNING trials whose heartbeat is older than the grace period (Optuna's own query)."""
    storage: Any = study._storage
    if not hasattr(storage, "_get_stale_trial_ids") or storage.get_heartbeat_interval() is None:
        return []
    return list(storage._get_stale_trial_ids(study._study_id))


def finish_trial(
    study: optuna.Study,
    trial: optuna.Trial | int,
    state: TrialState,
    values: list[float] | None,
) -> bool:
    """Tell the study; idempotent (a trial someone else finished is left as it is)."""
    try:
        study.tell(
            trial,
            values=values if state == TrialState.COMPLETE else None,
            state=state,
            skip_if_finished=True,
        )
        return True
    except optuna.exceptions.UpdateFinishedTrialError:
        return False


def enqueue_retry(study: optuna.Study, original: FrozenTrial, attempt: int, reason: str) -> None:
    """Queue the original's parameters as a WAITING trial linked to it (Optuna's retry keys too)."""
    history = list(original.system_attrs.get("retry_history", [])) + [original.number]
    system_attrs = {
        "failed_trial": original.system_attrs.get("failed_trial", original.number),
        "retry_history": history,
    }
    if "fixed_params" in original.system_attrs:
        system_attrs["fixed_params"] = original.system_attrs["fixed_params"]
    study.add_trial(
        optuna.create_trial(
            state=TrialState.WAITING,
            params=original.params,
            distributions=original.distributions,
            user_attrs={
                "retry_of": original.number,
                "attempt": attempt,
                "retry_reason": reason,
            },
            system_attrs=system_attrs,
        )
    )


def trials(study: optuna.Study, states: Sequence[TrialState] | None = None) -> list[FrozenTrial]:
    return study._storage.get_all_trials(
        study._study_id, deepcopy=False, states=tuple(states) if states else None
    )


def trial_by_number(study: optuna.Study, number: int) -> FrozenTrial:
    """Trial ``number`` of the study, or a ConfigError saying which numbers exist."""
    from hpo.errors import ConfigError

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


def count(study: optuna.Study, states: Sequence[TrialState]) -> int:
    return len(trials(study, states))


def search_space(study: optuna.Study) -> dict[str, BaseDistribution]:
    """The distributions of the most recent finished trials (for asking with fixed distributions)."""
    for t in reversed(trials(study, (TrialState.COMPLETE, TrialState.PRUNED))):
        if t.distributions:
            return dict(t.distributions)
    return {}
