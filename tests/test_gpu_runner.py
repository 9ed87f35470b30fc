"""GPU paths through the real supervisor on the simulated backend (no GPU on these machines)."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from tests.conftest import assert_no_run_processes, run_hpo, write_config

pytestmark = pytest.mark.slow


def _packing_run(tmp_path: Path, name: str, trials_per_gpu: int | str) -> dict[str, int]:
    run_dir = tmp_path / name
    cfg = write_config(
        tmp_path / f"{name}.yaml",
        study=name,
        objective="hpo.testing.sim_objectives:packing_objective",
        objective_kwargs={"seconds": 0.3},
        run_dir=str(run_dir),
        n_trials=30,
        workers=8,
        device_backend="simulated",
        simulated_gpus={"count": 2, "memory_mb": 24576},
        trials_per_gpu=trials_per_gpu,
        sampler={"name": "random", "seed": 0},
    )
    proc = run_hpo("run", str(cfg), "--quiet", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    study = optuna.load_study(study_name=name, storage=f"sqlite:///{run_dir / 'study.db'}")
    trials = study.get_trials()
    assert_no_run_processes(run_dir)
    # Every trial ran pinned to a simulated GPU and recorded its measured peak.
    assert all(t.user_attrs.get("hpo:device") in (0, 1) for t in trials)
    assert all(
        t.user_attrs.get("hpo:peak_gpu_mem_mb") for t in trials if t.state == TrialState.COMPLETE
    )
    return {
        "complete": sum(t.state == TrialState.COMPLETE for t in trials),
        "packing_ooms": sum(t.user_attrs.get("failure_class") == "oom" for t in trials),
    }


def test_auto_packing_has_no_ooms_fixed_four_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    auto = _packing_run(tmp_path, "auto", "auto")
    fixed4 = _packing_run(tmp_path, "fixed4", 4)
    with capsys.disabled():
        print(f"\npacking OOMs: auto={auto['packing_ooms']} fixed4={fixed4['packing_ooms']}")
    assert auto["packing_ooms"] == 0
    assert fixed4["packing_ooms"] > 0


def test_failing_device_is_quarantined_and_run_finishes_on_other(tmp_path: Path) -> None:
    run_dir = tmp_path / "q"
    cfg = write_config(
        tmp_path / "q.yaml",
        study="q",
        objective="hpo.testing.sim_objectives:packing_objective",
        objective_kwargs={"seconds": 0.2},
        run_dir=str(run_dir),
        n_trials=16,
        workers=2,
        device_backend="simulated",
        simulated_gpus={"count": 2, "memory_mb": 24576, "failing": {0: 2}},
        trials_per_gpu=1,
        sampler={"name": "random", "seed": 0},
        max_retries=3,
    )
    proc = run_hpo("run", str(cfg), "--quiet", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    study = optuna.load_study(study_name="q", storage=f"sqlite:///{run_dir / 'study.db'}")
    (q,) = [v for k, v in study.user_attrs.items() if k.startswith("hpo:quarantine:")]
    assert q["gpu"] == 0 and q["uuid"] and q["reason"]
    trials = study.get_trials()
    done = [t for t in trials if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]
    assert len(done) == 16
    failed_on_0 = [
        t for t in trials if t.user_attrs.get("hpo:device") == 0 and t.state == TrialState.FAIL
    ]
    assert failed_on_0 and all(
        t.user_attrs["failure_class"] == "cuda_context_corrupted" for t in failed_on_0
    )
    # After the quarantine every trial (the retries included) ran on GPU 1.
    first_q = max(t.number for t in failed_on_0)
    assert all(
        t.user_attrs.get("hpo:device") == 1
        for t in trials
        if t.number > first_q + 1 and t.state == TrialState.COMPLETE
    )
    retried = {t.user_attrs.get("hpo:retry_of") for t in trials}
    assert all(t.number in retried for t in failed_on_0)
    events = (run_dir / "events.jsonl").read_text()
    assert "device_quarantined" in events
    assert_no_run_processes(run_dir)


def test_every_device_quarantined_stops_the_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "all"
    cfg = write_config(
        tmp_path / "all.yaml",
        study="all",
        objective="hpo.testing.sim_objectives:packing_objective",
        objective_kwargs={"seconds": 0.1},
        run_dir=str(run_dir),
        n_trials=20,
        workers=1,
        device_backend="simulated",
        simulated_gpus={"count": 1, "memory_mb": 24576, "failing": {0: 1}},
        trials_per_gpu=1,
    )
    proc = run_hpo("run", str(cfg), "--quiet", timeout=300)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "every GPU is quarantined" in proc.stdout + proc.stderr
    assert_no_run_processes(run_dir)
