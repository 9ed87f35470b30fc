"""Real clients, unchanged, under ``hpo run`` and under plain Optuna (issue 15's acceptance).

Each objective of tests/examples/real_clients.py, written as the official examples write them
(scikit-learn, an ``isinstance`` check, XGBoost's, LightGBM's and Lightning's pruning callbacks,
transformers' ``Trainer`` with ``trial``, multi-objective, constraints), runs twice with the same
sampler, pruner and seed: through the real supervisor and a worker process, and through
``study.optimize`` in this process. The two storages must hold the same trials: states,
parameters, values, intermediate values, the objective's user attributes and Optuna's system
attributes (the runner's own ``hpo:`` keys aside). No process of the run may be left behind.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import pytest
from optuna.trial import FrozenTrial, TrialState

from hpo import attrs
from hpo.workers import cpu_threads
from tests.conftest import ROOT, assert_no_run_processes, load_study, run_hpo, write_config

EXAMPLES = ROOT / "tests" / "examples" / "real_clients.py"
RUNNER_KEYS = set(attrs.COMPAT.values())


def _run_both(
    tmp_path: Path,
    objective: str,
    n_trials: int,
    sampler: dict[str, Any],
    pruner: dict[str, Any] | None = None,
    directions: list[str] | None = None,
) -> tuple[list[FrozenTrial], list[FrozenTrial]]:
    pruner = pruner or {"name": "median"}
    directions = directions or ["maximize"]
    run_dir = tmp_path / "run"
    cfg = write_config(
        tmp_path / "study.yaml",
        study="clients",
        objective=f"{EXAMPLES}:{objective}",
        run_dir=str(run_dir),
        n_trials=n_trials,
        workers=1,
        directions=directions,
        sampler=sampler,
        pruner=pruner,
    )
    proc = run_hpo("run", str(cfg), "--quiet", timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_no_run_processes(run_dir)
    under_hpo = load_study(run_dir, "clients").get_trials()

    spec = {
        "objective": objective,
        "study": "clients",
        "storage": f"sqlite:///{tmp_path / 'plain.db'}",
        "n_trials": n_trials,
        "directions": directions,
        "sampler": sampler,
        "pruner": pruner,
        "threads": cpu_threads(1),  # the torch threads of an hpo CPU worker (hpo.workers)
    }
    in_optuna = _examples().run_plain(spec).get_trials()
    return under_hpo, in_optuna


@functools.cache
def _examples() -> Any:
    spec = importlib.util.spec_from_file_location("real_clients", EXAMPLES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _users(user_attrs: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in user_attrs.items()
        if not k.startswith(attrs.PREFIX) and k not in RUNNER_KEYS
    }


def _optunas(system_attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in system_attrs.items() if not k.startswith(attrs.PREFIX)}


def _assert_same(under_hpo: list[FrozenTrial], in_optuna: list[FrozenTrial]) -> None:
    assert [t.number for t in under_hpo] == [t.number for t in in_optuna]
    for h, o in zip(under_hpo, in_optuna, strict=True):
        where = f"trial {h.number}"
        assert h.state == o.state, where
        assert h.params == o.params, where
        assert h.values == o.values, where
        assert h.intermediate_values == o.intermediate_values, where
        assert _users(h.user_attrs) == _users(o.user_attrs), where
        assert _optunas(h.system_attrs) == _optunas(o.system_attrs), where


def _states(trials: list[FrozenTrial]) -> set[TrialState]:
    return {t.state for t in trials}


def test_sklearn_cross_val_score_and_the_study_view(tmp_path: Path) -> None:
    """optuna-examples' sklearn_simple, which also records what it reads of ``trial.study``: the
    sampler and pruner the YAML names (not a worker's default MedianPruner), the directions, and
    the trials so far."""
    hpo_trials, plain = _run_both(
        tmp_path,
        "sklearn_objective",
        n_trials=4,
        sampler={"name": "tpe", "seed": 2},
        pruner={"name": "nop"},
    )
    _assert_same(hpo_trials, plain)
    first = hpo_trials[0].user_attrs
    assert first["study.pruner"] == "NopPruner" and first["study.sampler"] == "TPESampler"
    assert first["study.directions"] == ["MAXIMIZE"] and first["is_trial"] is True
    assert [t.user_attrs["study.n_trials_seen"] for t in hpo_trials] == [1, 2, 3, 4]
    assert _states(hpo_trials) == {TrialState.COMPLETE}


def test_isinstance_check_reports_and_prunes(tmp_path: Path) -> None:
    """An objective that reports only ``if isinstance(trial, optuna.trial.Trial)``: under hpo
    its intermediate values are stored and the pruner prunes, as in plain Optuna."""
    hpo_trials, plain = _run_both(
        tmp_path,
        "isinstance_objective",
        n_trials=5,
        sampler={"name": "random", "seed": 2},
        pruner={"name": "median", "kwargs": {"n_startup_trials": 2}},
    )
    _assert_same(hpo_trials, plain)
    assert all(t.intermediate_values for t in hpo_trials)
    assert _states(hpo_trials) == {TrialState.COMPLETE, TrialState.PRUNED}
    assert hpo_trials[0].user_attrs["study.pruner"] == "MedianPruner"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("library", "objective"),
    # LightGBM's callback also reads ``trial.study.direction`` to check the metric's sense.
    [("xgboost", "xgboost_objective"), ("lightgbm", "lightgbm_objective")],
)
def test_gradient_boosting_pruning_callback(tmp_path: Path, library: str, objective: str) -> None:
    pytest.importorskip(library)
    pytest.importorskip("optuna_integration")
    hpo_trials, plain = _run_both(
        tmp_path,
        objective,
        n_trials=8,
        sampler={"name": "tpe", "seed": 1},
        pruner={"name": "median", "kwargs": {"n_startup_trials": 2, "n_warmup_steps": 2}},
    )
    _assert_same(hpo_trials, plain)
    assert all(len(t.intermediate_values) >= 3 for t in hpo_trials)
    assert TrialState.COMPLETE in _states(hpo_trials)


@pytest.mark.slow
def test_lightning_pruning_callback(tmp_path: Path) -> None:
    pytest.importorskip("lightning")
    pytest.importorskip("optuna_integration")
    hpo_trials, plain = _run_both(
        tmp_path,
        "lightning_objective",
        n_trials=4,
        sampler={"name": "random", "seed": 3},
        pruner={"name": "median", "kwargs": {"n_startup_trials": 1, "n_warmup_steps": 1}},
    )
    _assert_same(hpo_trials, plain)
    assert all(t.intermediate_values for t in hpo_trials)


@pytest.mark.slow
def test_transformers_trainer_with_trial(tmp_path: Path) -> None:
    pytest.importorskip("accelerate")
    hpo_trials, plain = _run_both(
        tmp_path,
        "transformers_objective",
        n_trials=3,
        sampler={"name": "random", "seed": 0},
        pruner={"name": "median", "kwargs": {"n_startup_trials": 1, "n_warmup_steps": 0}},
        directions=["minimize"],
    )
    _assert_same(hpo_trials, plain)
    assert all(t.intermediate_values for t in hpo_trials)


def test_multi_objective_from_yaml_directions(tmp_path: Path) -> None:
    hpo_trials, plain = _run_both(
        tmp_path,
        "multi_objective",
        n_trials=6,
        sampler={"name": "nsga2", "seed": 0, "kwargs": {"population_size": 4}},
        directions=["minimize", "minimize"],
    )
    _assert_same(hpo_trials, plain)
    assert hpo_trials[0].user_attrs["study.directions"] == ["MINIMIZE", "MINIMIZE"]
    assert all(len(t.values) == 2 for t in hpo_trials)


def test_constraints_set_by_the_objective(tmp_path: Path) -> None:
    """optuna-examples' quadratic_constraint with Optuna 5's ``trial.set_constraint``: the
    constraint values land in the trial's system attributes as in plain Optuna, and NSGA-II
    reads them."""
    hpo_trials, plain = _run_both(
        tmp_path,
        "constrained_objective",
        n_trials=8,
        sampler={"name": "nsga2", "seed": 0, "kwargs": {"population_size": 4}},
        directions=["minimize", "minimize"],
    )
    _assert_same(hpo_trials, plain)
    assert all(set(t.constraints) == {"c0", "c1"} for t in hpo_trials)
    feasible = [t.user_attrs["feasible"] for t in hpo_trials]
    assert feasible == [all(v <= 0 for v in t.constraints.values()) for t in hpo_trials]


def test_study_stop_ends_the_run_after_the_running_trial(tmp_path: Path) -> None:
    """``trial.study.stop()`` as in Optuna: the trial that calls it completes, no trial starts
    after it, and the run ends with exit 0 saying why (n_trials is 10: 3 trials in both)."""
    hpo_trials, plain = _run_both(
        tmp_path,
        "stopping_objective",
        n_trials=10,
        sampler={"name": "random", "seed": 3},
        directions=["minimize"],
    )
    _assert_same(hpo_trials, plain)
    assert len(hpo_trials) == 3 and _states(hpo_trials) == {TrialState.COMPLETE}


def test_study_stop_with_two_workers_lets_the_other_trial_finish(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    cfg = write_config(
        tmp_path / "study.yaml",
        study="stop",
        objective=f"{EXAMPLES}:stopping_objective",
        run_dir=str(run_dir),
        n_trials=20,
        workers=2,
        direction="minimize",
        sampler={"name": "random", "seed": 3},
    )
    proc = run_hpo("run", str(cfg), "--quiet", timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "finished with exit code 0 (trial 2 called study.stop())" in proc.stdout, proc.stdout
    trials = load_study(run_dir, "stop").get_trials()
    # Trial 3 may have started beside trial 2; it finishes, and nothing starts after.
    assert len(trials) in (3, 4) and _states(trials) == {TrialState.COMPLETE}
    assert_no_run_processes(run_dir)
