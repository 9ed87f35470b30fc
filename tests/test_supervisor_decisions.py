"""The supervisor's decisions without processes: scripted outcomes into ``Supervisor.record``.

Mechanism (processes) is tested end to end elsewhere; here each outcome is fed straight to the
one place trials are finished, and the test asserts exactly what the storage holds afterwards:
states, tags, retries, and when the circuit breaker trips.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.trial import TrialState

from hpo.child import TrialSpec
from hpo.config import load_config
from hpo.events import EventLog
from hpo.outcome import Outcome, Status
from hpo.supervisor import ExitCode, Running, Supervisor


def _supervisor(tmp_path: Path, **overrides: Any) -> Supervisor:
    cfg = load_config(
        None,
        {
            "objective": "hpo.testing.objectives:quadratic",
            "study": "d",
            "run_dir": str(tmp_path / "r"),
            "n_trials": 50,
            **overrides,
        },
    )
    sup = Supervisor(cfg)
    sup.study = optuna.create_study(study_name="d", storage=f"sqlite:///{tmp_path / 'd.db'}")
    sup.events = EventLog(tmp_path / "events.jsonl")
    return sup


def _run(sup: Supervisor, attempt: int = 1, params: dict[str, float] | None = None) -> Running:
    trial = sup.study.ask()
    trial.suggest_float("x", 0, 1) if params is None else [
        trial.suggest_float(k, 0, 1) for k in params
    ]
    spec = TrialSpec(
        number=trial.number,
        trial_id=trial._trial_id,
        n_objectives=1,
        log_path="/dev/null",
        outcome_path="",
    )
    return Running(trial=trial, spec=spec, attempt=attempt, started=time.monotonic(), device=None)


def _failed(run: Running, exc_type: str | None, message: str) -> Outcome:
    return Outcome(
        trial_number=run.spec.number,
        status=Status.FAILED,
        exception_type=exc_type,
        message=message,
        worker_pid=1,
    )


def test_retry_then_prune_when_retries_are_exhausted(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, max_retries=1)
    first = _run(sup)
    reason = sup.record(
        first,
        _failed(
            first, "torch.AcceleratorError", "CUDA error: an illegal memory access was encountered"
        ),
    )
    assert reason is not None  # the worker is replaced after a sticky error
    t0 = sup.study.trials[0]
    assert t0.state == TrialState.FAIL and t0.user_attrs["failure_action"] == "retry"
    waiting = [t for t in sup.study.trials if t.state == TrialState.WAITING]
    assert len(waiting) == 1 and waiting[0].user_attrs == {
        "retry_of": 0,
        "attempt": 2,
        "retry_reason": "cuda_context_corrupted",
    }
    assert waiting[0].params == t0.params
    assert optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number(waiting[0]) == 0
    second = sup.study.ask()  # takes the WAITING retry first
    assert second.number == waiting[0].number
    spec = TrialSpec(
        number=second.number,
        trial_id=second._trial_id,
        n_objectives=1,
        log_path="",
        outcome_path="",
    )
    run2 = Running(trial=second, spec=spec, attempt=2, started=time.monotonic(), device=None)
    sup.record(
        run2,
        _failed(
            run2, "torch.AcceleratorError", "CUDA error: an illegal memory access was encountered"
        ),
    )
    t1 = sup.study.trials[second.number]
    assert t1.state == TrialState.PRUNED and t1.user_attrs["failure_action"] == "prune"
    assert "retries exhausted" in t1.user_attrs["failure_note"]
    assert not [t for t in sup.study.trials if t.state == TrialState.WAITING]
    assert sup.stopping is None


def test_consecutive_user_errors_trip_the_breaker_exactly_at_the_limit(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, max_consecutive_failures=3)
    for i in range(2):
        run = _run(sup)
        sup.record(run, _failed(run, "ValueError", "bad value"))
        assert sup.stopping is None, i
    run = _run(sup)
    sup.record(run, _failed(run, "ValueError", "bad value"))
    assert sup.stopping == ExitCode.FAILURES
    assert "3 consecutive failures" in sup.stop_message and "user_error" in sup.stop_message


def test_a_success_resets_the_breaker_and_prunable_failures_do_not_count(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, max_consecutive_failures=2)
    for exc, msg in [
        ("ValueError", "x"),
        ("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB"),
    ]:
        run = _run(sup)
        sup.record(run, _failed(run, exc, msg))
    assert sup.stopping is None  # the OOM was pruned, not a failure of the objective
    run = _run(sup)
    sup.record(
        run,
        Outcome(trial_number=run.spec.number, status=Status.COMPLETE, values=[0.5], worker_pid=1),
    )
    run = _run(sup)
    sup.record(run, _failed(run, "ValueError", "x"))
    assert sup.stopping is None
    states = [t.state for t in sup.study.trials]
    assert states == [TrialState.FAIL, TrialState.PRUNED, TrialState.COMPLETE, TrialState.FAIL]


def test_policy_override_and_stop(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, on_failure={"oom": "retry", "numerical": "stop"})
    run = _run(sup)
    sup.record(run, _failed(run, "torch.OutOfMemoryError", "CUDA out of memory."))
    assert sup.study.trials[0].user_attrs["failure_action"] == "retry"
    run = _run(sup)
    sup.record(
        run, _failed(run, "ValueError", "The objective returned nan, which is not a finite number")
    )
    assert (
        sup.stopping == ExitCode.FAILURES
        and "policy stops the study on numerical" in sup.stop_message
    )


def test_quarantine_without_a_gpu_fails_the_trial(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path)
    run = _run(sup)
    sup.record(run, _failed(run, "RuntimeError", "CUDA error: no CUDA-capable device is detected"))
    t = sup.study.trials[0]
    assert t.state == TrialState.FAIL and t.user_attrs["failure_class"] == "device_unavailable"
    assert t.user_attrs["failure_action"] == "fail" and "CPU run" in t.user_attrs["failure_note"]


def test_config_error_raised_by_the_objective_stops_the_run(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path)
    run = _run(sup)
    sup.record(
        run,
        _failed(
            run,
            "hpo.errors.ConfigError",
            "model 'roberta-base' is not in the local Hugging Face cache",
        ),
    )
    assert sup.stopping == ExitCode.FAILURES
    assert sup.study.trials[0].user_attrs["failure_action"] == "stop"


@pytest.mark.parametrize("status", [Status.COMPLETE, Status.PRUNED])
def test_recording_twice_is_idempotent(tmp_path: Path, status: Status) -> None:
    sup = _supervisor(tmp_path)
    run = _run(sup)
    out = Outcome(
        trial_number=run.spec.number,
        status=status,
        values=[1.0] if status is Status.COMPLETE else None,
        worker_pid=1,
    )
    sup.record(run, out)
    sup.record(run, out)  # e.g. a resume telling an outcome that was already told
    t = sup.study.trials[0]
    assert t.state == (TrialState.COMPLETE if status is Status.COMPLETE else TrialState.PRUNED)
    assert len(sup.study.trials) == 1
