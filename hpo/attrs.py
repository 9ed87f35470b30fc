"""The schema of every attribute ``hpo`` writes into an Optuna storage.

The runner's own trial attributes are namespaced with :data:`PREFIX` so that they never collide
with what an objective sets itself (``trial.set_user_attr("attempt", …)`` is the user's). Four
keys older analysis scripts query are also written without the prefix (:data:`COMPAT`), unless
the objective set a user attribute of that name itself: the user's value is never overwritten.

docs/failures.md lists the same keys; a test checks the two against each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

PREFIX = "hpo:"


@dataclass(frozen=True)
class Attr:
    """One attribute: its key in the storage, its JSON type and what it means."""

    key: str
    type: str
    meaning: str


def _k(name: str) -> str:
    return PREFIX + name


# -- user attributes on every trial the runner finishes -----------------------------------------
HOST = _k("host")
WORKER_PID = _k("worker_pid")
LOG_PATH = _k("log_path")
DURATION_S = _k("duration_s")
ATTEMPT = _k("attempt")
DEVICE = _k("device")
PEAK_GPU_MEM_MB = _k("peak_gpu_mem_mb")
CHAOS_FAULT = _k("chaos_fault")
LOG_ERROR = _k("log_error")
ALLOCATOR = _k("allocator")

# -- user attributes on every trial that failed --------------------------------------------------
FAILURE_CLASS = _k("failure_class")
FAILURE_ACTION = _k("failure_action")
FAILURE_SUMMARY = _k("failure_summary")
FAILURE_HINT = _k("failure_hint")
FAILURE_NOTE = _k("failure_note")
STICKY = _k("sticky")
EXCEPTION_TYPE = _k("exception_type")
ERROR_MSG = _k("error_msg")
TRACEBACK = _k("traceback")
EXIT_CODE = _k("exit_code")
SIGNAL = _k("signal")
CUDA_ERROR = _k("cuda_error")
CUDA_ERROR_TYPE = _k("cuda_error_type")
CUDA_ERROR_MSG = _k("cuda_error_msg")
BLAMELESS = _k("blameless")
RECOGNISED = _k("recognised")
ERROR_CODE = _k("error_code")

# -- retries -------------------------------------------------------------------------------------
RETRY_OF = _k("retry_of")
RETRY_REASON = _k("retry_reason")
RETRIED_AS = _k("retried_as")
INFRA_RETRIES = _k("infra_retries")
RUN_ALONE = _k("run_alone")

# -- system attributes (Optuna's own retry keys, and the owner record) --------------------------
FAILED_TRIAL = "failed_trial"
RETRY_HISTORY = "retry_history"
OWNER = "hpo:owner"


# -- study user attributes -----------------------------------------------------------------------
def no_expandable_key(host: str, device: int | None) -> str:
    """Study attribute: GPU ``device`` of ``host`` runs without expandable segments (WSL2)."""
    return f"{PREFIX}no_expandable_segments:{host}:{device}"


#: Seed-compatible keys, written without the prefix too (where the user has not set them).
COMPAT: Mapping[str, str] = MappingProxyType(
    {
        FAILURE_CLASS: "failure_class",
        CUDA_ERROR: "cuda_error",
        CUDA_ERROR_TYPE: "cuda_error_type",
        CUDA_ERROR_MSG: "cuda_error_msg",
    }
)

TRIAL_ATTRS: tuple[Attr, ...] = (
    Attr(HOST, "str", "host name of the supervisor that ran the trial"),
    Attr(WORKER_PID, "int", "pid of the worker process that ran it"),
    Attr(LOG_PATH, "str", "the trial's own stdout+stderr file"),
    Attr(DURATION_S, "float", "wall time of the objective in the worker"),
    Attr(ATTEMPT, "int", "1 for a first run; 2, 3… for retries"),
    Attr(DEVICE, "int", "GPU index the trial was pinned to (absent on CPU)"),
    Attr(PEAK_GPU_MEM_MB, "float", "measured peak GPU memory"),
    Attr(CHAOS_FAULT, "str", "the fault injected by chaos mode"),
    Attr(LOG_ERROR, "str", "the trial's log file could not be written"),
    Attr(ALLOCATOR, "object", "the CUDA allocator in effect in the worker (its first GPU trial)"),
)
FAILURE_ATTRS: tuple[Attr, ...] = (
    Attr(FAILURE_CLASS, "str", "one of the failure classes"),
    Attr(FAILURE_ACTION, "str", "what the runner did"),
    Attr(FAILURE_SUMMARY, "str", "one line a person reads"),
    Attr(FAILURE_HINT, "str", "what to try"),
    Attr(FAILURE_NOTE, "str", "why the action differs from the policy"),
    Attr(STICKY, "bool", "the CUDA context of the process was unusable afterwards"),
    Attr(EXCEPTION_TYPE, "str or null", "qualified type of the exception the objective raised"),
    Attr(ERROR_MSG, "str", "the exception message, or what the supervisor saw"),
    Attr(TRACEBACK, "str", "the tail of the traceback, or of the trial's log"),
    Attr(EXIT_CODE, "int or null", "the worker's exit status when it exited without a result"),
    Attr(SIGNAL, "str or null", "the signal that killed the worker"),
    Attr(CUDA_ERROR, "bool", "the failure came from CUDA, a CUDA library, NCCL or the driver"),
    Attr(CUDA_ERROR_TYPE, "str or null", "short token such as illegal_memory_access"),
    Attr(CUDA_ERROR_MSG, "str or null", "first line of the CUDA error message"),
    Attr(BLAMELESS, "bool", "the failure was not the trial's fault"),
    Attr(RECOGNISED, "bool", "a rule recognised the error text (else it is kept for analysis)"),
    Attr(ERROR_CODE, "int or null", "the CUDA (or NCCL) error code the failure carried"),
)
RETRY_ATTRS: tuple[Attr, ...] = (
    Attr(RETRY_OF, "int", "number of the trial it retries"),
    Attr(ATTEMPT, "int", "2 for the first retry, …"),
    Attr(RETRY_REASON, "str", "the failure class that caused it"),
    Attr(INFRA_RETRIES, "int", "how many earlier attempts ended not by the trial's fault"),
    Attr(RUN_ALONE, "bool", "the retry runs alone on a GPU"),
)


def read(user_attrs: Mapping[str, Any], key: str, default: Any = None) -> Any:
    """The runner's attribute ``key`` of a trial, for readers (reports, replay, queries).

    A trial written by hpo 0.1 has the same keys without the prefix; they are read only when
    the trial has no namespaced key at all, so a user's own un-namespaced attribute of the
    same name is never mistaken for the runner's.
    """
    if key in user_attrs:
        return user_attrs[key]
    if PREFIX and key.startswith(PREFIX) and not any(k.startswith(PREFIX) for k in user_attrs):
        return user_attrs.get(key[len(PREFIX) :], default)
    return default
