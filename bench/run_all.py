"""Run the benchmark suite: ``make bench`` (about 8 minutes on 2 cores) or ``--quick`` (~2).

Writes ``bench/results/latest.json`` (every number, the raw repeats included),
``bench/results/latest.md`` (the table) and the generated part of ``docs/benchmarks.md``;
``--quick`` and ``--only`` write ``bench/results/quick.*`` or ``partial.*`` instead.
Each section is a module of ``bench/`` with ``run(quick) -> dict`` and ``headline(dict)``;
they run one after another (never in parallel: they would measure each other), each inside a
time budget: a section that would not fit in what is left is skipped and says so.

Usage: python bench/run_all.py [--quick] [--only overhead,scale,...] [--keep] [--setup-ray]
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import (  # noqa: E402
    classify_speed,
    common,
    crash,
    criteria_speed,
    joblib_side_by_side,
    operator_cmds,
    overhead,
    packing,
    profile_costs,
    ray_tune,
    report,
    resume,
    scale,
)

# name -> (module, estimated seconds full, estimated seconds quick)
SECTIONS: dict[str, tuple[Any, float, float]] = {
    "overhead": (overhead, 200, 30),
    "scale": (scale, 85, 25),
    "crash": (crash, 65, 14),
    "packing": (packing, 3, 1),
    "ray": (ray_tune, 65, 25),
    "resume": (resume, 25, 8),
    "operator": (operator_cmds, 22, 5),
    "criteria": (criteria_speed, 45, 14),
    "classify": (classify_speed, 20, 5),
    "profile": (profile_costs, 30, 0),  # full runs only: evidence for the notes
    # Last: about 5 minutes on 2 cores, so a full run within its budget usually skips it;
    # run it alone (`--only joblib`, or bench/joblib_side_by_side.py).
    "joblib": (joblib_side_by_side, 300, 80),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke run, about 2 minutes")
    ap.add_argument("--only", help="comma-separated sections: " + ",".join(SECTIONS))
    ap.add_argument("--budget-s", type=float, help="time budget (default 570 full, 150 quick)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument(
        "--setup-ray",
        action="store_true",
        help='create bench/.venv-ray with pip install "ray[tune]" first (not timed)',
    )
    ap.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    ap.add_argument(
        "--wait-quiet",
        type=float,
        default=0.0,
        metavar="S",
        help="first wait up to S seconds for the 1-minute load average to drop below 1",
    )
    args = ap.parse_args(argv)

    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    logging.getLogger("optuna").setLevel(logging.WARNING)

    if args.setup_ray:
        _say("setting up bench/.venv-ray (ray[tune]) ...")
        why = ray_tune.setup()
        _say(why or "ray[tune] ready")

    waited = _wait_quiet(args.wait_quiet)
    names = list(SECTIONS)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in SECTIONS]
        if unknown:
            ap.error(f"unknown section(s): {', '.join(unknown)} (known: {', '.join(SECTIONS)})")
    budget = args.budget_s or (150.0 if args.quick else 570.0)
    t0 = time.monotonic()
    # Sections start only if their estimate fits in the budget; repeats inside a section stop
    # when the next one would end past it (common.repeats), so a busy machine gets fewer
    # repeats rather than a run past 10 minutes.
    common.set_deadline(None if args.only else budget)
    started = dt.datetime.now().astimezone()
    results: dict[str, Any] = {
        "schema": 1,
        "generated": started.isoformat(timespec="seconds"),
        "quick": args.quick,
        "machine": common.machine(),
        "load_average_start": common.load_average(),
        "waited_for_quiet_s": waited,
        "sections": {},
        "section_s": {},
        "skipped": {},
    }
    _say(f"hpo benchmarks ({'quick' if args.quick else 'full'}), scratch {common.workdir()}")
    try:
        for name in names:
            module, est_full, est_quick = SECTIONS[name]
            est = est_quick if args.quick else est_full
            if est == 0:
                results["skipped"][name] = "full runs only"
                continue
            elapsed = time.monotonic() - t0
            if elapsed + est > budget and not args.only:
                results["skipped"][name] = (
                    f"time budget: {elapsed:.0f} s used of {budget:.0f} s, needs about {est:.0f} s"
                )
                _say(f"[{name}] skipped: {results['skipped'][name]}")
                continue
            _say(f"[{name}] running (about {est:.0f} s) ...")
            ts = time.monotonic()
            load = common.load_average()
            try:
                section = module.run(args.quick)
                section["load_average_before"] = load
                results["sections"][name] = section
            except Exception as exc:  # one broken section must not lose the others
                results["sections"][name] = {
                    "error": f"{type(exc).__name__}: {exc}",
                    "traceback": traceback.format_exc()[-3000:],
                }
                _say(f"[{name}] failed: {type(exc).__name__}: {exc}")
            results["section_s"][name] = round(time.monotonic() - ts, 1)
            _say(f"[{name}] done in {results['section_s'][name]:.0f} s")
    finally:
        if not args.keep:
            common.cleanup()
    results["wall_s"] = round(time.monotonic() - t0, 1)
    results["notes"] = list(common.NOTES)
    results["load_average_end"] = common.load_average()
    report.add_headlines(results, SECTIONS)
    # Only a full run of every section replaces the reference results and the doc's table; a
    # --quick (smoke) or --only (partial) run writes quick.* or partial.* beside them.
    stem = "quick" if args.quick else "partial" if args.only else "latest"
    paths = report.write(results, docs=stem == "latest" and not args.no_docs, stem=stem)
    _say(f"done in {results['wall_s']:.0f} s; wrote " + ", ".join(str(p) for p in paths))
    print(report.goals_text(results))
    return 0


def _wait_quiet(limit_s: float) -> float:
    """Wait (up to ``limit_s``) until nothing else keeps the cores busy; returns the wait."""
    t = time.monotonic()
    while time.monotonic() - t < limit_s:
        load = common.load_average()
        if not load or load[0] < 1.0:
            break
        _say(f"waiting for a quiet machine (load average {load[0]})")
        time.sleep(min(15.0, max(0.0, limit_s - (time.monotonic() - t))))
    return round(time.monotonic() - t, 1)


def _say(msg: str) -> None:
    print(f"bench: {msg}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
