"""The criteria task and the guards under the real runner (worker processes, SQLite)."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from tests.conftest import ROOT, assert_no_run_processes, run_hpo, write_config

pytestmark = pytest.mark.slow


def test_two_trial_criteria_study_with_the_tiny_model(tmp_path: Path) -> None:
    run_dir = tmp_path / "c"
    cfg = write_config(
        tmp_path / "c.yaml",
        study="c",
        objective="hpo.tasks.criteria:objective",
        preflight="hpo.tasks.criteria:preflight",
        direction="maximize",
        n_trials=2,
        workers=1,
        gpus="none",
        run_dir=str(run_dir),
        objective_kwargs={
            "models": ["tiny-bert"],
            "batch_sizes": [16],
            "lr": [1e-3, 3e-3],
            "dropout": [0.0, 0.1],
            "epochs": 2,
            "max_length": 64,
            "max_train_examples": 240,
        },
    )
    proc = run_hpo("run", str(cfg), timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "majority_baseline_macro_f1" in proc.stdout
    study = optuna.load_study(study_name="c", storage=f"sqlite:///{run_dir / 'study.db'}")
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 2
    for t in study.trials:
        assert 0.0 <= t.value <= 1.0 and t.intermediate_values.keys() == {0, 1}
        assert t.user_attrs["epochs_run"] == 2 and t.user_attrs["micro_batch_size"] == 16
    assert "majority_baseline_macro_f1" in study.user_attrs
    # The objective's per-epoch log lines reach the trial's own log file.
    assert "epoch" in Path(study.trials[0].user_attrs["hpo:log_path"]).read_text().lower()
    assert_no_run_processes(run_dir)


@pytest.mark.parametrize(
    "kind,fclass", [("labels", "data_error"), ("logits", "data_error"), ("nan", "numerical")]
)
def test_guard_faults_get_their_class_through_the_runner(
    kind: str, fclass: str, tmp_path: Path
) -> None:
    run_dir = tmp_path / kind
    cfg = write_config(
        tmp_path / f"{kind}.yaml",
        study=kind,
        objective=f"{ROOT / 'tests' / 'examples' / 'guarded.py'}:objective",
        objective_kwargs={"kind": kind},
        n_trials=1,
        workers=1,
        run_dir=str(run_dir),
        max_consecutive_failures=1,
    )
    proc = run_hpo("run", str(cfg), "--quiet")
    t = optuna.load_study(study_name=kind, storage=f"sqlite:///{run_dir / 'study.db'}").trials[0]
    assert t.user_attrs["failure_class"] == fclass, t.user_attrs
    assert t.user_attrs["hpo:exception_type"] in (
        "hpo.guards.DataError",
        "hpo.guards.NumericalError",
    )
    assert t.user_attrs["cuda_error"] is False
    # A 1-trial study: a data error trips the breaker (4); a pruned numerical failure leaves
    # n_trials reached with nothing learned (6).
    assert proc.returncode == (4 if fclass == "data_error" else 6)
