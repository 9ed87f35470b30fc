"""The only package that talks to Optuna storages: open, create/load, ask, claim, heartbeat,
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

import warnings

import optuna

from hpo.storage.connect import (
    create_or_load_study,
    describe_storage_error,
    is_connection_lost,
    load_study,
    open_storage,
    redact,
)
from hpo.storage.queries import (
    HOST,
    OWNER_KEY,
    QUARANTINE_PREFIX,
    completion_times,
    lift_quarantine,
    owner_run_dir,
    quarantine_key,
    quarantines,
    state_counts,
    trial_by_number,
    trials,
    trials_uncached,
)
from hpo.storage.store import NO_EVIDENCE_S, Asked, Orphan, StudyStore, owner_record

warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)

__all__ = [
    "HOST",
    "NO_EVIDENCE_S",
    "OWNER_KEY",
    "QUARANTINE_PREFIX",
    "Asked",
    "Orphan",
    "StudyStore",
    "completion_times",
    "create_or_load_study",
    "describe_storage_error",
    "is_connection_lost",
    "lift_quarantine",
    "load_study",
    "open_storage",
    "owner_record",
    "owner_run_dir",
    "quarantine_key",
    "quarantines",
    "redact",
    "state_counts",
    "trial_by_number",
    "trials",
    "trials_uncached",
]
