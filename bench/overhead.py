"""Overhead per trial: ``hpo run`` (worker reuse / a fresh process per trial, 1 and 4 workers)
beside Optuna's in-process ``study.optimize(n_jobs=...)`` on the same SQLite settings.

All on the null objective (one ``suggest_float``, no work), TPE (the default of both). Each
repeat runs every configuration once, in a rotated order, so slow drift of the machine hits all
alike. Per configuration and repeat:

* ``trials_per_s``: completed trials / (first ``trial_started`` to last result recorded) for
  hpo; trials / ``study.optimize`` wall time for Optuna. Start-up is reported apart
  (``startup_s``: process launch to the first trial running; for Optuna, imports and study
  creation are simply not timed).
* ``overhead_ms``: per trial, from dispatch (``trial_started``) to result recorded
  (``trial_finished``) minus the objective's own ``duration_s`` (events.jsonl, 1 ms resolution);
  median and p90 over the run's trials. This is the supervisor's own share around the objective:
  sending the trial, reading the outcome, tagging and telling. Asking the sampler happens before
  dispatch and serving ``suggest_*`` happens inside the objective's duration, so neither is in it;
  ``trials_per_s`` includes everything.

A fresh process per trial is ``recycle_every: 1``. Its trial count is capped at 25 per worker:
the supervisor counts planned recycles against its restart budget of 30 worker starts per slot
per minute and stops the run past it (reported in the results), so a longer run would measure
that stop, not the speed.
"""

from __future__ import annotations

from typing import Any

from bench import common

N_TRIALS = 200
FRESH_PER_SLOT = 25


def _configs(quick: bool) -> dict[str, dict[str, Any]]:
    n = 40 if quick else N_TRIALS
    configs: dict[str, dict[str, Any]] = {
        "hpo_reuse_1": {"kind": "hpo", "workers": 1, "n": n},
        "hpo_reuse_4": {"kind": "hpo", "workers": 4, "n": n},
        "hpo_fresh_1": {"kind": "hpo", "workers": 1, "n": min(n, FRESH_PER_SLOT), "fresh": True},
        "hpo_fresh_4": {
            "kind": "hpo",
            "workers": 4,
            "n": min(n, 4 * FRESH_PER_SLOT),
            "fresh": True,
        },
        "optuna_inprocess_1": {"kind": "optuna", "jobs": 1, "n": n, "storage": "hpo"},
        "optuna_inprocess_4": {"kind": "optuna", "jobs": 4, "n": n, "storage": "hpo"},
    }
    if not quick:
        # Reference only (not a goal): Optuna's default SQLite settings, at ~10 trials/s the
        # slowest configuration, so half the trials and one repeat.
        d = n // 2
        configs["optuna_default_1"] = {"kind": "optuna", "jobs": 1, "n": d, "storage": "default"}
        configs["optuna_default_4"] = {"kind": "optuna", "jobs": 4, "n": d, "storage": "default"}
    return configs


def _run_hpo(name: str, c: dict[str, Any], rep: int) -> dict[str, Any]:
    where = common.scratch(f"overhead/{name}-{rep}")
    cfg: dict[str, Any] = {
        "objective": common.NULL_OBJECTIVE,
        "storage": common.sqlite_url(where / "study.db"),
        "n_trials": c["n"],
        "workers": c["workers"],
    }
    if c.get("fresh"):
        cfg["recycle_every"] = 1
    run = common.run_hpo(cfg, where, timeout_s=180)
    out: dict[str, Any] = {
        "trials": len(run.completed),
        "rc": run.rc,
        "trials_per_s": run.trials_per_s(),
        "trials_per_s_with_startup": len(run.completed) / run.wall_s if run.wall_s else None,
        "startup_s": run.startup_s,
    }
    ov = run.overheads_s()
    out["overhead_ms_p50"] = _ms(common.percentile(ov, 0.5))
    out["overhead_ms_p90"] = _ms(common.percentile(ov, 0.9))
    out["objective_ms_p50"] = _ms(common.percentile(run.durations_s(), 0.5))
    out["worker_boot_ms_p50"] = _ms(common.percentile(run.worker_boots_s(), 0.5))
    if run.rc != 0:
        out["error"] = run.describe_failure()
    return out


def _run_optuna(name: str, c: dict[str, Any], rep: int) -> dict[str, Any]:
    where = common.scratch(f"overhead/{name}-{rep}")
    url = common.sqlite_url(where / "study.db")
    script = str(common.BENCH / "optuna_inprocess.py")
    rc, out, err = common.run_python(
        [script, url, str(c["n"]), str(c["jobs"]), c["storage"]], timeout_s=240
    )
    res = common.last_json_line(out)
    if rc != 0 or res is None:
        return {"rc": rc, "error": (err.strip().splitlines() or ["no output"])[-1][:300]}
    return {"rc": 0, **res}


def _ms(v: float | None) -> float | None:
    return round(v * 1000, 1) if v is not None else None


def run(quick: bool) -> dict[str, Any]:
    configs = _configs(quick)
    repeats = 1 if quick else 3
    names = list(configs)
    raw: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for rep in common.repeats(repeats, "overhead"):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        for name in order:
            c = configs[name]
            if c["kind"] == "optuna" and c["storage"] == "default" and rep > 0:
                continue  # reference only: one repeat (it is the slowest and not a goal)
            fn = _run_hpo if c["kind"] == "hpo" else _run_optuna
            raw[name].append(fn(name, c, rep))
    result: dict[str, Any] = {"trials": {n: c["n"] for n, c in configs.items()}, "configs": {}}
    for name in names:
        runs = raw[name]
        entry: dict[str, Any] = {"repeats": len(runs)}
        for key in (
            "trials_per_s",
            "trials_per_s_with_startup",
            "startup_s",
            "overhead_ms_p50",
            "overhead_ms_p90",
            "objective_ms_p50",
            "worker_boot_ms_p50",
        ):
            vals = [r.get(key) for r in runs]
            if any(v is not None for v in vals):
                entry[key] = common.summary(vals)
        errors = [r["error"] for r in runs if r.get("error")]
        if errors:
            entry["errors"] = errors
        result["configs"][name] = entry
    # Ratios within each repeat (side by side), then min/median/max over repeats.
    ratios: dict[str, Any] = {}
    for a, b in (
        ("hpo_reuse_4", "optuna_inprocess_4"),
        ("hpo_reuse_1", "optuna_inprocess_1"),
        ("hpo_fresh_4", "optuna_inprocess_4"),
        ("hpo_reuse_4", "optuna_default_4"),
    ):
        if not raw.get(a) or not raw.get(b):
            continue
        pairs = list(zip(raw[a], raw[b], strict=False))
        ratios[f"{a}/{b}"] = common.summary(
            [common.ratio(x.get("trials_per_s"), y.get("trials_per_s")) for x, y in pairs]
        )
    result["ratios"] = ratios
    result["raw"] = raw
    return result


def headline(section: dict[str, Any]) -> dict[str, Any]:
    """The top-level keys of latest.json that this section provides."""
    cfg = section["configs"]

    def med(name: str, key: str) -> float | None:
        return (cfg.get(name, {}).get(key) or {}).get("median")

    tps = {
        n: med(n, "trials_per_s")
        for n in (
            "hpo_reuse_1",
            "hpo_reuse_4",
            "hpo_fresh_1",
            "hpo_fresh_4",
            "optuna_inprocess_1",
            "optuna_inprocess_4",
            "optuna_default_1",
            "optuna_default_4",
        )
    }
    return {
        "overhead_ms_p50": med("hpo_reuse_4", "overhead_ms_p50"),
        "overhead_ms_p90": med("hpo_reuse_4", "overhead_ms_p90"),
        "overhead_ms_p50_1_worker": med("hpo_reuse_1", "overhead_ms_p50"),
        "trials_per_s": {k: round(v, 2) if v is not None else None for k, v in tps.items()},
        "hpo_vs_optuna_4": section["ratios"]["hpo_reuse_4/optuna_inprocess_4"],
    }
