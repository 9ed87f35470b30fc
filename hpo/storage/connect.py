"""Opening Optuna storages for the runner, creating or loading studies, and telling a person
what went wrong with a storage (a full disk, a read-only file, a lost server) in one line."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import optuna
from optuna.storages import RDBStorage
from optuna.study import StudyDirection

from hpo.errors import StorageError

log = logging.getLogger("hpo.storage")


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


_FULL = (
    "database or disk is full",
    "sqlite_full",
    "no space left on device",
    "could not extend file",
    "enospc",
    "disk full",
)


_READONLY = (
    "readonly database",
    "read-only file system",
    "sqlite_readonly",
    "read only",
    "permission denied",
)


_LOST = (
    "server closed the connection",
    "connection refused",
    "could not connect",
    "terminating connection",
    "connection is closed",
    "connection timed out",
    "connection reset",
    "ssl syscall",
)


def is_connection_lost(exc: BaseException) -> bool:
    """A database server that went away (an outage worth retrying), not a broken database."""
    text = _chain_text(exc)
    return any(m in text for m in _LOST)


def _causes(exc: BaseException, limit: int = 6) -> list[BaseException]:
    """``exc`` and what it wraps, outermost first: Optuna wraps SQLAlchemy's error, which wraps
    the driver's (``.orig``); the innermost says what is wrong."""
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and len(out) < limit:
        out.append(cur)
        cur = getattr(cur, "orig", None) or cur.__cause__ or cur.__context__
    return out


def _chain_text(exc: BaseException) -> str:
    return " ".join(f"{type(e).__name__}: {e}" for e in _causes(exc)).lower()


def describe_storage_error(exc: BaseException, url: str, doing: str) -> str:
    """One line for a person: what happened to the storage, where, and what to do."""
    text = _chain_text(exc)
    path = _sqlite_path(url)
    where = f"{path}" if path else redact(url)
    if any(m in text for m in _FULL):
        free = ""
        if path is not None:
            with contextlib.suppress(OSError):
                free = f", {shutil.disk_usage(path.parent).free / 2**20:.1f} MB free"
        return (
            f"the disk holding the storage {where} is full{free}: cannot {doing}. Free space, then "
            "run the same command again: trials left RUNNING and the results their workers "
            "recorded are recovered"
        )
    if any(m in text for m in _READONLY):
        return f"the storage {where} cannot be written (read-only): cannot {doing}"
    if any(m in text for m in _LOST):
        return f"lost the connection to the storage {where} for too long: cannot {doing}"
    return f"storage {redact(url)} failed: cannot {doing}: {_first_line(exc, url)}"


def _is_storage_error(exc: BaseException) -> bool:
    return isinstance(exc, optuna.exceptions.StorageInternalError | OSError) or type(
        exc
    ).__module__.startswith(("sqlalchemy", "sqlite3", "psycopg", "pymysql"))


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
    exc = _causes(exc)[-1]  # the innermost: "attempt to write a readonly database"
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
