"""Where the time goes: cProfile of the supervisor and of the operator commands.

Not a comparison but the evidence behind the notes on missed goals. ``hpo run`` (null objective,
4 workers, TPE) runs under ``python -m cProfile``; the supervisor is one thread, so its profile is
the whole loop. For chosen functions the cumulative time per trial is reported (they nest: the
numbers do not add up) and as a share of the run's loop. ``hpo status`` and ``hpo failures`` on
the 5000-trial study are profiled the same way. cProfile slows Python-heavy code (SQLAlchemy) by
roughly 1.5-2x, so read the shares rather than the absolute milliseconds.
"""

from __future__ import annotations

import pstats
import subprocess
from pathlib import Path
from typing import Any

from bench import common

# (label, file suffix, function name)
SUPERVISOR_FUNCS = (
    ("loop (the whole run after start-up)", "hpo/supervisor.py", "_loop"),
    ("ask: Study.ask (sampler, new trial row)", "hpo/supervisor.py", "_ask"),
    ("budget check: all trials read each dispatch", "hpo/supervisor.py", "_budget_left"),
    ("dispatch: owner attr, spec, send", "hpo/supervisor.py", "_dispatch"),
    ("serve trial calls (suggest_float: sampler)", "hpo/supervisor.py", "_serve_call"),
    ("record: tags + tell", "hpo/supervisor.py", "record"),
    ("  storage.finish_trial (read trial + tell)", "hpo/storage.py", "finish_trial"),
    ("  storage.set_user_attrs", "hpo/storage.py", "set_user_attrs"),
    ("owner ctime (psutil) per dispatch", "hpo/supervisor.py", "_my_ctime"),
    ("heartbeats and timers", "hpo/supervisor.py", "_timers"),
    ("worker starts (recycle every 50)", "hpo/supervisor.py", "_start_worker"),
    ("stop check (_finished: count done trials)", "hpo/supervisor.py", "_finished"),
    (
        "Optuna: _CachedStorage.get_all_trials",
        "optuna/storages/_cached_storage.py",
        "get_all_trials",
    ),
    ("Optuna: TPESampler.sample_relative", "optuna/samplers/_tpe/sampler.py", "sample_relative"),
    (
        "Optuna: TPESampler.sample_independent",
        "optuna/samplers/_tpe/sampler.py",
        "sample_independent",
    ),
    ("Optuna: Study.tell", "optuna/study/study.py", "tell"),
    ("SQLAlchemy: Session.commit", "sqlalchemy/orm/session.py", "commit"),
)
COMMAND_FUNCS = (
    ("total", "hpo/cli.py", "wrapper"),
    ("load_study", "hpo/storage.py", "load_study"),
    ("storage.trials (all trials via Optuna's cache)", "hpo/storage.py", "trials"),
    (
        "RDBStorage._get_trials (the SQL and ORM load)",
        "optuna/storages/_rdb/storage.py",
        "_get_trials",
    ),
    ("study.best_trial", "optuna/study/study.py", "best_trial"),
    ("rich table rendering", "rich/console.py", "print"),
)


def _cumtime(stats: pstats.Stats, suffix: str, func: str) -> tuple[float, int]:
    total, calls = 0.0, 0
    for (path, _line, name), (_cc, nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if name == func and path.endswith(suffix):
            total += ct
            calls += nc
    return total, calls


def _profile(args: list[str], out: Path, cwd: Path, timeout_s: float) -> pstats.Stats | None:
    subprocess.run(
        [common.PYTHON, "-m", "cProfile", "-o", str(out), common.HPO, *args],
        cwd=cwd,
        capture_output=True,
        timeout=timeout_s,
        stdin=subprocess.DEVNULL,
    )
    return pstats.Stats(str(out)) if out.exists() else None


def run(quick: bool) -> dict[str, Any]:
    n = 60 if quick else 200
    where = common.scratch("profile")
    cfg = {
        "objective": common.NULL_OBJECTIVE,
        "storage": common.sqlite_url(where / "study.db"),
        "n_trials": n,
        "workers": 4,
        "run_dir": str(where / "run"),
        "study": common.STUDY,
    }
    conf = common.write_config(where / "study.yaml", cfg)
    out: dict[str, Any] = {"trials": n, "workers": 4}
    stats = _profile(["run", str(conf), "-q"], where / "run.prof", where, 300)
    if stats is None:
        out["error"] = "the profiled hpo run wrote no profile"
        return out
    loop, _ = _cumtime(stats, "hpo/supervisor.py", "_loop")
    rows = []
    for label, suffix, func in SUPERVISOR_FUNCS:
        ct, calls = _cumtime(stats, suffix, func)
        rows.append(
            {
                "what": label,
                "function": f"{suffix}:{func}",
                "calls": calls,
                "ms_per_trial": round(ct / n * 1000, 2),
                "share_of_loop_pct": round(100 * ct / loop, 1) if loop else None,
            }
        )
    out["supervisor"] = rows
    size = 1000 if quick else 5000
    template, _ = common.template(size)
    db = common.copy_db(template, where / "ops.db")
    target = ["--study", common.STUDY, "--storage", common.sqlite_url(db)]
    out["commands_study_trials"] = size
    for cmd in ("status", "failures"):
        cstats = _profile([cmd, *target], where / f"{cmd}.prof", where, 120)
        if cstats is None:
            continue
        rows = []
        for label, suffix, func in COMMAND_FUNCS:
            ct, calls = _cumtime(cstats, suffix, func)
            if calls:
                rows.append({"what": label, "function": f"{suffix}:{func}", "s": round(ct, 3)})
        out[cmd] = rows
    return out
