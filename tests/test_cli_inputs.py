"""Bad input: one clear line naming the culprit, a non-zero exit, and the study untouched."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from tests.conftest import ROOT, assert_no_run_processes, load_study, run_hpo, write_config


def _one_line_error(proc: object, *needles: str) -> str:
    err = proc.stderr.strip()  # type: ignore[attr-defined]
    lines = [line for line in err.splitlines() if line.startswith("hpo: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_unknown_yaml_key(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="s",
        objective="hpo.testing.objectives:quadratic",
        n_trail=3,
        run_dir=str(tmp_path / "r"),
    )
    proc = run_hpo("run", str(cfg))
    assert proc.returncode == 2
    _one_line_error(proc, "unknown key 'n_trail'", "did you mean 'n_trials'")
    assert not (tmp_path / "r").exists()


def test_unknown_nested_key(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="s",
        objective="hpo.testing.objectives:quadratic",
        sampler={"name": "tpe", "sed": 1},
    )
    proc = run_hpo("run", str(cfg))
    assert proc.returncode == 2
    _one_line_error(proc, "sampler.sed", "did you mean 'seed'")


def test_wrong_type(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="s",
        objective="hpo.testing.objectives:quadratic",
        n_trials="many",
    )
    proc = run_hpo("run", str(cfg))
    assert proc.returncode == 2
    _one_line_error(proc, "n_trials", "'many'")


def test_unknown_policy_class_and_action(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="s",
        objective="hpo.testing.objectives:quadratic",
        on_failure={"oomm": "prune"},
    )
    proc = run_hpo("run", str(cfg))
    assert proc.returncode == 2
    _one_line_error(proc, "oomm")
    cfg = write_config(
        tmp_path / "t.yaml",
        study="s",
        objective="hpo.testing.objectives:quadratic",
        on_failure={"oom": "skip"},
    )
    proc = run_hpo("run", str(cfg))
    assert proc.returncode == 2
    _one_line_error(proc, "oom", "skip")


def test_missing_config_file(tmp_path: Path) -> None:
    proc = run_hpo("run", str(tmp_path / "nope.yaml"))
    assert proc.returncode == 2
    _one_line_error(proc, "nope.yaml", "does not exist")


def test_missing_objective_file(tmp_path: Path) -> None:
    proc = run_hpo(
        "run",
        "--objective",
        str(tmp_path / "nope.py") + ":objective",
        "--run-dir",
        str(tmp_path / "r"),
    )
    assert proc.returncode == 2
    _one_line_error(proc, "nope.py", "does not exist")


@pytest.mark.parametrize(
    "source,needles",
    [
        ("def other(trial):\n    return 1.0\n", ("'objective' not found", "obj.py")),
        (
            "import math\nX = 1 / 0\n\ndef objective(trial):\n    return 1.0\n",
            ("obj.py", "failed at import", "ZeroDivisionError"),
        ),
    ],
    ids=["missing-function", "import-error"],
)
def test_objective_that_cannot_be_loaded(
    tmp_path: Path, source: str, needles: tuple[str, ...]
) -> None:
    """Found only in the worker: the run stops before any trial, the study stays empty."""
    f = tmp_path / "obj.py"
    f.write_text(source)
    run_dir = tmp_path / "r"
    proc = run_hpo(
        "run",
        "--objective",
        f"{f}:objective",
        "--study",
        "s",
        "--run-dir",
        str(run_dir),
        "--n-trials",
        "3",
    )
    assert proc.returncode == 2
    _one_line_error(proc, *needles)
    assert load_study(run_dir, "s").get_trials() == []
    assert_no_run_processes(run_dir)


def test_missing_module(tmp_path: Path) -> None:
    proc = run_hpo(
        "run", "--objective", "no_such_pkg.mod:objective", "--run-dir", str(tmp_path / "r")
    )
    assert proc.returncode == 2
    _one_line_error(proc, "no_such_pkg.mod", "not found")


def test_unwritable_run_folder(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = run_hpo(
        "run",
        "--objective",
        "hpo.testing.objectives:quadratic",
        "--run-dir",
        str(blocker / "run"),
        "--storage",
        f"sqlite:///{tmp_path / 'db.sqlite'}",
    )
    assert proc.returncode == 2
    _one_line_error(proc, "run folder", str(blocker / "run"))


def test_unreachable_storage(tmp_path: Path) -> None:
    proc = run_hpo(
        "run",
        "--objective",
        "hpo.testing.objectives:quadratic",
        "--run-dir",
        str(tmp_path / "r"),
        "--storage",
        "postgresql://bob:hunter2@127.0.0.1:9/db",
    )
    assert proc.returncode == 3
    line = _one_line_error(proc, "cannot open storage", "127.0.0.1:9")
    assert "hunter2" not in proc.stdout + proc.stderr and "***" in line


def test_read_only_storage_left_untouched(tmp_path: Path) -> None:
    db = tmp_path / "ro.db"
    study = optuna.create_study(study_name="ro", storage=f"sqlite:///{db}")
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    before = db.read_bytes()
    url = f"sqlite:///file:{db}?mode=ro&uri=true"
    proc = run_hpo(
        "run",
        "--objective",
        "hpo.testing.objectives:quadratic",
        "--study",
        "ro",
        "--run-dir",
        str(tmp_path / "r"),
        "--storage",
        url,
        "--n-trials",
        "5",
    )
    assert proc.returncode == 3, proc.stderr
    _one_line_error(proc, "readonly")
    assert db.read_bytes() == before
    assert len(optuna.load_study(study_name="ro", storage=f"sqlite:///{db}").trials) == 3


def test_existing_study_with_other_direction(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    optuna.create_study(study_name="d", storage=f"sqlite:///{db}", direction="maximize")
    proc = run_hpo(
        "run",
        "--objective",
        "hpo.testing.objectives:quadratic",
        "--study",
        "d",
        "--storage",
        f"sqlite:///{db}",
        "--direction",
        "minimize",
        "--run-dir",
        str(tmp_path / "r"),
    )
    assert proc.returncode == 3
    _one_line_error(proc, "'d'", "maximize", "minimize")


def test_flags_override_yaml(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    cfg = write_config(
        tmp_path / "s.yaml",
        study="s",
        objective="hpo.testing.objectives:quadratic",
        n_trials=50,
        workers=1,
        run_dir=str(run_dir),
    )
    proc = run_hpo("run", str(cfg), "--n-trials", "3", "--direction", "maximize", "--quiet")
    assert proc.returncode == 0, proc.stderr
    s = load_study(run_dir, "s")
    assert len(s.trials) == 3 and s.direction == optuna.study.StudyDirection.MAXIMIZE


def _optuna_trials_json(db: Path, name: str) -> list[dict[str, object]]:
    import subprocess
    import sys

    out = subprocess.run(
        [
            str(Path(sys.executable).parent / "optuna"),
            "trials",
            "--study-name",
            name,
            "--storage",
            f"sqlite:///{db}",
            "-f",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_sklearn_iris_objective_unchanged(tmp_path: Path) -> None:
    """A plain scikit-learn objective (tests/examples/iris.py) runs unchanged; `optuna trials` lists it."""
    pytest.importorskip("sklearn")
    db = tmp_path / "iris.db"
    proc = run_hpo(
        "run",
        "--objective",
        f"{ROOT / 'tests' / 'examples' / 'iris.py'}:objective",
        "--study",
        "iris",
        "--storage",
        f"sqlite:///{db}",
        "--run-dir",
        str(tmp_path / "r"),
        "--n-trials",
        "6",
        "--workers",
        "2",
        "--direction",
        "maximize",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _optuna_trials_json(db, "iris")
    assert len(rows) == 6 and all(r["state"] == "COMPLETE" for r in rows)
    assert all(0.0 <= float(r["value"]) <= 1.0 for r in rows)  # type: ignore[arg-type]


def test_objective_from_optunas_own_readme_unchanged(tmp_path: Path) -> None:
    """The objective of the storage example in Optuna's own README (read from the installed
    package's metadata, not copied into this repository) runs under hpo as written."""
    import importlib.metadata
    import re

    readme = importlib.metadata.metadata("optuna").get_payload()  # type: ignore[attr-defined]
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    code = next(b for b in blocks if "def objective(trial)" in b and "sklearn" not in b)
    func = re.search(r"(import optuna\n+)?(def objective\(trial\):\n(?:    .*\n|\n)+)", code)
    assert func is not None
    src = tmp_path / "readme_objective.py"
    src.write_text("import optuna\n\n\n" + func.group(2))
    db = tmp_path / "toy.db"
    proc = run_hpo(
        "run",
        "--objective",
        f"{src}:objective",
        "--study",
        "toy",
        "--storage",
        f"sqlite:///{db}",
        "--run-dir",
        str(tmp_path / "r"),
        "--n-trials",
        "8",
        "--workers",
        "2",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _optuna_trials_json(db, "toy")
    assert len(rows) == 8 and all(r["state"] == "COMPLETE" for r in rows)


@pytest.mark.slow
def test_chaos_200_trials_four_workers(tmp_path: Path) -> None:
    """The spine's acceptance: 200 COMPLETE+PRUNED trials under 30% chaos, every other trial tagged."""
    run_dir = tmp_path / "chaos"
    db = tmp_path / "chaos.db"
    proc = run_hpo(
        "run",
        "--objective",
        f"{ROOT / 'tests' / 'examples' / 'plain_objective.py'}:objective",
        "--n-trials",
        "200",
        "--workers",
        "4",
        "--chaos",
        "0.3",
        "--chaos-seed",
        "3",
        "--study",
        "s",
        "--storage",
        f"sqlite:///{db}",
        "--run-dir",
        str(run_dir),
        "--quiet",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    study = optuna.load_study(study_name="s", storage=f"sqlite:///{db}")
    trials = study.get_trials(deepcopy=False)
    assert sum(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in trials) == 200
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]
    faults = set()
    for t in trials:
        if t.state == TrialState.FAIL or t.user_attrs.get("hpo:chaos_fault"):
            assert t.user_attrs.get("failure_class") and t.user_attrs.get("hpo:failure_action"), t
            assert t.user_attrs.get("hpo:chaos_fault"), t  # here only injected faults fail
            faults.add(t.user_attrs["hpo:chaos_fault"])
        elif t.state == TrialState.PRUNED:  # pruned by the objective's own pruner: no failure tags
            assert "failure_class" not in t.user_attrs
    assert len(faults) >= 8, faults
    # Each injected fault carries the right class and action; once retries are exhausted a
    # crash is FAIL (only parameter-caused classes are PRUNED).
    from tests.test_runner_faults import EXPECTED

    for t in trials:
        fault = t.user_attrs.get("hpo:chaos_fault")
        if not fault:
            continue
        fclass, _state, action, _retried = EXPECTED[fault]
        assert t.user_attrs["failure_class"] == fclass, (fault, t.user_attrs)
        if "retries exhausted" in t.user_attrs.get("hpo:failure_note", ""):
            assert t.user_attrs["hpo:failure_action"] == "fail" and t.state == TrialState.FAIL
        else:
            assert t.user_attrs["hpo:failure_action"] == action, (fault, t.user_attrs)
    # Retries are linked to their originals and carry the same parameters.
    by_number = {t.number: t for t in trials}
    for t in trials:
        if "hpo:retry_of" in t.user_attrs:
            original = by_number[t.user_attrs["hpo:retry_of"]]
            assert original.user_attrs["hpo:failure_action"] == "retry"
            # What the original had suggested before dying is fixed in the retry.
            assert all(t.params.get(k) == v for k, v in original.params.items()) or not t.params
    # The analysis code written for the old in-process runner works unchanged.
    cuda = [t for t in study.trials if t.user_attrs.get("cuda_error", False)]
    assert cuda and all(
        t.user_attrs["cuda_error_type"] and t.user_attrs["cuda_error_msg"] for t in cuda
    )
    assert_no_run_processes(run_dir)
    sqlite3.connect(db).close()


def test_replay_reproduces_injected_cuda_error(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    cfg = write_config(
        tmp_path / "s.yaml",
        study="rp",
        objective="hpo.testing.objectives:fault_objective",
        objective_kwargs={"fault": "cuda_illegal_access", "fault_trials": [1]},
        run_dir=str(run_dir),
        n_trials=3,
        workers=1,
    )
    assert run_hpo("run", str(cfg), "--quiet").returncode == 0
    proc = run_hpo("replay", "1", str(cfg))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "CUDA_LAUNCH_BLOCKING=1)" in proc.stderr  # as seen by the objective's process
    assert "illegal memory access" in proc.stderr
    assert "cuda_context_corrupted" in proc.stderr
    proc = run_hpo("replay", "0", str(cfg))
    assert proc.returncode == 0, proc.stderr
    proc = run_hpo("replay", "99", str(cfg))
    assert proc.returncode == 2 and "out of range" in proc.stderr
    # The study is untouched by a replay without --record.
    assert len(load_study(run_dir, "rp").trials) == 4


def test_study_that_requires_a_gpu_stops_at_once_without_one(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path / "g.yaml",
        study="g",
        objective="hpo.testing.objectives:quadratic",
        run_dir=str(tmp_path / "r"),
        require_gpu=True,
        device_backend="cpu",
    )
    proc = run_hpo("run", str(cfg))
    assert proc.returncode == 2
    _one_line_error(proc, "needs a GPU", "--allow-cpu")
    assert not (tmp_path / "r" / "study.db").exists()
    proc = run_hpo("run", str(cfg), "--allow-cpu", "--n-trials", "2", "--quiet")
    assert proc.returncode == 0, proc.stderr


def test_supermax_without_gpu_or_network_fails_fast_with_a_clear_message(tmp_path: Path) -> None:
    proc = run_hpo(
        "run",
        str(ROOT / "studies" / "criteria-supermax.yaml"),
        "--run-dir",
        str(tmp_path / "r"),
        env={"HF_HUB_OFFLINE": "1"},
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    _one_line_error(proc, "needs a GPU")
    proc = run_hpo(
        "run",
        str(ROOT / "studies" / "criteria-supermax.yaml"),
        "--allow-cpu",
        "--run-dir",
        str(tmp_path / "r"),
        env={"HF_HUB_OFFLINE": "1"},
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    _one_line_error(proc, "not in the local Hugging Face cache", "huggingface-cli download")
    assert not (tmp_path / "r" / "study.db").exists()


def test_lifting_a_quarantine_that_does_not_exist_says_so(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    optuna.create_study(study_name="q", storage=f"sqlite:///{db}")
    proc = run_hpo("quarantine", "--storage", f"sqlite:///{db}", "--study", "q", "--lift", "3")
    assert proc.returncode == 2, proc.stderr
    assert (
        proc.stderr.strip()
        == "hpo: error: no quarantine of GPU '3' in study 'q' (quarantined: none)"
    )
    listed = run_hpo("quarantine", "--storage", f"sqlite:///{db}", "--study", "q")
    assert listed.returncode == 0 and "no GPU is quarantined" in listed.stdout


@pytest.mark.parametrize(
    ("breaker", "culprit"),
    [
        ({"windw": 10}, "breaker.windw"),
        ({"share": 1.5}, "breaker.share"),
        ({"share": 0}, "breaker.share"),
    ],
)
def test_bad_breaker_settings_name_the_key(
    tmp_path: Path, breaker: dict[str, object], culprit: str
) -> None:
    cfg = write_config(
        tmp_path / "b.yaml",
        study="b",
        objective="hpo.testing.objectives:quadratic",
        breaker=breaker,
    )
    proc = run_hpo("run", str(cfg))
    assert proc.returncode == 2 and culprit in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
