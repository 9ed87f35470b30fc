"""Read-only queries of a study for the operator's commands (status, failures, report,
quarantine), cheap on large studies; and the study's quarantine records."""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import optuna
from optuna.storages import RDBStorage
from optuna.trial import FrozenTrial, TrialState

from hpo import attrs
from hpo.errors import ConfigError

OWNER_KEY = attrs.OWNER  # system attr: which supervisor runs the trial (host, pid, ctime, run dir)


HOST = socket.gethostname()


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


def owner_run_dir(trials: Sequence[FrozenTrial]) -> Path | None:
    """The run folder of the latest of ``trials`` that a supervisor on this host ran (its
    ``hpo:owner`` record), if that folder still exists: where a study's logs and events are."""
    for t in sorted(trials, key=lambda t: -t.number):
        owner = t.system_attrs.get(OWNER_KEY)
        if isinstance(owner, dict) and owner.get("host") == HOST and owner.get("run_dir"):
            return Path(owner["run_dir"]) if Path(owner["run_dir"]).is_dir() else None
    return None


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


# -- quarantined GPUs, recorded on the study -----------------------------------------------------
QUARANTINE_PREFIX = "hpo:quarantine:"


def quarantine_key(host: str, device: int, uuid: str | None) -> str:
    """``hpo:quarantine:<host>:<uuid>``: a GPU is the same GPU by its UUID, not its index."""
    return f"{QUARANTINE_PREFIX}{host}:{uuid or f'index-{device}'}"


def quarantines(
    study: optuna.Study,
    host: str | None = None,
    expires_s: float | None = None,
    lifted: bool = False,
) -> list[dict[str, Any]]:
    """Active quarantine records (``key`` included), oldest first; ``host`` None: every host;
    ``lifted``: the lifted ones too (a report's history)."""
    now = time.time()
    out = []
    for key, rec in study.user_attrs.items():
        if not key.startswith(QUARANTINE_PREFIX) or not isinstance(rec, dict):
            continue
        if (rec.get("lifted") and not lifted) or (host is not None and rec.get("host") != host):
            continue
        if expires_s is not None and now - float(rec.get("time", now)) > expires_s:
            continue
        out.append({**rec, "key": key})
    return sorted(out, key=lambda r: float(r.get("time", 0)))


def lift_quarantine(
    study: optuna.Study, which: str, host: str | None = None
) -> list[dict[str, Any]]:
    """Lift the active quarantines of GPU ``which`` (an index, a UUID, or ``all``); returns them.

    ConfigError when none matches, naming what is quarantined.
    """
    active = quarantines(study, host=host)
    hit = [
        r for r in active if which == "all" or which == str(r.get("gpu")) or which == r.get("uuid")
    ]
    if not hit:
        held = ", ".join(f"GPU {r.get('gpu')} on {r.get('host')}" for r in active) or "none"
        raise ConfigError(
            f"no quarantine of GPU {which!r} in study {study.study_name!r} (quarantined: {held})"
        )
    for r in hit:
        rec = {k: v for k, v in r.items() if k != "key"}
        study.set_user_attr(r["key"], {**rec, "lifted": time.time()})
    return hit
