"""A joblib objective side by side: plain Optuna ``study.optimize(n_jobs=1)`` against ``hpo run``
with 1 and 2 workers, on the same trials.

The objective is Optuna's ``sklearn_simple`` example (``tests/examples/sklearn_cv.py``:
``cross_val_score(..., n_jobs=-1)`` on iris, so every trial uses joblib's reusable loky pool).
Same TPE seed and trial count everywhere; each repeat runs the three configurations once, in a
rotated order, so drift of a shared machine hits all alike. Per configuration and repeat:

* ``wall_s``: the whole command, launch to exit (imports, study creation, worker and pool
  start included): what a user waits for. Plain Optuna runs as ``python -c`` with a SQLite
  storage (hpo always has one).
* ``study_s``: the study alone: ``study.optimize`` for Optuna; first trial started to last
  result recorded for hpo (start-up excluded).
* ``failed``: FAIL trials (false failures: the objective never fails on its own).

Ratios (hpo / Optuna) are taken within each repeat, then summarised over repeats.

Usage: python bench/joblib_side_by_side.py [--quick] [--repeats N] [--trials N]
(also a section of ``bench/run_all.py``: ``--only joblib``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common  # noqa: E402

OBJECTIVE = common.ROOT / "tests" / "examples" / "sklearn_cv.py"
N_TRIALS = 20
SEED = 1

_PLAIN = """
import json, sys, time
t0 = time.perf_counter()
import optuna
sys.path.insert(0, sys.argv[1])
from sklearn_cv import objective
optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.create_study(storage=sys.argv[2], study_name="bench", direction="maximize",
                            sampler=optuna.samplers.TPESampler(seed=int(sys.argv[3])))
t1 = time.perf_counter()
study.optimize(objective, n_trials=int(sys.argv[4]), n_jobs=1)
t2 = time.perf_counter()
states = [t.state.name for t in study.get_trials(deepcopy=False)]
print(json.dumps({"study_s": t2 - t1, "complete": states.count("COMPLETE"),
                  "failed": states.count("FAIL")}))
"""

CONFIGS: dict[str, dict[str, Any]] = {
    "optuna_1": {"kind": "optuna"},
    "hpo_1": {"kind": "hpo", "workers": 1},
    "hpo_2": {"kind": "hpo", "workers": 2},
}


def _run_optuna(n: int, rep: int) -> dict[str, Any]:
    where = common.scratch(f"joblib/optuna-{rep}")
    url = common.sqlite_url(where / "study.db")
    t = time.time()
    rc, out, err = common.run_python(
        ["-c", _PLAIN, str(OBJECTIVE.parent), url, str(SEED), str(n)], timeout_s=600
    )
    wall = time.time() - t
    res = common.last_json_line(out)
    if rc != 0 or res is None:
        return {"rc": rc, "error": (err.strip().splitlines() or ["no output"])[-1][:300]}
    return {"rc": 0, "wall_s": wall, **res}


def _run_hpo(workers: int, n: int, rep: int) -> dict[str, Any]:
    where = common.scratch(f"joblib/hpo{workers}-{rep}")
    cfg = {
        "objective": f"{OBJECTIVE}:objective",
        "storage": common.sqlite_url(where / "study.db"),
        "n_trials": n,
        "workers": workers,
        "direction": "maximize",
        "sampler": {"name": "tpe", "seed": SEED},
    }
    run = common.run_hpo(cfg, where, timeout_s=600)
    out: dict[str, Any] = {
        "rc": run.rc,
        "wall_s": run.wall_s,
        "study_s": run.span_s,
        "complete": len(run.completed),
        "failed": len(run.failed),
        "worker_recycles": sum(1 for e in run.events if e.get("event") == "worker_recycled"),
    }
    if run.rc != 0:
        out["error"] = run.describe_failure()
    return out


def run(quick: bool, repeats: int | None = None, trials: int | None = None) -> dict[str, Any]:
    n = trials or (8 if quick else N_TRIALS)
    reps = repeats or (1 if quick else 3)
    names = list(CONFIGS)
    raw: dict[str, list[dict[str, Any]]] = {k: [] for k in names}
    for rep in common.repeats(reps, "joblib"):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            c = CONFIGS[name]
            res = _run_optuna(n, rep) if c["kind"] == "optuna" else _run_hpo(c["workers"], n, rep)
            raw[name].append(res)
            print(f"joblib: repeat {rep} {name}: {json.dumps(res)}", file=sys.stderr, flush=True)
    result: dict[str, Any] = {"trials": n, "seed": SEED, "configs": {}, "ratios": {}}
    for name in names:
        runs = raw[name]
        entry: dict[str, Any] = {"repeats": len(runs)}
        for key in ("wall_s", "study_s", "failed", "complete"):
            entry[key] = common.summary([r.get(key) for r in runs], digits=2)
        errors = [r["error"] for r in runs if r.get("error")]
        if errors:
            entry["errors"] = errors
        result["configs"][name] = entry
    for hpo_name in ("hpo_1", "hpo_2"):
        pairs = list(zip(raw[hpo_name], raw["optuna_1"], strict=False))
        for key in ("wall_s", "study_s"):
            result["ratios"][f"{hpo_name}/optuna_1 {key}"] = common.summary(
                [common.ratio(a.get(key), b.get(key)) for a, b in pairs], digits=2
            )
    result["raw"] = raw
    return result


def headline(section: dict[str, Any]) -> dict[str, Any]:
    r = section["ratios"]
    return {
        "joblib_hpo1_vs_optuna_wall": r["hpo_1/optuna_1 wall_s"],
        "joblib_hpo2_vs_optuna_wall": r["hpo_2/optuna_1 wall_s"],
        "joblib_false_failures": section["configs"]["hpo_1"]["failed"]["max"],
    }


def table(section: dict[str, Any]) -> str:
    """The figures as a Markdown table (medians, min-max over repeats)."""

    def cell(s: dict[str, Any]) -> str:
        if not s or s.get("median") is None:
            return "n/a"
        return f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f})"

    lines = [
        f"{section['trials']} trials, TPE seed {section['seed']}; median (min-max) of "
        f"{section['configs']['optuna_1']['repeats']} alternating repeats",
        "",
        "| configuration | wall s | study s | FAIL trials |",
        "|---|---|---|---|",
    ]
    for name, c in section["configs"].items():
        lines.append(
            f"| {name} | {cell(c['wall_s'])} | {cell(c['study_s'])} | {cell(c['failed'])} |"
        )
    lines += ["", "| ratio | median (min-max) |", "|---|---|"]
    for name, s in section["ratios"].items():
        lines.append(f"| {name} | {cell(s)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="8 trials, 1 repeat")
    ap.add_argument("--repeats", type=int, help="repeats (default 3; quick 1)")
    ap.add_argument("--trials", type=int, help=f"trials per run (default {N_TRIALS}; quick 8)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    try:
        section = run(args.quick, args.repeats, args.trials)
    finally:
        common.cleanup()
    if args.json:
        args.json.write_text(json.dumps(section, indent=1) + "\n")
    print(table(section))
    return 0


if __name__ == "__main__":
    sys.exit(main())
