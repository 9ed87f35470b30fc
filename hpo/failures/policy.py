"""The failure policy as a pure function: :func:`decide` turns a :class:`TrialResult` and the
:class:`Context` it happened in into a :class:`Decision`.

No storage, no processes, no clock: the supervisor gathers the context (attempt, device kind,
the breaker's counters, the device's sticky history and health), calls :func:`decide`, and
carries the decision out (tell the storage, queue the retry, recycle the worker, quarantine the
GPU, stop the run). The tests feed it tables; docs/failures.md's policy table is checked
against it.

The rules, in order:

1. COMPLETE and PRUNED (by the objective) are final; they reset the failure streak.
2. A failed trial gets its class's action from the :class:`Policy` (``on_failure`` overrides
   over :data:`~hpo.failures.DEFAULT_POLICY`). An objective that raises ``hpo.errors.ConfigError``
   (a missing model, bad data) stops the run whatever its class.
3. ``quarantine`` on a GPU retries the trial and takes the GPU out of rotation; on the CPU it
   fails the trial (there is no device to quarantine).
4. A sticky error on a GPU counts against that GPU: a failed health probe, or
   ``quarantine_after`` sticky errors within ``quarantine_window_s``, quarantines it.
5. ``retry`` retries while ``attempt <= max_retries``; after that the trial is PRUNED.
6. The breaker: ``stop``, ``max_consecutive_failures`` FAIL/STOP verdicts in a row (retried
   failures do not count), or ``max_failed_trials`` FAIL trials this run, stop the run.
7. The worker is recycled after anything but a plain Python-level error of the objective
   (``user_error``, ``data_error``, ``numerical`` that are neither sticky nor from CUDA).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from optuna.trial import TrialState

from hpo import attrs
from hpo.failures.classes import DEFAULT_POLICY, Action, FailureClass
from hpo.failures.result import TrialResult
from hpo.outcome import Status

#: Exception types by which an objective says its configuration is wrong: every other trial
#: would fail the same way, so the run stops.
CONFIG_ERRORS = frozenset({"hpo.errors.ConfigError", "hpo.errors.ObjectiveLoadError"})

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

    ``attempt`` is 1 for a first run; ``consecutive_failures`` and ``failed_trials`` are the
    breaker's counters *before* this result; ``sticky_on_device`` counts the sticky errors on the
    trial's GPU within ``quarantine_window_s`` before this one; ``device_health`` is the reason
    the GPU's health probe failed, or None when it passed (or was not asked).
    """

    attempt: int = 1
    on_gpu: bool = False
    consecutive_failures: int = 0
    failed_trials: int = 0
    sticky_on_device: int = 0
    device_health: str | None = None
    max_retries: int = 1
    max_consecutive_failures: int = 5
    max_failed_trials: int = 100
    quarantine_after: int = 3
    quarantine_window_s: float = 600.0
    policy: Policy = field(default_factory=lambda: Policy())


@dataclass(frozen=True)
class Decision:
    """What happens to a trial and to the run. Carried out by the supervisor, in this order:
    tag (``tags``) and tell (``state``), queue the retry, quarantine, recycle, stop.

    ``action`` is what the runner did (the ``failure_action`` tag; ``None`` for a trial that
    completed or pruned itself). ``consecutive_failures`` and ``failed_trials`` are the
    breaker's counters *after* this trial. ``stop`` is why the run stops, or None.
    """

    state: TrialState
    action: Action | None = None
    retry: bool = False
    recycle: str | None = None
    quarantine: str | None = None
    stop: str | None = None
    note: str = ""
    consecutive_failures: int = 0
    failed_trials: int = 0
    tags: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def decide(result: TrialResult, ctx: Context) -> Decision:
    """The verdict on ``result`` in ``ctx`` (see the module docstring for the rules)."""
    if result.status is Status.COMPLETE:
        return Decision(TrialState.COMPLETE, failed_trials=ctx.failed_trials)
    if result.status is Status.PRUNED:
        return Decision(TrialState.PRUNED, failed_trials=ctx.failed_trials)
    diag = result.diagnosis
    assert diag is not None, "a failed result always carries its diagnosis"
    cls = diag.failure_class
    action = ctx.policy.action_for(cls)
    note = ""
    if result.exception_type in CONFIG_ERRORS:
        action, note = Action.STOP, "the objective reported a configuration error"

    retry = False
    quarantine: str | None = None
    if action is Action.QUARANTINE:
        if ctx.on_gpu:
            retry, quarantine = True, f"{cls.value}: {diag.summary}"
            note = "device quarantined"
        else:
            action, note = Action.FAIL, "no device to quarantine (CPU run)"
    elif diag.sticky and ctx.on_gpu:
        n = ctx.sticky_on_device + 1
        if ctx.device_health is not None:
            quarantine = f"health check failed: {ctx.device_health}"
        elif n >= ctx.quarantine_after:
            quarantine = (
                f"{n} sticky CUDA errors within {ctx.quarantine_window_s:.0f}s "
                f"(last: {diag.summary})"
            )
    if action is Action.RETRY:
        if ctx.attempt <= ctx.max_retries:
            retry = True
        else:
            action, note = Action.PRUNE, f"retries exhausted after {ctx.attempt} attempt(s)"
    state = TrialState.PRUNED if action is Action.PRUNE else TrialState.FAIL
    shown = Action.RETRY if retry else action

    streak = ctx.consecutive_failures
    if action in (Action.FAIL, Action.STOP) and not retry:
        streak += 1
    failed = ctx.failed_trials + (state == TrialState.FAIL)
    stop: str | None = None
    if action is Action.STOP:
        stop = f"policy stops the study on {cls.value}"
    elif streak >= ctx.max_consecutive_failures:
        stop = f"{streak} consecutive failures"
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
    }
    if note:
        tags[attrs.FAILURE_NOTE] = note
    return Decision(
        state=state,
        action=shown,
        retry=retry,
        recycle=None if reusable else f"after {cls.value}",
        quarantine=quarantine,
        stop=stop,
        note=note,
        consecutive_failures=streak,
        failed_trials=failed,
        tags=MappingProxyType(tags),
    )
