"""The failure policy as a pure function: :func:`decide` turns a :class:`TrialResult` and the
:class:`Context` it happened in into a :class:`Decision`.

No storage, no processes, no clock: the supervisor gathers the context (attempt, device kind,
the breaker's counters, the device's sticky history and health), calls :func:`decide`, and
carries the decision out (tell the storage, queue the retry, recycle the worker, quarantine the
GPU, stop the run). The tests feed it tables; docs/failures.md's tables are checked against it.

The rules, in order:

1. COMPLETE and PRUNED (by the objective) are final; they reset the failure streak.
2. A failed trial gets its class's action from the :class:`Policy` (``on_failure`` overrides
   over :data:`~hpo.failures.DEFAULT_POLICY`). An objective that raises ``hpo.errors.ConfigError``
   (a missing model, bad data, a sequence returned to a single-objective study) stops the run
   with exit 2 whatever its class.
3. **Not the trial's fault** (:data:`BLAMELESS`, an OOM on a GPU shared with other trials, a
   GPU taken out of rotation while the trial ran): retried with the same parameters on a
   separate budget (``max_infra_retries``), never PRUNED (samplers must not learn from it),
   never counted by the breaker. A shared-GPU OOM is retried alone on a GPU; an OOM in a
   worker that held at least :data:`INHERITED_OOM_MB` from its earlier trials when the trial
   started is retried in a new worker (the OOM recycles the old one). The platform's fault
   too: a worker's first allocation failing under expandable segments on WSL2 (pytorch#192330,
   :func:`~hpo.failures.rules.expandable_segments_failure` on the allocator the worker
   reported): the decision says ``no_expandable``: the GPU's workers restart without them and
   the attempt does not count (the trial is placed again, unfinished).
4. ``quarantine`` on a GPU retries the trial and takes the GPU out of rotation; on the CPU it
   fails the trial (there is no device to quarantine).
5. A sticky error on a GPU counts against that GPU: a failed health probe, or
   ``quarantine_after`` sticky errors within ``quarantine_window_s``, quarantines it.
6. ``retry`` retries while the trial's own failures are within ``max_retries``; after that the
   trial is PRUNED if the parameters caused the failure (:data:`CAUSED_BY_PARAMS`), else FAIL.
7. The breaker: ``stop``; ``max_consecutive_failures`` lineage-ending failures in a row (a
   retried failure is not yet a verdict); one class making up ``breaker.share`` of the last
   ``breaker.window`` attempts, whatever its action; ``max_failed_trials`` FAIL trials.
8. The worker is recycled after anything but a plain Python-level error of the objective
   (``user_error``, ``data_error``, ``numerical`` that are neither sticky nor from CUDA).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from optuna.trial import TrialState

from hpo import attrs
from hpo.errors import ExitCode
from hpo.failures.classes import DEFAULT_POLICY, Action, FailureClass
from hpo.failures.result import TrialResult
from hpo.failures.rules import expandable_segments_failure
from hpo.outcome import Status

#: Exception types by which an objective says its configuration is wrong: every other trial
#: would fail the same way, so the run stops.
CONFIG_ERRORS = frozenset({"hpo.errors.ConfigError", "hpo.errors.ObjectiveLoadError"})

#: Failures that are never the trial's fault: retried on their own budget, never PRUNED.
BLAMELESS = frozenset({FailureClass.SUPERVISOR_LOST, FailureClass.INTERRUPTED})

#: GPU memory a worker may hold at a trial's start (left alive by its earlier trials) before
#: an OOM in that trial is no longer taken as the trial's own fault.
INHERITED_OOM_MB = 256.0

#: Failures the hyperparameters cause: the only ones that may end PRUNED (samplers learn).
CAUSED_BY_PARAMS = frozenset({FailureClass.OOM, FailureClass.NUMERICAL, FailureClass.HOST_OOM})

#: Non-CUDA classes a failing GPU can cause (a hang, a crash, a vanished worker).
DEVICE_CAUSED = frozenset({FailureClass.TIMEOUT, FailureClass.SEGFAULT, FailureClass.WORKER_LOST})

#: Classes after which the worker may run another trial (when not sticky and not from CUDA).
REUSABLE_AFTER = frozenset(
    {FailureClass.USER_ERROR, FailureClass.DATA_ERROR, FailureClass.NUMERICAL}
)


def _normalise_token(value: object) -> str | None:
    if isinstance(value, enum.Enum):
        value = value.value
    if not isinstance(value, str):
        return None
    return value.strip().lower().replace("-", "_").replace(" ", "_")


class Policy:
    """Which action each failure class gets: :data:`DEFAULT_POLICY` with overrides.

    ``overrides`` is the study YAML's ``on_failure`` mapping, e.g. ``{"oom": "retry"}``.
    Keys and values are case-insensitive and may use ``-`` for ``_``. A bad key or value
    raises :class:`ValueError` with a one-line message that names it.
    """

    __slots__ = ("_actions",)

    def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
        actions = dict(DEFAULT_POLICY)
        if overrides is not None:
            if not isinstance(overrides, Mapping):
                raise ValueError(
                    "on_failure: expected a mapping of failure class to action, got "
                    f"{type(overrides).__name__}"
                )
            known_classes = ", ".join(c.value for c in FailureClass)
            known_actions = ", ".join(a.value for a in Action)
            for key, value in overrides.items():
                key_token = _normalise_token(key)
                if key_token not in FailureClass._value2member_map_:
                    raise ValueError(
                        f"on_failure: unknown failure class {key!r} (known: {known_classes})"
                    )
                failure_class = FailureClass(key_token)
                value_token = _normalise_token(value)
                if value_token not in Action._value2member_map_:
                    raise ValueError(
                        f"on_failure.{failure_class.value}: unknown action {value!r} "
                        f"(known: {known_actions})"
                    )
                actions[failure_class] = Action(value_token)
        self._actions: Mapping[FailureClass, Action] = MappingProxyType(actions)

    def action_for(self, failure_class: FailureClass) -> Action:
        """The action for ``failure_class`` (a :class:`FailureClass` or its value)."""
        return self._actions[FailureClass(failure_class)]

    def as_dict(self) -> dict[str, str]:
        """Every class with its action, as plain strings (for tags and reports)."""
        return {c.value: a.value for c, a in self._actions.items()}

    def overrides(self) -> dict[str, str]:
        """Only the classes whose action differs from :data:`DEFAULT_POLICY`."""
        return {c.value: a.value for c, a in self._actions.items() if DEFAULT_POLICY[c] is not a}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Policy):
            return NotImplemented
        return dict(self._actions) == dict(other._actions)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.as_dict().items())))

    def __repr__(self) -> str:
        return f"Policy({self.overrides()!r})"


@dataclass(frozen=True)
class Context:
    """What a decision depends on besides the result itself.

    ``attempt`` is 1 for a first run; ``infra_retries`` how many of the earlier attempts of
    these parameters ended for reasons not the trial's own. ``consecutive_failures``,
    ``failed_trials`` and ``recent`` (the classes of this run's latest attempts, ``"ok"`` for a
    success) are the breaker's state *before* this result. ``sticky_on_device`` counts the
    sticky errors on the trial's GPU within ``quarantine_window_s`` before this one;
    ``device_health`` is why the GPU's health probe failed, or None. ``gpu_shared``: other
    trials ran on the same GPU meanwhile; ``device_lost``: the GPU was taken out of rotation
    while the trial ran.
    """

    attempt: int = 1
    infra_retries: int = 0
    on_gpu: bool = False
    gpu_shared: bool = False
    device_lost: bool = False
    consecutive_failures: int = 0
    failed_trials: int = 0
    recent: tuple[str, ...] = ()
    sticky_on_device: int = 0
    device_health: str | None = None
    max_retries: int = 1
    max_infra_retries: int = 3
    max_consecutive_failures: int = 5
    max_failed_trials: int = 100
    breaker_window: int = 20
    breaker_share: float = 0.8
    quarantine_after: int = 3
    quarantine_window_s: float = 600.0
    policy: Policy = field(default_factory=lambda: Policy())


@dataclass(frozen=True)
class Decision:
    """What happens to a trial and to the run. Carried out by the supervisor, in this order:
    tag (``tags``) and tell (``state``), queue the retry, quarantine, recycle, stop.

    ``action`` is what the runner did (the ``failure_action`` tag; ``None`` for a trial that
    completed or pruned itself). ``blameless``: not the trial's fault (rule 3); its retry is
    ``alone`` on a GPU when sharing caused it. ``consecutive_failures``, ``failed_trials`` and
    ``recent`` are the breaker's state *after* this trial. ``stop`` is why the run stops (exit
    ``stop_code``), or None. ``no_expandable``: the trial's GPU must run its workers without
    expandable segments from now on, and the attempt does not count: a supervisor still holding
    the trial places it again unfinished instead of telling the storage (where it cannot, the
    rest of the decision, a blameless retry, stands).
    """

    state: TrialState
    action: Action | None = None
    retry: bool = False
    alone: bool = False
    blameless: bool = False
    recycle: str | None = None
    quarantine: str | None = None
    stop: str | None = None
    stop_code: ExitCode = ExitCode.FAILURES
    note: str = ""
    consecutive_failures: int = 0
    failed_trials: int = 0
    recent: tuple[str, ...] = ()
    tags: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    no_expandable: bool = False


def _expandable_segments_fault(result: TrialResult) -> bool:
    """pytorch#192330, judged on the allocator the worker reported with its first GPU trial."""
    alloc = result.allocator or {}
    text = "\n".join((result.message, result.traceback))
    expandable = alloc.get("expandable_segments")
    return expandable_segments_failure(text, wsl=bool(alloc.get("wsl")), expandable=expandable)


def _blame(result: TrialResult, ctx: Context) -> str | None:
    """Why a failure is not the trial's fault, or None when it may be."""
    cls = result.failure_class
    if result.exception_type in CONFIG_ERRORS or cls is None:
        return None
    if cls in BLAMELESS:
        return f"{cls.value} is not the trial's fault"
    if _expandable_segments_fault(result):
        return "expandable segments fail under WSL2 (pytorch#192330): placed again without them"
    if ctx.device_lost and (result.diagnosis and result.diagnosis.cuda or cls in DEVICE_CAUSED):
        return "its GPU was taken out of rotation while it ran"
    if cls is FailureClass.OOM and ctx.gpu_shared:
        return "out of memory on a GPU shared with other trials: retried alone"
    inherited = result.gpu_mem_at_start_mb or 0.0
    if cls is FailureClass.OOM and inherited >= INHERITED_OOM_MB:
        return (
            f"out of memory in a worker that held {inherited:.0f} MB left by its earlier trials: "
            "retried in a new worker"
        )
    return None


def _window(
    recent: tuple[str, ...], entry: str | None, ctx: Context
) -> tuple[tuple[str, ...], str | None]:
    """The breaker's window after ``entry``, and why it trips (one class dominates) or None."""
    if entry is None:
        return recent, None
    window = (*recent, entry)[-ctx.breaker_window :]
    if entry == "ok" or len(window) < ctx.breaker_window:
        return window, None
    share = window.count(entry) / len(window)
    if share < ctx.breaker_share:
        return window, None
    return window, f"{share:.0%} of the last {len(window)} attempts failed as {entry}"


def decide(result: TrialResult, ctx: Context) -> Decision:
    """The verdict on ``result`` in ``ctx`` (see the module docstring for the rules)."""
    if result.status in (Status.COMPLETE, Status.PRUNED):
        state = TrialState.COMPLETE if result.status is Status.COMPLETE else TrialState.PRUNED
        recent, _ = _window(ctx.recent, "ok", ctx)
        return Decision(state, failed_trials=ctx.failed_trials, recent=recent)
    diag = result.diagnosis
    assert diag is not None, "a failed result always carries its diagnosis"
    cls = diag.failure_class
    action = ctx.policy.action_for(cls)
    note = ""
    config_error = result.exception_type in CONFIG_ERRORS
    if config_error:
        action, note = Action.STOP, "the objective reported a configuration error"
    blame = _blame(result, ctx)

    retry = alone = False
    quarantine: str | None = None
    overridden = ctx.policy.overrides().get(cls.value)
    if blame is not None and action is not Action.STOP and overridden != Action.FAIL.value:
        note = blame
        if ctx.infra_retries < ctx.max_infra_retries:
            action, retry = Action.RETRY, True
            alone = cls is FailureClass.OOM and ctx.gpu_shared
        else:
            action = Action.FAIL
            note = f"{blame}; its {ctx.infra_retries} retries for such failures are spent"
    elif action is Action.QUARANTINE:
        if ctx.on_gpu:
            retry, quarantine = True, f"{cls.value}: {diag.summary}"
            note = "device quarantined"
        else:
            action, note = Action.FAIL, "no device to quarantine (CPU run)"
    if diag.sticky and ctx.on_gpu and quarantine is None:
        n = ctx.sticky_on_device + 1
        if ctx.device_health is not None:
            quarantine = f"health check failed: {ctx.device_health}"
        elif n >= ctx.quarantine_after:
            quarantine = (
                f"{n} sticky CUDA errors within {ctx.quarantine_window_s:.0f}s "
                f"(last: {diag.summary})"
            )
    if action is Action.RETRY and not retry:
        own = ctx.attempt - 1 - ctx.infra_retries
        if own < ctx.max_retries:
            retry = True
        else:
            action = Action.PRUNE if cls in CAUSED_BY_PARAMS else Action.FAIL
            note = f"retries exhausted after {ctx.attempt} attempt(s)"
    state = TrialState.PRUNED if action is Action.PRUNE else TrialState.FAIL
    shown = Action.RETRY if retry else action

    blameless = blame is not None
    platform = blameless and _expandable_segments_fault(result)
    streak, failed = ctx.consecutive_failures, ctx.failed_trials
    if not blameless:
        streak += action in (Action.FAIL, Action.STOP) and not retry
        failed += state == TrialState.FAIL
    recent, dominated = _window(ctx.recent, None if blameless else cls.value, ctx)
    stop: str | None = None
    if action is Action.STOP:
        stop = note if config_error else f"policy stops the study on {cls.value}"
    elif streak >= ctx.max_consecutive_failures:
        stop = f"{streak} consecutive failures"
    elif dominated:
        stop = dominated
    elif failed >= ctx.max_failed_trials:
        stop = f"{failed} failed trials (max_failed_trials={ctx.max_failed_trials})"

    reusable = cls in REUSABLE_AFTER and not diag.sticky and not diag.cuda
    tags: dict[str, Any] = {
        attrs.FAILURE_CLASS: cls.value,
        attrs.FAILURE_ACTION: shown.value,
        attrs.FAILURE_SUMMARY: diag.summary,
        attrs.FAILURE_HINT: diag.hint,
        attrs.STICKY: diag.sticky,
        attrs.EXCEPTION_TYPE: result.exception_type,
        attrs.ERROR_MSG: result.error_msg,
        attrs.TRACEBACK: result.traceback[-4000:],
        attrs.EXIT_CODE: result.exit_code,
        attrs.SIGNAL: result.signal_name,
        attrs.CUDA_ERROR: bool(diag.cuda),
        attrs.CUDA_ERROR_TYPE: diag.cuda_error_type,
        attrs.CUDA_ERROR_MSG: result.first_line[:500] if diag.cuda else None,
        attrs.BLAMELESS: blameless,
        attrs.RECOGNISED: diag.recognised,
        attrs.ERROR_CODE: diag.error_code,
    }
    if note:
        tags[attrs.FAILURE_NOTE] = note
    return Decision(
        state=state,
        action=shown,
        retry=retry,
        alone=alone,
        blameless=blameless,
        recycle=None if reusable else f"after {cls.value}",
        quarantine=quarantine,
        stop=stop,
        stop_code=ExitCode.CONFIG if config_error else ExitCode.FAILURES,
        note=note,
        consecutive_failures=streak,
        failed_trials=failed,
        recent=recent,
        tags=MappingProxyType(tags),
        no_expandable=platform,
    )


def advance(ctx: Context, decision: Decision) -> Context:
    """``ctx`` carrying the breaker's state after ``decision``: where the next decision starts."""
    return replace(
        ctx,
        consecutive_failures=decision.consecutive_failures,
        failed_trials=decision.failed_trials,
        recent=decision.recent,
    )


def stop_message(decision: Decision, result: TrialResult) -> str:
    """The one line a person reads when the breaker stops the run: why, the class, a sample
    error, its hint, the log, and the next command to run."""
    diag = result.diagnosis
    cls = diag.failure_class.value if diag else "?"
    nxt = f"hpo replay {result.number}" + (" and hpo doctor" if diag and diag.cuda else "")
    hint = f"; hint: {diag.hint}" if diag and diag.hint else ""
    return (
        f"stopping: {decision.stop}; last failure: trial {result.number} {cls}: "
        f"{result.first_line[:200]} (log: {result.log_path or 'none'}){hint}; next: {nxt}"
    )
