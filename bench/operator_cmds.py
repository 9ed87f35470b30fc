"""Operator commands: wall time of ``hpo status`` and ``hpo failures`` on a 5000-trial SQLite study.

The study is ``common.build_study``'s: ~90% COMPLETE, ~6% FAIL with full hpo failure tags
(segfault, CUDA illegal access, user error; a 4000-character traceback each), ~4% PRUNED (half
OOM-tagged), every trial with hpo's base tags. Each command runs as a user runs it (a fresh
process, output to a pipe), from process launch to exit; ``hpo --version`` gives the floor (the
interpreter and the CLI's own start-up). Goal (issue 7): under 2 s each.
"""

from __future__ import annotations

import subprocess
import time
from typing import Any

from bench import common

COMMANDS: dict[str, list[str]] = {
    "status": ["status"],
    "failures": ["failures"],
    "failures_json": ["failures", "--format", "json"],
}


def _time(args: list[str]) -> tuple[float, int, int]:
    t = time.perf_counter()
    p = subprocess.run(
        [common.HPO, *args], capture_output=True, timeout=120, stdin=subprocess.DEVNULL
    )
    return time.perf_counter() - t, p.returncode, len(p.stdout)


def run(quick: bool) -> dict[str, Any]:
    n = 1000 if quick else 5000
    repeats = 1 if quick else 3
    template, built = common.template(n)
    where = common.scratch("operator")
    db = common.copy_db(template, where / "study.db")
    target = ["--study", common.STUDY, "--storage", common.sqlite_url(db)]
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    times["version"] = []
    errors: list[str] = []
    for _ in common.repeats(repeats, "operator"):
        for name, args in COMMANDS.items():
            wall, rc, size = _time([*args, *target])
            if rc != 0:
                errors.append(f"hpo {' '.join(args)} exited {rc}")
            times[name].append(wall)
        times["version"].append(_time(["--version"])[0])
    out: dict[str, Any] = {
        "study_trials": n,
        "template": built,
        **{f"{k}_s": common.summary(v) for k, v in times.items()},
    }
    if errors:
        out["errors"] = errors
    return out


def headline(section: dict[str, Any]) -> dict[str, Any]:
    return {
        "operator_s": {
            "status": section["status_s"]["median"],
            "failures": section["failures_s"]["median"],
        }
    }
