"""End-to-end: each fault kind in a real worker process, through the real supervisor and SQLite.

Each test asserts the faulted trial's final state and tags, that its retry (where the policy
retries) links to it, that the study reached ``n_trials``, and that no process of the run
(workers, grandchildren) is alive afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from optuna.trial import TrialState

from tests.conftest import assert_no_run_processes, load_study, run_hpo, write_config

pytestmark = pytest.mark.slow

N_TRIALS = 4
FAULTED = 1

# fault -> (failure_class, state of the faulted trial, action, retried?)
EXPECTED: dict[str, tuple[str, TrialState, str, bool]] = {
    "cuda_illegal_access": ("cuda_context_corrupted", TrialState.FAIL, "retry", True),
    "device_assert": ("cuda_context_corrupted", TrialState.FAIL, "retry", True),
    "cudnn": ("cudnn", TrialState.FAIL, "retry", True),
    "oom": ("oom", TrialState.PRUNED, "prune", False),
    "raise": ("user_error", TrialState.FAIL, "fail", False),
    "sigsegv": ("segfault", TrialState.FAIL, "retry", True),
    "sigkill": ("host_oom", TrialState.PRUNED, "prune", False),
    "exit": ("worker_lost", TrialState.FAIL, "retry", True),
    "hang": ("timeout", TrialState.FAIL, "fail", False),
    "host_oom": ("host_oom", TrialState.PRUNED, "prune", False),
    "grandchild": ("worker_lost", TrialState.FAIL, "retry", True),
    "nan": ("numerical", TrialState.PRUNED, "prune", False),
}


def _run(run_dir: Path, tmp_path: Path, fault: str, **extra: Any) -> Any:
    cfg = write_config(
        tmp_path / "study.yaml",
        study="faults",
        objective="hpo.testing.objectives:fault_objective",
        objective_kwargs={"fault": fault, "fault_trials": [FAULTED]},
        run_dir=str(run_dir),
        n_trials=N_TRIALS,
        workers=2,
        direction="maximize",
        sampler={"name": "random", "seed": 1},
        **extra,
    )
    proc = run_hpo("run", str(cfg), "--quiet", timeout=240)
    return proc


@pytest.mark.parametrize("fault", sorted(EXPECTED))
def test_fault_kind(fault: str, run_dir: Path, tmp_path: Path) -> None:
    extra: dict[str, Any] = {}
    if fault == "hang":
        extra["timeout_per_trial"] = 3
    if fault == "host_oom":
        extra["max_host_mem_mb"] = 1500
    proc = _run(run_dir, tmp_path, fault, **extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    study = load_study(run_dir, "faults")
    trials = study.get_trials(deepcopy=False)
    states = [t.state for t in trials]
    assert sum(s in (TrialState.COMPLETE, TrialState.PRUNED) for s in states) == N_TRIALS
    assert TrialState.RUNNING not in states and TrialState.WAITING not in states

    fclass, fstate, action, retried = EXPECTED[fault]
    bad = trials[FAULTED]
    ua = bad.user_attrs
    assert bad.state == fstate, ua
    assert ua["failure_class"] == fclass, ua
    assert ua["hpo:failure_action"] == action
    for key in (
        "hpo:exception_type",
        "hpo:error_msg",
        "hpo:traceback",
        "hpo:exit_code",
        "hpo:signal",
        "hpo:log_path",
        "hpo:worker_pid",
        "hpo:host",
        "hpo:attempt",
        "hpo:duration_s",
        "hpo:cuda_error",
        "cuda_error",  # the seed-compatible keys, unprefixed too
        "cuda_error_type",
        "cuda_error_msg",
    ):
        assert key in ua, f"tag {key} missing: {sorted(ua)}"
    assert ua["hpo:attempt"] == 1
    # What the objective wrote before dying is kept.
    assert ua["progress"] == "started"
    assert bad.intermediate_values == {0: bad.params["x"]}
    assert Path(ua["hpo:log_path"]).exists()
    if fclass in ("cuda_context_corrupted", "cudnn", "oom"):
        assert ua["cuda_error"] is True and ua["cuda_error_type"] and ua["cuda_error_msg"]
    else:
        assert ua["cuda_error"] is False
    retries = [t for t in trials if t.user_attrs.get("hpo:retry_of") == FAULTED]
    if retried:
        assert len(retries) == 1
        r = retries[0]
        assert r.params == bad.params and r.user_attrs["hpo:attempt"] == 2
        assert r.system_attrs["failed_trial"] == FAULTED
        assert r.state == TrialState.COMPLETE
    else:
        assert not retries
    assert_no_run_processes(run_dir)


def test_prune_and_attrs_like_optimize(run_dir: Path, tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="p",
        objective="hpo.testing.objectives:fault_objective",
        objective_kwargs={"prune_trials": [0, 2]},
        run_dir=str(run_dir),
        n_trials=4,
        workers=1,
        sampler={"name": "random", "seed": 3},
    )
    proc = run_hpo("run", str(cfg), "--quiet")
    assert proc.returncode == 0, proc.stderr
    trials = load_study(run_dir, "p").get_trials()
    assert [t.state for t in trials] == [
        TrialState.PRUNED,
        TrialState.COMPLETE,
        TrialState.PRUNED,
        TrialState.COMPLETE,
    ]
    assert all(t.user_attrs["progress"] == "started" for t in trials)
    assert trials[1].value == trials[1].params["x"]
    assert "failure_class" not in trials[0].user_attrs


def test_always_failing_objective_trips_breaker(run_dir: Path) -> None:
    proc = run_hpo(
        "run",
        "--objective",
        "hpo.testing.objectives:always_raises",
        "--study",
        "b",
        "--run-dir",
        str(run_dir),
        "--n-trials",
        "50",
        "--workers",
        "1",
        "--quiet",
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "5 consecutive failures" in proc.stdout + proc.stderr
    assert "user_error" in proc.stdout + proc.stderr
    trials = load_study(run_dir, "b").get_trials()
    assert len(trials) == 5 and all(t.state == TrialState.FAIL for t in trials)
    assert_no_run_processes(run_dir)


@pytest.mark.parametrize(
    "kind,fclass",
    [("none", "user_error"), ("str", "user_error"), ("nan", "numerical"), ("inf", "numerical")],
)
def test_bad_return_values(kind: str, fclass: str, run_dir: Path, tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="r",
        objective="hpo.testing.objectives:returns_bad",
        objective_kwargs={"kind": kind},
        run_dir=str(run_dir),
        n_trials=1,
        workers=1,
        max_consecutive_failures=2,
    )
    proc = run_hpo("run", str(cfg), "--quiet")
    trials = load_study(run_dir, "r").get_trials()
    assert trials[0].user_attrs["failure_class"] == fclass
    assert "returned" in trials[0].user_attrs["hpo:error_msg"]
    if fclass == "user_error":
        assert proc.returncode == 4
    else:  # the only trial was pruned: n_trials reached, nothing learned
        assert proc.returncode == 6
        assert "no trial completed" in proc.stderr


def test_the_runner_never_overwrites_a_user_attribute(run_dir: Path, tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="own",
        objective="hpo.testing.objectives:sets_runner_named_attrs",
        run_dir=str(run_dir),
        n_trials=1,
        max_consecutive_failures=1,
    )
    proc = run_hpo("run", str(cfg), "--quiet")
    assert proc.returncode == 4, proc.stdout + proc.stderr  # one failure trips the breaker
    (t,) = load_study(run_dir, "own").get_trials()
    ua = t.user_attrs
    for key in ("attempt", "device", "host", "failure_class", "cuda_error"):
        assert ua[key] == f"mine:{key}", (key, ua)
    # The runner's own record is complete under its namespace.
    assert ua["hpo:failure_class"] == "user_error" and ua["hpo:attempt"] == 1
    assert ua["hpo:cuda_error"] is False and "cuda_error_type" in ua  # compat key not taken
    assert_no_run_processes(run_dir)


def test_unrecognised_texts_are_listed_and_cuda_codes_recorded(
    run_dir: Path, tmp_path: Path
) -> None:
    texts = ["zorglub frobnicated the quux", "CUDA error: an illegal instruction was encountered"]
    cfg = write_config(
        tmp_path / "s.yaml",
        study="u",
        objective="hpo.testing.objectives:raises_on_first_trials",
        objective_kwargs={"texts": texts},
        run_dir=str(run_dir),
        n_trials=3,
        sampler={"name": "random", "seed": 1},
    )
    proc = run_hpo("run", str(cfg), "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    trials = load_study(run_dir, "u").get_trials()
    strange, cuda = trials[0].user_attrs, trials[1].user_attrs
    assert strange["hpo:recognised"] is False and strange["failure_class"] == "user_error"
    assert strange["hpo:failure_summary"].startswith("not recognised")
    assert "zorglub" in strange["hpo:error_msg"]
    assert cuda["hpo:recognised"] is True and cuda["hpo:error_code"] == 715
    assert cuda["failure_class"] == "cuda_context_corrupted"
    listed = run_hpo("failures", str(cfg), "--unrecognised", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert [r["number"] for r in json.loads(listed.stdout)] == [0]
