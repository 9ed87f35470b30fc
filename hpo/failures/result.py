"""The merged record of how one trial ended: :class:`TrialResult`, built in one place.

Modelled on torch.distributed.elastic's ``ProcessFailure``: what the worker reported (its
:class:`~hpo.outcome.Outcome`, over the pipe or from the outcome file) is merged with what the
supervisor saw (exit status, signal, log tail, or an end it imposed itself) by :func:`build`.
Derived fields (the :class:`~hpo.failures.Diagnosis`, the message) are computed there, once:
``classify`` runs exactly once per failure. Every way a trial can end arrives as this record:

- ``REPORTED``: the worker sent its outcome;
- ``RECORDED``: the outcome file a worker wrote before its supervisor died (read on resume);
- ``LOST``: the worker exited without an outcome (crash, kill, ``os._exit``);
- ``IMPOSED``: the supervisor ended the trial (timeout, memory limit, stop) or found it orphaned.
"""

from __future__ import annotations

import enum
import signal as _signal
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hpo.failures.classes import Diagnosis, FailureClass
from hpo.failures.classify import classify, diagnosis_for
from hpo.outcome import Outcome, Status
from hpo.paths import RunPaths
from hpo.protocol import SUPERVISOR_LOST


class Source(str, enum.Enum):
    """Where the result came from (see the module docstring)."""

    REPORTED = "reported"
    RECORDED = "recorded"
    LOST = "lost"
    IMPOSED = "imposed"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Imposed:
    """An end the supervisor imposed or observed: the class and a one-line note for people."""

    failure_class: FailureClass
    note: str


@dataclass(frozen=True)
class TrialResult:
    """How one trial ended. ``diagnosis`` is set exactly when ``status`` is FAILED."""

    number: int
    status: Status
    source: Source
    values: tuple[float, ...] | None = None
    diagnosis: Diagnosis | None = None
    exception_type: str | None = None
    message: str = ""
    traceback: str = ""
    exit_code: int | None = None
    signal: int | None = None
    duration_s: float = 0.0
    worker_pid: int = 0
    peak_gpu_mem_mb: float | None = None
    gpu_overhead_mb: float | None = None
    gpu_mem_at_start_mb: float | None = None  # held by the worker before the trial began
    fault: str | None = None
    log_path: str = ""
    log_error: str | None = None
    allocator: dict[str, Any] | None = None  # the worker's allocator, on its first GPU trial

    @property
    def failure_class(self) -> FailureClass | None:
        return self.diagnosis.failure_class if self.diagnosis else None

    @property
    def error_msg(self) -> str:
        """The message people read first (at most 500 characters)."""
        summary = self.diagnosis.summary if self.diagnosis else ""
        return (self.message or summary)[:500]

    @property
    def first_line(self) -> str:
        text = (self.message or (self.diagnosis.summary if self.diagnosis else "")).strip()
        return text.splitlines()[0] if text else ""

    @property
    def signal_name(self) -> str | None:
        return signal_name(self.signal) if self.signal else None


def signal_name(sig: int | None) -> str:
    """``SIGSEGV`` for 11; ``SIG99`` for a number Python does not name; empty for None."""
    if sig is None:
        return ""
    try:
        return _signal.Signals(sig).name
    except ValueError:
        return f"SIG{sig}"


def build(
    number: int,
    *,
    outcome: Outcome | None = None,
    recorded: bool = False,
    imposed: Imposed | None = None,
    exit_code: int | None = None,
    signal: int | None = None,
    log_tail: str = "",
    worker_pid: int = 0,
    duration_s: float = 0.0,
    fault: str | None = None,
    log_path: str = "",
) -> TrialResult:
    """Merge everything known about trial ``number``'s end into one :class:`TrialResult`.

    An ``outcome`` wins over everything else (the worker saw the objective end; billiard's
    lesson: a result may arrive just before its sender dies). Without one, an ``imposed`` end
    names the class; otherwise the exit status, signal and log tail are classified.
    """
    if outcome is not None:
        diag = None
        if outcome.exception_type == SUPERVISOR_LOST:  # the worker saw its channel break
            diag = diagnosis_for(FailureClass.SUPERVISOR_LOST, summary=outcome.message[:200])
        elif outcome.status is Status.FAILED:
            diag = classify(
                outcome.exception_type,
                outcome.message,
                outcome.traceback,
                error_code=outcome.error_code,
                chain=outcome.chain or None,
            )
        return TrialResult(
            number=number,
            status=outcome.status,
            source=Source.RECORDED if recorded else Source.REPORTED,
            values=tuple(outcome.values) if outcome.values is not None else None,
            diagnosis=diag,
            exception_type=outcome.exception_type,
            message=outcome.message,
            traceback=outcome.traceback,
            duration_s=outcome.duration_s,
            worker_pid=outcome.worker_pid or worker_pid,
            peak_gpu_mem_mb=outcome.peak_gpu_mem_mb,
            gpu_overhead_mb=outcome.gpu_overhead_mb,
            gpu_mem_at_start_mb=outcome.gpu_mem_at_start_mb,
            fault=outcome.fault or fault,
            log_path=log_path,
            log_error=outcome.extra.get("log_error"),
            allocator=outcome.extra.get("allocator"),
        )
    if imposed is not None:
        diag = diagnosis_for(imposed.failure_class, summary=imposed.note)
        message = imposed.note
        source = Source.IMPOSED
    else:
        diag = classify(None, "", log_tail, exit_code=exit_code, signal=signal)
        how = f"signal {signal} ({signal_name(signal)})" if signal else f"exit code {exit_code}"
        message = f"worker {worker_pid} died with {how} without reporting a result"
        source = Source.LOST
    return TrialResult(
        number=number,
        status=Status.FAILED,
        source=source,
        diagnosis=diag,
        message=message,
        traceback=log_tail,
        exit_code=exit_code,
        signal=signal,
        duration_s=duration_s,
        worker_pid=worker_pid,
        fault=fault,
        log_path=log_path,
    )


def constraints_failed(
    result: TrialResult, exception_type: str, message: str, traceback: str = ""
) -> TrialResult:
    """``result``'s trial ran to its end, but the study's constraints function failed on it: the
    trial fails as ``user_error`` (the bug is in that function), its summary says so and
    ``message`` (which names the function) is its error."""
    summary = "the constraints function failed on this trial"
    hint = "Fix the study's constraints function: it must return a sequence of numbers."
    return replace(
        result,
        status=Status.FAILED,
        values=None,
        diagnosis=diagnosis_for(FailureClass.USER_ERROR, summary=summary, hint=hint),
        exception_type=exception_type,
        message=message,
        traceback=traceback,
    )


def recover(
    number: int, why: str, run_dir: str | None, *, worker_pid: int = 0, age_s: float = 0.0
) -> TrialResult:
    """The result of a trial whose supervisor died (``why`` says how that is known).

    If its worker recorded an outcome in the dead supervisor's run folder (on this host), that
    is the result; otherwise the trial is ``supervisor_lost``.
    """
    paths = RunPaths(Path(run_dir)) if run_dir else None
    log_path = str(paths.trial_log(number)) if paths else ""
    outcome = Outcome.read(paths.outcome(number)) if paths else None
    if outcome is not None and outcome.trial_number == number:
        return build(number, outcome=outcome, recorded=True, log_path=log_path)
    note = f"the supervisor running this trial died ({why}); the trial was lost"
    return build(
        number,
        imposed=Imposed(FailureClass.SUPERVISOR_LOST, note),
        worker_pid=worker_pid,
        duration_s=age_s,
        log_path=log_path,
    )
