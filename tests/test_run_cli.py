"""`hpo run` from the command line: several directions, constraints, sampler and pruner flags,
and what the operator sees (progress lines when piped, the summary, status, report, help, logs).

The multi-objective and constrained runs are checked against plain Optuna on the same seed:
same states, parameters, values and Optuna's ``constraints`` system attribute.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import optuna
import pytest
from optuna.trial import TrialState

from hpo.cli import _directions, main, run_cmd
from hpo.config import load_config
from hpo.errors import ConfigError
from hpo.progress import Progress
from hpo.samplers import Constraints, ConstraintsError
from hpo.testing import objectives
from tests.conftest import assert_no_run_processes, load_study, run_hpo, write_config

OBJ = "hpo.testing.objectives"


# ---------------------------------------------------------------- flags, without processes
def _run_flags(*argv: str) -> dict[str, Any]:
    ctx = run_cmd.make_context("run", list(argv))
    flags = dict(ctx.params)
    _directions(flags)
    return flags


@pytest.mark.parametrize(
    ("argv", "direction", "directions", "config"),
    [
        (["--directions", "minimize", "maximize"], None, ["minimize", "maximize"], None),
        (
            ["--directions", "minimize", "maximize", "s.yaml"],
            None,
            ["minimize", "maximize"],
            "s.yaml",
        ),
        (["--directions", "minimize,maximize"], None, ["minimize", "maximize"], None),
        (
            ["--direction", "minimize", "--direction", "maximize"],
            None,
            ["minimize", "maximize"],
            None,
        ),
        (["--direction", "maximize"], "maximize", None, None),
        (["s.yaml"], None, None, "s.yaml"),
    ],
)
def test_direction_flags(
    argv: list[str], direction: str | None, directions: list[str] | None, config: str | None
) -> None:
    flags = _run_flags(*argv)
    assert flags.get("direction") == direction
    assert flags.get("directions") == directions
    assert flags["config"] == config


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["--direction", "maximize", "--directions", "minimize", "maximize"],
            "--direction and --directions",
        ),
        (["--directions", "sideways"], "--directions: sideways"),
    ],
)
def test_direction_flag_errors(argv: list[str], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        _run_flags(*argv)


def test_flags_replace_the_yaml(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="s",
        objective=f"{OBJ}:quadratic",
        direction="maximize",
        sampler={"name": "tpe", "seed": 4, "kwargs": {"n_startup_trials": 3}},
    )
    got = load_config(cfg, {"directions": ["minimize", "maximize"], "sampler": "nsga2"})
    assert got.study_directions == ["minimize", "maximize"] and got.direction is None
    # the YAML's seed stays; its kwargs were the TPE's and go with it
    assert (got.sampler.name, got.sampler.seed, got.sampler.kwargs) == ("nsga2", 4, {})
    same = load_config(cfg, {"sampler": "tpe", "pruner": "nop"})
    assert same.sampler.kwargs == {"n_startup_trials": 3} and same.pruner.name == "nop"


# ---------------------------------------------------------------- constraints, pure
def _frozen(number: int, constraint: Any) -> optuna.trial.FrozenTrial:
    t = optuna.trial.create_trial(value=1.0, user_attrs={"constraint": constraint})
    t.number = number
    return t


@pytest.mark.parametrize(
    ("func", "constraint", "error"),
    [
        (objectives.binh_korn_constraints, (1.0, -2), None),
        (objectives.binh_korn_constraints, [0.5], None),
        (objectives.constraints_scalar, (1.0, 2.0), "returned 1.0 (float)"),
        (objectives.binh_korn_constraints, (math.nan, 1.0), "none of them NaN"),
        (objectives.binh_korn_constraints, "ab", "returned 'ab' (str)"),
        (objectives.binh_korn_constraints, [], "returned [] (list)"),
        (objectives.constraints_raising, (1.0,), "raised KeyError"),
    ],
)
def test_constraints_checked(func: Any, constraint: Any, error: str | None) -> None:
    c = Constraints(func, "q.py:constraints")
    trial = _frozen(0, constraint)
    if error is None:
        assert c.evaluate(trial) == tuple(float(v) for v in constraint)
        assert c(trial) == tuple(float(v) for v in constraint)  # what the sampler is given
        return
    with pytest.raises(ConstraintsError, match=re.escape(error)) as info:
        c.evaluate(trial)
    assert str(info.value).startswith("constraints function q.py:constraints ")


# ---------------------------------------------------------------- the piped progress line
def test_progress_line_every_30s_when_piped(tmp_path: Path) -> None:
    import io

    now = [1000.0]
    out = io.StringIO()
    cfg = load_config(None, {"objective": f"{OBJ}:quadratic", "n_trials": 10})
    progress = Progress(cfg, stream=out, clock=lambda: now[0])
    running = SimpleNamespace(number=5, started=990.0)
    sup = SimpleNamespace(
        slots=[SimpleNamespace(running=running), SimpleNamespace(running=None)],
        store=SimpleNamespace(last_reported={5: (3, 0.25)}.get),
        stats=SimpleNamespace(best=0.125),
        done_at_start=2,
        events=SimpleNamespace(listeners=[]),
        run_dir=tmp_path,
    )
    progress.attach(sup)  # type: ignore[arg-type]
    out.truncate(0)
    out.seek(0)
    for t in (1010.0, 1029.0):
        now[0] = t
        progress.tick(sup)  # type: ignore[arg-type]
    assert out.getvalue() == ""
    progress.on_event({"event": "trial_finished", "trial": 4, "state": "COMPLETE", "values": [1.0]})
    out.truncate(0)
    out.seek(0)
    now[0] = 1030.0
    progress.tick(sup)  # type: ignore[arg-type]
    line = out.getvalue().strip()
    # 1 done in 30 s, 10 - 2 - 1 = 7 to go: 3m30s
    assert line == (
        "hpo: 1 running: trial 5 step 3 value=0.25 (40s) | 1 done this run, 7 to go, "
        "ETA 3m30s | best 0.125"
    )
    now[0] = 1059.0
    progress.tick(sup)  # type: ignore[arg-type]
    assert out.getvalue().count("\n") == 1
    now[0] = 1060.0
    progress.tick(sup)  # type: ignore[arg-type]
    assert out.getvalue().count("\n") == 2


# ---------------------------------------------------------------- help
def test_help_lists_every_command_summary_whole() -> None:
    from click.testing import CliRunner

    text = CliRunner().invoke(main, ["--help"], terminal_width=80).output
    flat = " ".join(text.split())
    for name, cmd in main.commands.items():
        summary = " ".join((cmd.help or "").split("\n\n")[0].split())
        assert f"{name} {summary}" in flat, name
    assert "..." not in text.split("Commands:")[1]


# ---------------------------------------------------------------- real runs
def _plain(
    n_trials: int, seed: int, constraints: Any = objectives.binh_korn_constraints
) -> optuna.Study:
    sampler = optuna.samplers.NSGAIISampler(seed=seed, constraints_func=constraints)
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    study.optimize(objectives.binh_korn, n_trials=n_trials)
    return study


def _same_trials(
    ours: list[optuna.trial.FrozenTrial], plain: list[optuna.trial.FrozenTrial]
) -> None:
    def constraints(t: optuna.trial.FrozenTrial) -> list[float] | None:
        c = t.system_attrs.get("constraints")
        return None if c is None else list(c)  # a JSON list in SQLite, a tuple in memory

    assert [t.state for t in ours] == [t.state for t in plain]
    assert [t.params for t in ours] == [t.params for t in plain]
    assert [t.values for t in ours] == [t.values for t in plain]
    assert [constraints(t) for t in ours] == [constraints(t) for t in plain]
    assert [list(t.user_attrs["constraint"]) for t in ours] == [
        list(t.user_attrs["constraint"]) for t in plain
    ]


@pytest.fixture(scope="module")
def mo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    tmp = tmp_path_factory.mktemp("mo")
    run_dir = tmp / "run"
    proc = run_hpo(
        "run", "--objective", f"{OBJ}:binh_korn", "--directions", "minimize", "minimize",
        "--sampler", "nsga2", "--constraints", f"{OBJ}:binh_korn_constraints", "--seed", "3",
        "--n-trials", "10", "--workers", "1", "--study", "mo", "--run-dir", str(run_dir),
        timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_no_run_processes(run_dir)
    return run_dir, proc


def test_multi_objective_with_constraints_as_plain_optuna(mo_run: tuple[Path, Any]) -> None:
    run_dir, proc = mo_run
    study = load_study(run_dir, "mo")
    plain = _plain(10, seed=3)
    _same_trials(study.trials, plain.trials)
    assert all(t.system_attrs.get("constraints") for t in study.trials)
    # the summary prints the Pareto front: Optuna's best_trials, by number, with their values
    front = sorted(plain.best_trials, key=lambda t: t.number)
    assert f"Pareto front, {len(front)} trial(s)" in proc.stdout
    for t in front:
        assert f"trial {t.number}: values [{t.values[0]:.6g}, {t.values[1]:.6g}]" in proc.stdout
    assert f"hpo: next: hpo status --storage sqlite:///{run_dir}/study.db --study mo" in proc.stdout
    status = json.loads(
        run_hpo("status", "--storage", f"sqlite:///{run_dir}/study.db", "--format", "json").stdout
    )
    assert [r["trial"] for r in status["pareto_front"]] == [t.number for t in front]


def test_report_from_storage_goes_to_the_run_folder(
    mo_run: tuple[Path, Any], tmp_path: Path
) -> None:
    run_dir, _ = mo_run
    proc = run_hpo("report", "--storage", f"sqlite:///{run_dir}/study.db", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == (run_dir / "report" / "report.html").resolve()
    assert list(tmp_path.iterdir()) == []


def test_a_failing_constraints_function_fails_only_its_trial(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = run_hpo(
        "run", "--objective", f"{OBJ}:binh_korn", "--direction", "minimize", "--direction", "minimize",
        "--constraints", f"{OBJ}:constraints_raising", "--seed", "1", "--n-trials", "3",
        "--study", "c", "--run-dir", str(run_dir), "--quiet",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    trials = load_study(run_dir, "c").trials
    for t in trials:
        if t.number % 2 == 0:
            assert t.state == TrialState.FAIL, t
            assert t.user_attrs["hpo:failure_class"] == "user_error"
            assert t.user_attrs["hpo:error_msg"].startswith(
                f"constraints function {OBJ}:constraints_raising raised KeyError"
            )
            assert "constraints" not in t.system_attrs
        else:
            assert t.state == TrialState.COMPLETE
            assert t.system_attrs["constraints"] == list(t.user_attrs["constraint"])
    assert sum(t.state == TrialState.COMPLETE for t in trials) == 3
    assert_no_run_processes(run_dir)


@pytest.mark.parametrize(
    ("args", "yaml", "needles"),
    [
        (["--constraints", f"{OBJ}:binh_korn_constraints", "--sampler", "random"], None,
         ["--constraints", "sampler 'random' (--sampler)", "tpe, nsga2, nsga3, gp"]),
        ([], {"constraints": f"{OBJ}:binh_korn_constraints", "sampler": {"name": "cmaes"}},
         ["s.yaml: constraints", "sampler 'cmaes' (sampler.name)"]),
        (["--direction", "minimize", "--directions", "minimize", "maximize"], None,
         ["--direction and --directions given together"]),
    ],
)  # fmt: skip
def test_bad_direction_and_constraints_input(
    tmp_path: Path, args: list[str], yaml: dict[str, Any] | None, needles: list[str]
) -> None:
    run_dir = tmp_path / "run"
    base = ["--objective", f"{OBJ}:binh_korn", "--run-dir", str(run_dir), "--study", "s"]
    if yaml is not None:
        cfg = write_config(tmp_path / "s.yaml", study="s", objective=f"{OBJ}:binh_korn", **yaml)
        base = [str(cfg), "--run-dir", str(run_dir)]
    proc = run_hpo("run", *base, *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("hpo: error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert not run_dir.exists()


def test_each_log_line_once_in_the_trial_log(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = run_hpo(
        "run", "--objective", f"{OBJ}:logs_like_lightning", "--n-trials", "1", "--study", "l",
        "--run-dir", str(run_dir), "--quiet",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = (run_dir / "logs" / "trial-000000.log").read_text()
    assert text.count("library line of trial 0") == 1, text
    assert text.count("objective line of trial 0") == 1, text


def test_status_shows_cpu_and_plain_tables_when_piped(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    study = optuna.create_study(study_name="s", storage=url)
    trial = study.ask({"x": optuna.distributions.FloatDistribution(0, 1)})
    owner = {"host": "h", "pid": 1, "worker_pid": 4242, "device": None, "run_dir": str(tmp_path)}
    study._storage.set_trial_system_attr(trial._trial_id, "hpo:owner", owner)
    text = run_hpo("status", "--storage", url).stdout
    rows = text.split("running:\n", 1)[1].splitlines()
    assert rows[0].split() == ["trial", "host", "pid", "device", "age", "params"]
    assert rows[1].split()[:4] == ["0", "h", "4242", "cpu"]
    assert not any(ch in text for ch in "┃│┏")
