"""The failure policy as a pure function: ``decide(result, context)`` from tables.

No storage, no process: results are built with ``build_result`` and decided in a ``Context``.
The expectations are the table in docs/failures.md ("The policy, situation by situation"),
parsed here, so the document and the code cannot drift apart.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from optuna.trial import TrialState

from hpo import attrs
from hpo.errors import ExitCode
from hpo.failures import (
    DEFAULT_POLICY,
    Action,
    Context,
    Decision,
    FailureClass,
    Imposed,
    Policy,
    build_result,
    decide,
    stop_message,
)
from hpo.outcome import Outcome, Status

DOC = Path(__file__).resolve().parents[1] / "docs" / "failures.md"

SITUATIONS = {
    "first": Context(attempt=1, on_gpu=True),
    "last retry": Context(attempt=2, on_gpu=True),
    "CPU": Context(attempt=1, on_gpu=False),
    "GPU, sticky history": Context(attempt=1, on_gpu=True, sticky_on_device=2),
    "breaker": Context(attempt=1, on_gpu=False, consecutive_failures=4),
}


def _doc_table(heading: str) -> list[list[str]]:
    """The first Markdown table after ``heading`` in docs/failures.md, as rows of cells."""
    section = DOC.read_text(encoding="utf-8").split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(section) if line.startswith("|"))
    rows = []
    for line in section[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))])
    return rows


def _policy_table() -> dict[tuple[str, str], str]:
    table = _doc_table("## The policy, situation by situation")
    header, body = table[0], table[2:]
    assert header[1:] == list(SITUATIONS), header
    return {
        (row[0].strip("`"), sit): cell
        for row in body
        for sit, cell in zip(header[1:], row[1:], strict=True)
    }


def render(d: Decision) -> str:
    parts = [d.state.name, d.action.value if d.action else "-"]
    parts += ["quarantine"] * bool(d.quarantine) + ["recycle"] * bool(d.recycle)
    parts += ["stop"] * bool(d.stop)
    return ", ".join(parts)


def failed(cls: FailureClass, **kw: object) -> object:
    return build_result(7, imposed=Imposed(cls, f"{cls.value} happened"), **kw)  # type: ignore[arg-type]


TABLE = _policy_table()


def test_decide_table_covers_every_class_and_situation() -> None:
    assert {c for c, _ in TABLE} == {c.value for c in FailureClass}
    assert len(TABLE) == len(FailureClass) * len(SITUATIONS)


@pytest.mark.parametrize(
    ("cls", "situation"),
    [(c, s) for c in FailureClass for s in SITUATIONS],
    ids=lambda v: v.value if isinstance(v, FailureClass) else v.replace(" ", "_").replace(",", ""),
)
def test_decide(cls: FailureClass, situation: str) -> None:
    decision = decide(failed(cls), SITUATIONS[situation])  # type: ignore[arg-type]
    assert render(decision) == TABLE[(cls.value, situation)]
    # Invariants of every failed decision.
    assert decision.tags[attrs.FAILURE_CLASS] == cls.value
    assert decision.tags[attrs.FAILURE_ACTION] == decision.action.value  # type: ignore[union-attr]
    assert decision.retry == (decision.action is Action.RETRY)
    assert decision.state in (TrialState.FAIL, TrialState.PRUNED)


def test_decide_default_actions_match_the_class_table_in_the_doc() -> None:
    table = _doc_table("## Classes")
    header = table[0]
    col = header.index("default action")
    documented = {row[0].strip("`"): row[col].strip("`") for row in table[2:]}
    assert documented == {c.value: a.value for c, a in DEFAULT_POLICY.items()}


def test_decide_complete_and_pruned_reset_the_streak_but_keep_the_failure_count() -> None:
    ctx = Context(consecutive_failures=3, failed_trials=2)
    done = build_result(1, outcome=Outcome(1, Status.COMPLETE, values=[0.5]))
    pruned = build_result(1, outcome=Outcome(1, Status.PRUNED))
    for result, state in ((done, TrialState.COMPLETE), (pruned, TrialState.PRUNED)):
        d = decide(result, ctx)
        assert (d.state, d.action, d.consecutive_failures, d.failed_trials) == (state, None, 0, 2)
        assert not d.tags and not d.recycle and not d.stop


def test_decide_retried_failures_do_not_count_as_consecutive() -> None:
    d = decide(failed(FailureClass.SEGFAULT), Context(consecutive_failures=4))
    assert d.retry and d.consecutive_failures == 4 and d.stop is None
    d = decide(failed(FailureClass.USER_ERROR), Context(consecutive_failures=4))
    assert d.consecutive_failures == 5 and d.stop == "5 consecutive failures"


def test_decide_max_failed_trials_counts_fail_states_including_retried_ones() -> None:
    ctx = Context(failed_trials=9, max_failed_trials=10, max_consecutive_failures=100)
    d = decide(failed(FailureClass.SEGFAULT), ctx)
    assert d.retry and d.failed_trials == 10
    assert d.stop == "10 failed trials (max_failed_trials=10)"
    d = decide(failed(FailureClass.OOM), ctx)  # PRUNED does not count
    assert d.failed_trials == 9 and d.stop is None


def test_decide_config_error_of_the_objective_stops_whatever_the_class() -> None:
    result = build_result(
        3,
        outcome=Outcome(
            3, Status.FAILED, exception_type="hpo.errors.ConfigError", message="no model at /m"
        ),
    )
    d = decide(result, Context())
    assert (d.state, d.action, d.stop_code) == (TrialState.FAIL, Action.STOP, ExitCode.CONFIG)
    assert d.stop == "the objective reported a configuration error"
    assert d.tags[attrs.FAILURE_NOTE] == "the objective reported a configuration error"


def test_decide_failed_health_probe_quarantines_after_one_sticky_error() -> None:
    d = decide(
        failed(FailureClass.CUDA_CONTEXT_CORRUPTED),
        Context(on_gpu=True, device_health="ECC errors: 2"),
    )
    assert d.quarantine == "health check failed: ECC errors: 2" and d.retry
    # The health of a GPU is not consulted for a CPU trial or a non-sticky class.
    assert (
        decide(failed(FailureClass.CUDNN), Context(on_gpu=True, device_health="x")).quarantine
        is None
    )


def test_decide_overrides_from_on_failure() -> None:
    ctx = Context(policy=Policy({"oom": "retry", "user_error": "stop"}))
    assert render(decide(failed(FailureClass.OOM), ctx)) == "FAIL, retry, recycle"
    d = decide(failed(FailureClass.USER_ERROR), ctx)
    assert render(d) == "FAIL, stop, stop" and d.stop == "policy stops the study on user_error"


def test_decide_tags_carry_the_seed_compatible_cuda_keys() -> None:
    result = build_result(
        5,
        outcome=Outcome(
            5,
            Status.FAILED,
            exception_type="torch.AcceleratorError",
            message="CUDA error: an illegal memory access was encountered\nmore",
        ),
    )
    tags = decide(result, Context()).tags
    assert tags[attrs.CUDA_ERROR] is True
    assert tags[attrs.CUDA_ERROR_TYPE] == "illegal_memory_access"
    assert tags[attrs.CUDA_ERROR_MSG] == "CUDA error: an illegal memory access was encountered"
    assert tags[attrs.STICKY] is True


def test_build_result_classifies_once_and_merges_exit_status() -> None:
    lost = build_result(4, exit_code=None, signal=11, worker_pid=99, log_tail="boom")
    assert lost.failure_class is FailureClass.SEGFAULT
    assert lost.message == "worker 99 died with signal 11 (SIGSEGV) without reporting a result"
    assert lost.signal_name == "SIGSEGV" and lost.traceback == "boom"
    # An outcome that arrived wins over the exit status.
    won = build_result(4, outcome=Outcome(4, Status.COMPLETE, values=[1.0]), signal=9)
    assert won.status is Status.COMPLETE and won.diagnosis is None


def test_decide_when_retries_run_out_only_parameter_caused_classes_are_pruned() -> None:
    d = decide(failed(FailureClass.SEGFAULT), Context(attempt=3, max_retries=2))
    assert d.tags[attrs.FAILURE_NOTE] == "retries exhausted after 3 attempt(s)"
    assert re.fullmatch(r"FAIL, fail, recycle", render(d))
    ctx = Context(attempt=3, max_retries=2, policy=Policy({"oom": "retry"}))
    assert render(decide(failed(FailureClass.OOM), ctx)) == "PRUNED, prune, recycle"


@pytest.mark.parametrize(
    ("heading", "schema"),
    [
        ("### User attributes on every trial the runner finishes", attrs.TRIAL_ATTRS),
        (
            "### User attributes on every trial that did not complete because it failed",
            attrs.FAILURE_ATTRS,
        ),
    ],
)
def test_documented_trial_attributes_are_the_schema(
    heading: str, schema: tuple[attrs.Attr, ...]
) -> None:
    table = _doc_table(heading)
    documented = {row[0].strip("`"): row[1] for row in table[2:]}
    assert documented == {a.key: a.type for a in schema}


def test_documented_retry_attributes_are_the_schema() -> None:
    table = _doc_table("### Retries")
    documented = {row[1].strip("`") for row in table[2:] if row[0] == "user attr"}
    assert documented == {a.key for a in attrs.RETRY_ATTRS}
    linked = {row[1].strip("`") for row in table[2:] if row[0] == "user attr of the failed trial"}
    assert linked == {attrs.RETRIED_AS}


def test_decide_writes_exactly_the_documented_failure_tags() -> None:
    d = decide(failed(FailureClass.SEGFAULT), Context(attempt=9, max_retries=1))
    assert set(d.tags) == {a.key for a in attrs.FAILURE_ATTRS}


def test_readers_fall_back_to_hpo_0_1_keys_only_for_trials_without_namespaced_keys() -> None:
    legacy = {"failure_class": "oom", "attempt": 2}  # written by hpo 0.1
    assert (
        attrs.read(legacy, attrs.FAILURE_CLASS) == "oom" and attrs.read(legacy, attrs.ATTEMPT) == 2
    )
    # A trial the runner wrote now: the user's own "attempt" is never read as the runner's.
    mixed = {"attempt": "mine", "hpo:failure_class": "oom"}
    assert attrs.read(mixed, attrs.ATTEMPT) is None
    assert attrs.read(mixed, attrs.FAILURE_CLASS) == "oom"


# -- issue 13: whose fault, the two budgets, the breaker's window ------------------------------
@pytest.mark.parametrize(
    ("cls", "ctx", "expected"),
    [
        (FailureClass.SUPERVISOR_LOST, Context(), "FAIL, retry, recycle"),
        (FailureClass.INTERRUPTED, Context(attempt=5, infra_retries=2), "FAIL, retry, recycle"),
        (FailureClass.SUPERVISOR_LOST, Context(attempt=4, infra_retries=3), "FAIL, fail, recycle"),
        (FailureClass.OOM, Context(on_gpu=True, gpu_shared=True), "FAIL, retry, recycle"),
        (
            FailureClass.OOM,
            Context(on_gpu=True, gpu_shared=True, infra_retries=3),
            "FAIL, fail, recycle",
        ),
        (
            FailureClass.CUDA_CONTEXT_CORRUPTED,
            Context(on_gpu=True, device_lost=True, attempt=9, infra_retries=0),
            "FAIL, retry, recycle",
        ),
        (FailureClass.TIMEOUT, Context(on_gpu=True, device_lost=True), "FAIL, retry, recycle"),
    ],
    ids=[
        "lost",
        "interrupted-twice",
        "infra-budget-spent",
        "shared-oom",
        "shared-oom-spent",
        "device-lost",
        "device-lost-hang",
    ],
)
def test_decide_not_the_trials_fault(cls: FailureClass, ctx: Context, expected: str) -> None:
    d = decide(failed(cls), replace(ctx, consecutive_failures=4, failed_trials=99))
    assert render(d) == expected
    assert d.blameless and d.tags[attrs.BLAMELESS] is True
    assert d.state is not TrialState.PRUNED  # samplers never learn from it
    # ... and it never counts: not the streak, not max_failed_trials, not the window.
    assert (d.consecutive_failures, d.failed_trials, d.recent, d.stop) == (4, 99, (), None)
    assert d.alone == (cls is FailureClass.OOM and d.retry)


@pytest.mark.parametrize(
    ("held_mb", "blameless"),
    [(None, False), (0.0, False), (255.0, False), (256.0, True), (900.0, True)],
)
def test_decide_an_oom_in_a_worker_holding_earlier_trials_memory_is_not_the_trials(
    held_mb: float | None, blameless: bool
) -> None:
    """Issue 14 item 3: what a worker's earlier trials left alive (``gpu_mem_at_start_mb``) is
    not the trial's doing; its OOM is retried in a new worker instead of PRUNED."""
    result = replace(failed(FailureClass.OOM), gpu_mem_at_start_mb=held_mb)  # type: ignore[type-var]
    d = decide(result, Context(on_gpu=True))
    assert d.blameless is blameless
    if blameless:
        assert render(d) == "FAIL, retry, recycle" and not d.alone
        assert f"held {held_mb:.0f} MB left by its earlier trials" in d.note
    else:
        assert render(d) == "PRUNED, prune, recycle"
    other = replace(failed(FailureClass.SEGFAULT), gpu_mem_at_start_mb=held_mb)  # type: ignore[type-var]
    assert not decide(other, Context(on_gpu=True)).blameless  # only an OOM is excused


def test_decide_a_lost_gpu_does_not_excuse_a_bug_in_the_objective() -> None:
    d = decide(failed(FailureClass.USER_ERROR), Context(on_gpu=True, device_lost=True))
    assert not d.blameless and render(d) == "FAIL, fail"


def test_decide_own_retries_are_counted_apart_from_infra_retries() -> None:
    # Attempt 3 after two interruptions: the trial has used none of its own max_retries.
    d = decide(failed(FailureClass.SEGFAULT), Context(attempt=3, infra_retries=2, max_retries=1))
    assert d.retry and not d.blameless


def test_decide_window_trips_when_one_class_dominates_whatever_its_action() -> None:
    ctx = Context(breaker_window=20, breaker_share=0.8, max_retries=100)
    recent: tuple[str, ...] = ()
    stops = []
    for n in range(30):
        d = decide(failed(FailureClass.SEGFAULT), replace(ctx, recent=recent, attempt=1 + n % 2))
        recent = d.recent
        stops.append(d.stop)
    first = next(i for i, s in enumerate(stops) if s)
    assert first == 19 and stops[first] == "100% of the last 20 attempts failed as segfault"
    # Successes in the window keep a flaky-but-useful objective running.
    mixed = tuple(["segfault"] * 14 + ["ok"] * 5)  # with this one: 15 of 20, 75%
    assert decide(failed(FailureClass.SEGFAULT), replace(ctx, recent=mixed)).stop is None
    # Pruned OOMs count too: a search space that never fits is stopped, not burnt.
    many_oom = tuple(["oom"] * 19)
    d = decide(failed(FailureClass.OOM), replace(ctx, recent=many_oom))
    assert d.state == TrialState.PRUNED and d.stop == "100% of the last 20 attempts failed as oom"


def test_decide_a_success_enters_the_window_as_ok() -> None:
    done = build_result(1, outcome=Outcome(1, Status.COMPLETE, values=[0.5]))
    assert decide(done, Context(recent=("segfault",))).recent == ("segfault", "ok")


def test_stop_message_names_class_sample_hint_log_and_next_command() -> None:
    result = build_result(
        12,
        outcome=Outcome(
            12,
            Status.FAILED,
            exception_type="torch.AcceleratorError",
            message="CUDA error: an illegal instruction was encountered",
        ),
        log_path="/runs/x/logs/trial-000012.log",
    )
    d = decide(result, Context(max_retries=0, max_consecutive_failures=1))
    msg = stop_message(d, result)
    assert "1 consecutive failures" in msg and "cuda_context_corrupted" in msg
    assert "illegal instruction" in msg and "trial-000012.log" in msg
    assert "hint:" in msg and "hpo replay 12 and hpo doctor" in msg


# -- issue 14 point 4: the WSL2 expandable-segments failure is the platform's, decided here -----
WSL_TEXT = "CUDA driver error: unknown error"


@pytest.mark.parametrize(
    ("message", "allocator", "platform"),
    [
        (WSL_TEXT, {"wsl": True, "expandable_segments": True}, True),
        ("CUDA driver error: device not ready", {"wsl": True, "expandable_segments": True}, True),
        (WSL_TEXT, {"wsl": False, "expandable_segments": True}, False),  # not WSL: real
        (WSL_TEXT, {"wsl": True, "expandable_segments": False}, False),  # already without
        (WSL_TEXT, None, False),  # not a worker's first GPU trial: nothing reported
        ("CUDA error: out of memory", {"wsl": True, "expandable_segments": True}, False),
    ],
    ids=["unknown", "not-ready", "linux", "without", "later-trial", "other-error"],
)
def test_decide_the_wsl2_expandable_segments_failure(
    message: str, allocator: dict[str, bool] | None, platform: bool
) -> None:
    outcome = Outcome(0, Status.FAILED, exception_type="torch.AcceleratorError", message=message)
    outcome.extra["allocator"] = allocator
    result = build_result(0, outcome=outcome)
    d = decide(result, Context(on_gpu=True, consecutive_failures=4, recent=("ok",)))
    assert d.no_expandable == platform
    if platform:
        # Not the trial's: a blameless retry where it cannot be placed again unfinished, the
        # worker recycled, nothing counted by the breaker.
        assert d.blameless and d.retry and d.recycle and d.state is not TrialState.PRUNED
        assert "pytorch#192330" in d.note
        assert (d.consecutive_failures, d.recent, d.stop) == (4, ("ok",), None)
    else:
        assert not d.blameless or "pytorch#192330" not in d.note
