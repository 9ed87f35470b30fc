"""The child-to-supervisor record: what the worker saw a trial do (the exit codes are in protocol).

A worker reports each trial's outcome as an :class:`Outcome` over its pipe and, before that,
writes the same record atomically (temp file + ``os.replace``) to the run folder, so that a
supervisor that died between the worker's report and its own ``tell`` finds it on restart.
A worker that dies without reporting is described by its exit status instead; the supervisor
merges both into one failure record (see ``hpo.supervisor``).
"""

from __future__ import annotations

import enum
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

OUTCOME_VERSION = 1


class Status(str, enum.Enum):
    """What the worker saw the objective do."""

    COMPLETE = "complete"  # returned valid value(s)
    PRUNED = "pruned"  # raised optuna.TrialPruned
    FAILED = "failed"  # raised, or returned an invalid value

    def __str__(self) -> str:
        return self.value


@dataclass
class Outcome:
    """One trial's result as reported by the worker. Version 1.

    ``values`` is set for COMPLETE; ``exception_type`` (qualified name, e.g.
    ``torch.OutOfMemoryError``), ``message`` and ``traceback`` (the tail, chained causes included)
    for FAILED (and PRUNED, when the objective gave a reason). ``peak_gpu_mem_mb`` is the trial's
    measured peak where a GPU (real or simulated) was used; ``gpu_overhead_mb`` what the
    worker process holds on its GPU beyond PyTorch's reserved memory (NVML's figure for the
    process minus ``torch.cuda.memory_reserved()``: the CUDA context and other libraries), where
    it could be measured; ``gpu_mem_at_start_mb`` the GPU memory the worker already held when
    the trial started (left alive by its earlier trials). ``extra`` carries optional notes:
    ``log_error`` (the trial log could not be written), ``allocator`` (the CUDA allocator in
    effect, on a worker's first GPU trial: :func:`hpo.allocator.in_effect`).
    """

    trial_number: int
    status: Status
    values: list[float] | None = None
    exception_type: str | None = None
    message: str = ""
    traceback: str = ""
    duration_s: float = 0.0
    peak_gpu_mem_mb: float | None = None
    gpu_overhead_mb: float | None = None
    gpu_mem_at_start_mb: float | None = None
    worker_pid: int = 0
    fault: str | None = None  # the chaos fault injected into this trial, if any
    error_code: int | None = None  # torch.AcceleratorError.error_code, where there was one
    chain: list[tuple[str, str]] = field(default_factory=list)  # (type, message), outermost first
    version: int = OUTCOME_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Outcome:
        d = dict(d)
        d["status"] = Status(d["status"])
        d["chain"] = [tuple(link) for link in d.get("chain") or []]
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known})

    def write_atomic(self, path: Path) -> None:
        tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        with open(tmp, "w", encoding="utf-8") as fh:
            # No fsync: this file guards against the supervisor dying, not the machine.
            json.dump(self.to_dict(), fh)
        os.replace(tmp, path)

    @classmethod
    def read(cls, path: Path) -> Outcome | None:
        """The outcome recorded at ``path``, or None if absent or unreadable (half-written)."""
        try:
            with open(path, encoding="utf-8") as fh:
                return cls.from_dict(json.load(fh))
        except (OSError, ValueError, TypeError, KeyError):
            return None
