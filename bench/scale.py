"""Scale: the supervisor's time per trial at trials 0-100 versus 4900-5000 of a SQLite study.

For each sampler (TPE, hpo's default; RandomSampler, whose own cost does not grow with history,
so what grows is storage and supervisor cost) and each repeat, side by side:

* ``first``: ``hpo run`` of 100 null-objective trials on a fresh study;
* ``last``: the same on a copy of a study pre-populated with 4900 finished trials (built in bulk,
  see ``common.build_study``; a realistic mix with ~6% FAIL and ~4% PRUNED trials carrying hpo's
  tags), so the run covers trial numbers 4900-4999.

Both with 1 worker, so that the gap between consecutive results recorded is the whole cost of
one trial (ask, dispatch, serving ``suggest_float``, tell, tags; the objective itself does
nothing): ``ms_per_trial`` is its mean over the run without the top and bottom 10% (robust to
the worker recycle every 50 trials, finer than the event log's 1 ms resolution).
``overhead_ms`` (dispatch to recorded minus the objective's duration, as in the overhead
section) is reported beside it. The ratio ``last / first`` is taken within each repeat.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import common

N_RUN = 100  # trials per run (--quick: 50)


def _one(
    sampler: str, template: Path | None, done_before: int, n_run: int, tag: str
) -> dict[str, Any]:
    where = common.scratch(f"scale/{tag}")
    db = where / "study.db"
    if template is not None:
        common.copy_db(template, db)
    cfg = {
        "objective": common.NULL_OBJECTIVE,
        "storage": common.sqlite_url(db),
        "n_trials": done_before + n_run,
        "workers": 1,
        "sampler": {"name": sampler},
    }
    run = common.run_hpo(cfg, where, timeout_s=240)
    numbers = sorted(int(e["trial"]) for e in run.finished)
    out: dict[str, Any] = {
        "rc": run.rc,
        "trials": len(run.completed),
        "trial_numbers": [numbers[0], numbers[-1]] if numbers else None,
        "ms_per_trial": _ms(common.trimmed_mean(run.cycles_s())),
        "overhead_ms": _ms(common.percentile(run.overheads_s(), 0.5)),
        "objective_ms": _ms(common.percentile(run.durations_s(), 0.5)),
        "startup_s": run.startup_s,
    }
    if run.rc != 0:
        out["error"] = run.describe_failure()
    return out


def _ms(v: float | None) -> float | None:
    return round(v * 1000, 2) if v is not None else None


def run(quick: bool) -> dict[str, Any]:
    n_run = 50 if quick else N_RUN
    n_before = 1000 - n_run if quick else 5000 - N_RUN
    repeats = 1 if quick else 3
    template, built = common.template(n_before)
    done_before = _done(template)
    out: dict[str, Any] = {
        "study_trials": n_before + n_run,
        "trials_per_run": n_run,
        "template": built,
        "template_complete_or_pruned": done_before,
        "samplers": {},
    }
    samplers = ("tpe", "random")
    firsts: dict[str, list[dict[str, Any]]] = {k: [] for k in samplers}
    lasts: dict[str, list[dict[str, Any]]] = {k: [] for k in samplers}
    for rep in common.repeats(repeats, "scale"):
        for sampler in samplers:
            # Alternate which of the pair goes first, so drift does not favour one side.
            pair = [("first", None, 0), ("last", template, done_before)]
            if rep % 2:
                pair.reverse()
            res = {}
            for label, tpl, before in pair:
                res[label] = _one(sampler, tpl, before, n_run, f"{sampler}-{label}-{rep}")
            firsts[sampler].append(res["first"])
            lasts[sampler].append(res["last"])
    for sampler in samplers:
        f, la = firsts[sampler], lasts[sampler]
        ratios = [
            common.ratio(b.get("ms_per_trial"), a.get("ms_per_trial"))
            for a, b in zip(f, la, strict=False)
        ]
        out["samplers"][sampler] = {
            "first_ms_per_trial": common.summary([r.get("ms_per_trial") for r in f], 2),
            "last_ms_per_trial": common.summary([r.get("ms_per_trial") for r in la], 2),
            "first_overhead_ms": common.summary([r.get("overhead_ms") for r in f], 2),
            "last_overhead_ms": common.summary([r.get("overhead_ms") for r in la], 2),
            "first_objective_ms": common.summary([r.get("objective_ms") for r in f], 2),
            "last_objective_ms": common.summary([r.get("objective_ms") for r in la], 2),
            "ratio": common.summary(ratios),
            "raw": {"first": f, "last": la},
        }
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


def headline(section: dict[str, Any]) -> dict[str, Any]:
    s = section["samplers"]
    return {
        "scale_ratio_5000_vs_100": {k: v["ratio"]["median"] for k, v in s.items()},
        "scale_study_trials": section["study_trials"],
    }
