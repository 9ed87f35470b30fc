"""Recover trials left RUNNING by a dead supervisor (ours on this host, or anyone's, by heartbeat).

A trial is orphaned when its heartbeat is stale (Optuna's own query over the heartbeat table) or,
on this host, when the supervisor recorded as its owner is no longer alive, so a restart need not
wait for the grace period. For each orphan: if its worker recorded an outcome before the supervisor
died, the trial is finished with that outcome; otherwise it is tagged ``supervisor_lost``, failed,
and its parameters retried (policy permitting). COMPLETE and PRUNED trials are never touched.
"""

from __future__ import annotations

import datetime
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from optuna.trial import TrialState

from hpo import storage as st
from hpo.child import TrialSpec
from hpo.failures import FailureClass, diagnosis_for
from hpo.outcome import Outcome, Status
from hpo.process import pid_alive

if TYPE_CHECKING:
    from hpo.supervisor import Supervisor

log = logging.getLogger(__name__)
NO_EVIDENCE_S = 60.0


def _owner_dead(owner: dict[str, Any] | None) -> bool:
    if not owner or owner.get("host") != st.HOST:
        return False
    return not pid_alive(int(owner.get("pid", -1)), owner.get("ctime"))


def _age_s(started: datetime.datetime | None) -> float:
    """Seconds since ``started`` (Optuna 5 stores RDB timestamps as naive UTC)."""
    if started is None:
        return 0.0
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    return max(0.0, (now - started.replace(tzinfo=None)).total_seconds())


def _never_owned(sup: Supervisor, t: Any, owner: dict[str, Any] | None) -> bool:
    """A supervisor died inside ``study.ask()``: the trial has neither an owner nor a heartbeat.

    An hpo supervisor records a heartbeat within milliseconds of asking, so after
    ``NO_EVIDENCE_S`` such a trial is an orphan. (A plain ``study.optimize`` without heartbeats
    sharing the study would look the same: do not mix the two on one study.)
    """
    if owner is not None or _age_s(t.datetime_start) < max(
        NO_EVIDENCE_S, 3 * sup.cfg.heartbeat_grace
    ):
        return False
    return not st.has_heartbeat(sup.study, t._trial_id)


def reconcile(sup: Supervisor) -> int:
    """Finish or fail every orphaned RUNNING trial of the study; returns how many."""
    from hpo.supervisor import Running

    study = sup.study
    stale = set(st.stale_trial_ids(study))
    recovered = 0
    me = os.getpid()
    for t in st.trials_uncached(study, (TrialState.RUNNING,)):
        owner = t.system_attrs.get(st.OWNER_KEY)
        if owner and owner.get("host") == st.HOST and owner.get("pid") == me:
            continue  # ours: alive by definition
        if t._trial_id not in stale and not _owner_dead(owner) and not _never_owned(sup, t, owner):
            continue
        run_dir = Path(owner["run_dir"]) if owner and owner.get("host") == st.HOST else None
        log_path = str(run_dir / "logs" / f"trial-{t.number:06d}.log") if run_dir else ""
        spec = TrialSpec(
            number=t.number,
            trial_id=t._trial_id,
            n_objectives=sup.n_objectives,
            log_path=log_path,
            outcome_path="",
        )
        run = Running(
            trial=None,
            spec=spec,
            attempt=int(t.user_attrs.get("attempt", 1)),
            started=time.monotonic(),
            device=(owner or {}).get("device"),
        )
        outcome = (
            Outcome.read(run_dir / "outcomes" / f"trial-{t.number:06d}.json") if run_dir else None
        )
        if outcome is not None and outcome.trial_number == t.number:
            sup.record(run, outcome)
            sup.events.emit(
                "trial_recovered", trial=t.number, state=outcome.status.value, how="outcome file"
            )
            log.info(
                "[trial %d] recovered from the outcome its worker recorded (%s)",
                t.number,
                outcome.status.value,
            )
            recovered += 1
            continue
        if t._trial_id in stale:
            why = "heartbeat stale"
        elif owner:
            why = f"supervisor pid {owner.get('pid')} is gone"
        else:
            why = "it died while asking for the trial: no owner, no heartbeat"
        outcome = Outcome(
            trial_number=t.number,
            status=Status.FAILED,
            message=f"the supervisor running this trial died ({why}); the trial was lost",
            worker_pid=int((owner or {}).get("worker_pid") or 0),
            duration_s=_age_s(t.datetime_start),
        )
        diag = diagnosis_for(FailureClass.SUPERVISOR_LOST, summary=outcome.message)
        sup.record(run, outcome, diag=diag)
        sup.events.emit("trial_recovered", trial=t.number, state="FAIL", how=why)
        recovered += 1
    return recovered
