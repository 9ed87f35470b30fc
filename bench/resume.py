"""Resume: from ``hpo run`` start (process launch) to the first trial running, on a SQLite study
that holds 5000 trials, 4 of them left RUNNING by a supervisor that died; and the recovery time
of those 4.

The study is a copy of a 4996-trial study (see ``common.build_study``) plus 4 RUNNING trials as
a dead supervisor on this host leaves them: a parameter suggested, a recent heartbeat, the
``hpo:owner`` system attr naming this host, a pid that has exited and the run folder; for one of
them the worker had recorded its outcome file just before the supervisor died (so it must be
told with that outcome, the others failed as ``supervisor_lost`` and retried). ``hpo run`` is
then started on the same run folder with 4 workers and a target a few trials above what the
study holds.

Reported per repeat (side by side with the same ``hpo run`` on an empty study):
``first_trial_s`` (launch to the first ``trial_started`` event), ``recovered_s`` (launch to
the last ``trial_recovered`` event: all 4 orphans finished in the storage), ``retries_done_s``
(launch to the last retry of an orphan recorded), ``fresh_first_trial_s`` (the empty study's
launch to first trial).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench import common

ORPHANS = 4


def _make_orphans(db: Path, run_dir: Path) -> list[int]:
    import optuna
    from optuna.distributions import FloatDistribution

    from hpo import attrs
    from hpo import storage as st
    from hpo.outcome import Outcome, Status

    storage = st.open_storage(common.sqlite_url(db), heartbeat_interval=2, grace_period=10)
    study = optuna.load_study(study_name=common.STUDY, storage=storage)
    dist = FloatDistribution(-10.0, 10.0)
    pid = common.dead_pid()
    (run_dir / "outcomes").mkdir(parents=True, exist_ok=True)
    numbers = []
    for k in range(ORPHANS):
        tid = storage.create_new_trial(study._study_id)
        x = -5.0 + k
        storage.set_trial_param(tid, "x", dist.to_internal_repr(x), dist)
        storage.set_trial_user_attr(tid, attrs.ATTEMPT, 1)
        storage.set_trial_system_attr(
            tid,
            st.OWNER_KEY,
            {
                "host": st.HOST,
                "pid": pid,
                "ctime": time.time() - 600,
                "run_dir": str(run_dir),
                "worker_pid": pid,
                "device": None,
            },
        )
        storage.record_heartbeat(tid)
        number = storage.get_trial_number_from_id(tid)
        numbers.append(number)
        if k == 0:  # its worker recorded the outcome, then the supervisor died
            Outcome(
                trial_number=number, status=Status.COMPLETE, values=[x], duration_s=1.0
            ).write_atomic(run_dir / "outcomes" / f"trial-{number:06d}.json")
    storage.engine.dispose()
    return numbers


def _one(template: Path, done_before: int, rep: int) -> dict[str, Any]:
    where = common.scratch(f"resume/{rep}")
    db = common.copy_db(template, where / "study.db")
    run_dir = where / "run"
    orphans = _make_orphans(db, run_dir)
    cfg = {
        "objective": common.NULL_OBJECTIVE,
        "storage": common.sqlite_url(db),
        "run_dir": str(run_dir),
        # the recovered outcome + 3 retries + 4 new trials
        "n_trials": done_before + 1 + (ORPHANS - 1) + 4,
        "workers": 4,
    }
    run = common.run_hpo(cfg, where, timeout_s=120)
    recovered = [e for e in run.events if e.get("event") == "trial_recovered"]
    out: dict[str, Any] = {
        "rc": run.rc,
        "orphans": len(orphans),
        "recovered": len(recovered),
        "recovered_how": sorted({str(e.get("how")) for e in recovered}),
        "first_trial_s": run.startup_s,
        "recovered_s": max(float(e["ts"]) for e in recovered) - run.launch_ts
        if recovered
        else None,
        "wall_s": run.wall_s,
    }
    retries = _retry_numbers(db, set(orphans))
    ends = [float(e["ts"]) for e in run.finished + run.failed if int(e["trial"]) in retries]
    out["retries"] = len(retries)
    out["retries_done_s"] = max(ends) - run.launch_ts if ends else None
    if run.rc != 0:
        out["error"] = run.describe_failure()
    fresh = common.scratch(f"resume/fresh-{rep}")
    frun = common.run_hpo(
        {
            "objective": common.NULL_OBJECTIVE,
            "storage": common.sqlite_url(fresh / "study.db"),
            "n_trials": 8,
            "workers": 4,
        },
        fresh,
        timeout_s=120,
    )
    out["fresh_first_trial_s"] = frun.startup_s
    return out


def _retry_numbers(db: Path, originals: set[int]) -> set[int]:
    import optuna

    from hpo.storage import open_storage

    storage = open_storage(common.sqlite_url(db))
    study = optuna.load_study(study_name=common.STUDY, storage=storage)
    out = {
        t.number
        for t in study.get_trials(deepcopy=False)
        if t.user_attrs.get("hpo:retry_of") in originals
    }
    storage.engine.dispose()
    return out


def _done(db: Path) -> int:
    import optuna
    from optuna.trial import TrialState

    from hpo.storage import open_storage

    storage = open_storage(common.sqlite_url(db))
    study = optuna.load_study(study_name=common.STUDY, storage=storage)
    n = len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)))
    storage.engine.dispose()
    return n


def run(quick: bool) -> dict[str, Any]:
    n = (1000 if quick else 5000) - ORPHANS
    repeats = 1 if quick else 3
    template, built = common.template(n)
    done_before = _done(template)
    runs = [_one(template, done_before, rep) for rep in common.repeats(repeats, "resume")]
    return {
        "study_trials": n + ORPHANS,
        "orphans": ORPHANS,
        "template": built,
        "first_trial_s": common.summary([r.get("first_trial_s") for r in runs]),
        "recovered_s": common.summary([r.get("recovered_s") for r in runs]),
        "retries_done_s": common.summary([r.get("retries_done_s") for r in runs]),
        "fresh_first_trial_s": common.summary([r.get("fresh_first_trial_s") for r in runs]),
        "raw": runs,
    }


def headline(section: dict[str, Any]) -> dict[str, Any]:
    return {
        "resume_first_trial_s": section["first_trial_s"]["median"],
        "resume_recovery_s": section["recovered_s"]["median"],
        "resume_study_trials": section["study_trials"],
    }
