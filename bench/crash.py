"""Crash cost: completed trials per hour with 20% of trials hard-crashing at their start, versus
none.

The objective is ``hpo.testing.objectives:fault_objective`` with ``sleep_s: 0.2`` (a suggest, a
user attr, a report, then 0.2 s of waiting: a realistic fixed time that does not compete for
the 2 cores), 4 workers. The crashing runs use hpo's own chaos mode: ``chaos: 0.2`` with
``chaos_faults: [sigsegv, cuda_illegal_access]``: a real segmentation fault (the worker dies by
SIGSEGV) or the CUDA illegal-address error (a sticky error: the worker is replaced after it).
The runner injects the fault either before the objective starts (half of the picks) or 0-50 ms
into it (a timer), so a crashing trial loses at most ~50 ms of objective time; what it costs is
the supervisor's handling and the replacement worker. Both classes are retried once (hpo's
default policy); a retry may crash again (then it is pruned).

``completed_per_hour`` = COMPLETE trials / (first trial started to last result recorded).
``crash_kept_ratio`` = rate with crashes / (0.8 x rate without), within each repeat (the
formula of issue 8: a crash that cost nothing beyond its own trial would give 1/0.8 = 1.25 when
the crash happens at the start, as here). ``raw_kept_ratio`` = rate with / rate without, and
``cost_per_crash_s`` = worker-seconds lost per crash beyond the crash-free cost of a trial.
"""

from __future__ import annotations

from typing import Any

from bench import common

OBJECTIVE = "hpo.testing.objectives:fault_objective"
WORKERS = 4
SLEEP_S = 0.2
RATE = 0.2
FAULTS = ["sigsegv", "cuda_illegal_access"]


def _one(n: int, chaos: float, seed: int, tag: str) -> dict[str, Any]:
    where = common.scratch(f"crash/{tag}")
    cfg: dict[str, Any] = {
        "objective": OBJECTIVE,
        "objective_kwargs": {"sleep_s": SLEEP_S},
        "storage": common.sqlite_url(where / "study.db"),
        "n_trials": n,
        "workers": WORKERS,
        "max_consecutive_failures": 1000,
        "max_failed_trials": 10 * n,
        "chaos_seed": seed,
    }
    if chaos:
        cfg["chaos"] = chaos
        cfg["chaos_faults"] = FAULTS
    run = common.run_hpo(cfg, where, timeout_s=240)
    span = run.span_s
    completed = len(run.completed)
    crashes = [e for e in run.failed if e.get("fault")]
    out: dict[str, Any] = {
        "rc": run.rc,
        "completed": completed,
        "pruned": sum(1 for e in run.finished if e.get("state") == "PRUNED")
        + sum(1 for e in run.failed if e.get("state") == "PRUNED"),
        "crashes": len(crashes),
        "crash_classes": sorted({str(e.get("failure_class")) for e in crashes}),
        "trials_started": len(run.started),
        "span_s": span,
        "completed_per_hour": completed / span * 3600 if span else None,
        "worker_starts": len(run.worker_boots_s()),
        "worker_boot_ms_p50": _ms(common.percentile(run.worker_boots_s(), 0.5)),
    }
    if run.rc != 0:
        out["error"] = run.describe_failure()
    return out


def _ms(v: float | None) -> float | None:
    return round(v * 1000, 1) if v is not None else None


def run(quick: bool) -> dict[str, Any]:
    n = 40 if quick else 120
    repeats = 1 if quick else 3
    clean, crashy = [], []
    for rep in common.repeats(repeats, "crash"):
        pair = [("none", 0.0), ("crash", RATE)]
        if rep % 2:
            pair.reverse()
        res = {label: _one(n, rate, rep, f"{label}-{rep}") for label, rate in pair}
        clean.append(res["none"])
        crashy.append(res["crash"])
    kept, raw_kept, cost = [], [], []
    for a, b in zip(clean, crashy, strict=False):
        ra, rb = a.get("completed_per_hour"), b.get("completed_per_hour")
        kept.append(common.ratio(rb, 0.8 * ra if ra else None))
        raw_kept.append(common.ratio(rb, ra))
        if a.get("span_s") and b.get("span_s") and a["completed"] and b["crashes"]:
            per_trial = a["span_s"] * WORKERS / a["completed"]
            lost = b["span_s"] * WORKERS - b["completed"] * per_trial
            cost.append(lost / b["crashes"])
    return {
        "trials": n,
        "workers": WORKERS,
        "objective_sleep_s": SLEEP_S,
        "chaos": RATE,
        "chaos_faults": FAULTS,
        "injection": "before the objective (half) or 0-50 ms into it (half), by hpo's chaos",
        "completed_per_hour_none": common.summary([r.get("completed_per_hour") for r in clean], 1),
        "completed_per_hour_crash": common.summary(
            [r.get("completed_per_hour") for r in crashy], 1
        ),
        "crashes": common.summary([r.get("crashes") for r in crashy], 0),
        "crash_kept_ratio": common.summary(kept),
        "raw_kept_ratio": common.summary(raw_kept),
        "cost_per_crash_s": common.summary(cost),
        "worker_boot_ms_p50": common.summary([r.get("worker_boot_ms_p50") for r in crashy], 1),
        "raw": {"none": clean, "crash": crashy},
    }


def headline(section: dict[str, Any]) -> dict[str, Any]:
    return {"crash_kept_ratio": section["crash_kept_ratio"]["median"]}
