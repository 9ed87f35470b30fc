"""The supervisor's decisions carried out on a real storage, without processes.

Each outcome is merged into a ``TrialResult`` and fed to ``Supervisor._finish``, the one place
trials are finished (decide, tag, tell, retry, breaker); the test asserts exactly what the
storage holds afterwards. The pure policy is tested from tables in test_policy.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.trial import TrialState

from hpo.config import load_config
from hpo.devices import NullPlanner
from hpo.events import EventLog
from hpo.failures import build_result
from hpo.outcome import Outcome, Status
from hpo.runstats import RunStats
from hpo.storage import StudyStore
from hpo.supervisor import ExitCode, Supervisor


@dataclass
class Run:
    """A trial asked from the store, as the supervisor holds it."""

    number: int
    attempt: int = 1


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
    url = f"sqlite:///{tmp_path / 'd.db'}"
    sup.store = StudyStore(optuna.create_study(study_name="d", storage=url), url)
    sup.events = EventLog(tmp_path / "events.jsonl")
    sup.stats = RunStats(sup.events, ["minimize"])
    sup.planner = NullPlanner(1, hide_gpus=True)
    return sup


def _run(sup: Supervisor, attempt: int = 1, params: dict[str, float] | None = None) -> Run:
    asked = sup.store.ask({"x": optuna.distributions.FloatDistribution(0, 1)})
    return Run(asked.number, attempt)


def _failed(run: Run, exc_type: str | None, message: str) -> Outcome:
    return Outcome(
        trial_number=run.number,
        status=Status.FAILED,
        exception_type=exc_type,
        message=message,
        worker_pid=1,
    )


def record(sup: Supervisor, run: Run, outcome: Outcome) -> str | None:
    """Finish ``run`` with ``outcome``; returns the reason to recycle its worker, if any."""
    result = build_result(run.number, outcome=outcome, log_path="/dev/null")
    return sup._finish(result, {"hpo:attempt": run.attempt}, None, None).recycle


def test_retry_then_fail_when_retries_are_exhausted(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, max_retries=1)
    first = _run(sup)
    reason = record(
        sup,
        first,
        _failed(
            first, "torch.AcceleratorError", "CUDA error: an illegal memory access was encountered"
        ),
    )
    assert reason is not None  # the worker is replaced after a sticky error
    t0 = sup.store.study.trials[0]
    assert t0.state == TrialState.FAIL and t0.user_attrs["hpo:failure_action"] == "retry"
    waiting = [t for t in sup.store.study.trials if t.state == TrialState.WAITING]
    assert len(waiting) == 1 and waiting[0].user_attrs == {
        "hpo:retry_of": 0,
        "hpo:attempt": 2,
        "hpo:retry_reason": "cuda_context_corrupted",
        "hpo:infra_retries": 0,
    }
    assert waiting[0].params == t0.params
    assert optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number(waiting[0]) == 0
    run2 = _run(sup, attempt=2)  # the store takes the WAITING retry first
    assert run2.number == waiting[0].number
    record(
        sup,
        run2,
        _failed(
            run2, "torch.AcceleratorError", "CUDA error: an illegal memory access was encountered"
        ),
    )
    t1 = sup.store.study.trials[run2.number]
    # A crash is not caused by the parameters: when retries run out it is FAIL, never PRUNED.
    assert t1.state == TrialState.FAIL and t1.user_attrs["hpo:failure_action"] == "fail"
    assert "retries exhausted" in t1.user_attrs["hpo:failure_note"]
    assert not [t for t in sup.store.study.trials if t.state == TrialState.WAITING]
    assert sup.stopping is None


def test_consecutive_user_errors_trip_the_breaker_exactly_at_the_limit(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, max_consecutive_failures=3)
    for i in range(2):
        run = _run(sup)
        record(sup, run, _failed(run, "ValueError", "bad value"))
        assert sup.stopping is None, i
    run = _run(sup)
    record(sup, run, _failed(run, "ValueError", "bad value"))
    assert sup.stopping == ExitCode.FAILURES
    assert "3 consecutive failures" in sup.stop_message and "user_error" in sup.stop_message


def test_a_success_resets_the_breaker_and_prunable_failures_do_not_count(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, max_consecutive_failures=2)
    for exc, msg in [
        ("ValueError", "x"),
        ("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB"),
    ]:
        run = _run(sup)
        record(sup, run, _failed(run, exc, msg))
    assert sup.stopping is None  # the OOM was pruned, not a failure of the objective
    run = _run(sup)
    record(
        sup,
        run,
        Outcome(trial_number=run.number, status=Status.COMPLETE, values=[0.5], worker_pid=1),
    )
    run = _run(sup)
    record(sup, run, _failed(run, "ValueError", "x"))
    assert sup.stopping is None
    states = [t.state for t in sup.store.study.trials]
    assert states == [TrialState.FAIL, TrialState.PRUNED, TrialState.COMPLETE, TrialState.FAIL]


def test_policy_override_and_stop(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, on_failure={"oom": "retry", "numerical": "stop"})
    run = _run(sup)
    record(sup, run, _failed(run, "torch.OutOfMemoryError", "CUDA out of memory."))
    assert sup.store.study.trials[0].user_attrs["hpo:failure_action"] == "retry"
    run = _run(sup)
    record(
        sup,
        run,
        _failed(run, "ValueError", "The objective returned nan, which is not a finite number"),
    )
    assert (
        sup.stopping == ExitCode.FAILURES
        and "policy stops the study on numerical" in sup.stop_message
    )


def test_quarantine_without_a_gpu_fails_the_trial(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path)
    run = _run(sup)
    record(sup, run, _failed(run, "RuntimeError", "CUDA error: no CUDA-capable device is detected"))
    t = sup.store.study.trials[0]
    assert t.state == TrialState.FAIL and t.user_attrs["failure_class"] == "device_unavailable"
    assert (
        t.user_attrs["hpo:failure_action"] == "fail"
        and "CPU run" in t.user_attrs["hpo:failure_note"]
    )


def test_config_error_raised_by_the_objective_stops_the_run(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path)
    run = _run(sup)
    record(
        sup,
        run,
        _failed(
            run,
            "hpo.errors.ConfigError",
            "model 'roberta-base' is not in the local Hugging Face cache",
        ),
    )
    assert sup.stopping == ExitCode.CONFIG  # a configuration error, not a breaker trip
    assert sup.store.study.trials[0].user_attrs["hpo:failure_action"] == "stop"


@pytest.mark.parametrize("status", [Status.COMPLETE, Status.PRUNED])
def test_recording_twice_is_idempotent(tmp_path: Path, status: Status) -> None:
    sup = _supervisor(tmp_path)
    run = _run(sup)
    out = Outcome(
        trial_number=run.number,
        status=status,
        values=[1.0] if status is Status.COMPLETE else None,
        worker_pid=1,
    )
    record(sup, run, out)
    record(sup, run, out)  # e.g. a resume telling an outcome that was already told
    t = sup.store.study.trials[0]
    assert t.state == (TrialState.COMPLETE if status is Status.COMPLETE else TrialState.PRUNED)
    assert len(sup.store.study.trials) == 1
