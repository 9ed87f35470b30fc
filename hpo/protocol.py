"""The supervisor-to-worker protocol: messages, records, the trial-call allow-list, exit codes.

Messages are ``(Msg, payload)`` tuples on a duplex pipe (pytest-xdist's ``(name, payload)``
events); the supervisor dispatches each kind to its ``_on_<kind>`` handler.

Supervisor to worker: ``RUN`` (a :class:`TrialSpec`), ``REPLY`` (``(ok, value)`` for a call),
``STOP`` (exit after the current trial). Worker to supervisor: ``READY`` (``{"pid", "boot_s"}``),
``BOOT_ERROR`` (``(type, message, traceback)``: the objective cannot be imported), ``CALL``
(``(name, args, kwargs)``: a trial method, answered with ``REPLY``), ``DONE`` (an
:class:`~hpo.outcome.Outcome` as a dict), ``RETIRE`` (a reason: the worker cannot run another
trial, e.g. a sticky CUDA error surfaced while it cleaned up, or the library pools it kept
grew past their bound or outlived a failed trial; it starts no trial sent after its DONE and
exits with ``WorkerExit.RECYCLE`` at ``STOP``).

:data:`TRIAL_CALLS` is the one allow-list of what a worker may reach of its trial, the trial's study
and its storage: the worker's proxy trial is generated from it and the supervisor serves nothing
else.
"""

from __future__ import annotations

import datetime
import enum
import pickle
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


class Msg(str, enum.Enum):
    """A message kind; its value names the supervisor's handler (``_on_<value>``)."""

    RUN = "run"
    STOP = "stop"
    REPLY = "reply"
    READY = "ready"
    BOOT_ERROR = "boot_error"
    CALL = "call"
    DONE = "done"
    RETIRE = "retire"


class WorkerExit(enum.IntEnum):
    """Reserved worker exit codes: the worker-to-supervisor contract (gunicorn, billiard).

    A planned exit is never mistaken for a crash: ``OK`` after ``STOP``, ``RECYCLE`` when the
    worker retires itself (a sticky CUDA error surfaced while it cleaned up after a trial, or
    the helper processes it kept must go with it).
    """

    OK = 0
    BOOT_ERROR = 3  # the objective could not be imported: restarting will not help
    LIFELINE = 4  # the supervisor vanished (lifeline closed): the worker killed its group
    RECYCLE = 0x9B  # billiard's EX_RECYCLE: replace me, nothing went wrong with a trial


class CallKind(str, enum.Enum):
    """How a trial call is carried out in the supervisor."""

    SUGGEST = "suggest"  # a method that returns a parameter value (recorded in the proxy)
    CALL = "call"  # any other method
    READ = "read"  # an attribute read, each time it is read
    SNAPSHOT = "snapshot"  # an attribute read once per trial and kept (it does not change)


TRIAL_CALLS: Mapping[str, CallKind] = MappingProxyType(
    {
        "suggest_float": CallKind.SUGGEST,
        "suggest_int": CallKind.SUGGEST,
        "suggest_categorical": CallKind.SUGGEST,
        "report": CallKind.CALL,
        "should_prune": CallKind.CALL,
        "set_user_attr": CallKind.CALL,
        "set_constraint": CallKind.CALL,
        "distributions": CallKind.READ,
        "relative_params": CallKind.READ,
        "constraints": CallKind.READ,
        # trial.study: a view of the supervisor's study (its sampler, pruner, directions, trials)
        "study.sampler": CallKind.SNAPSHOT,
        "study.pruner": CallKind.SNAPSHOT,
        "study.directions": CallKind.SNAPSHOT,
        "study.metric_names": CallKind.READ,
        "study.user_attrs": CallKind.READ,
        "study.trials": CallKind.READ,
        "study.get_trials": CallKind.CALL,
        "study.best_trial": CallKind.READ,
        "study.best_trials": CallKind.READ,
        "study.best_value": CallKind.READ,
        "study.best_params": CallKind.READ,
        "study.stop": CallKind.CALL,  # the supervisor stops asking; running trials finish
        # trial.storage (and trial.study's storage): this trial's own records only
        "storage.get_trial": CallKind.CALL,
        "storage.get_trial_system_attrs": CallKind.CALL,
        "storage.set_trial_system_attr": CallKind.CALL,
    }
)
"""Every trial member a worker may reach, by how it is served: ``name`` on the trial,
``study.name`` on ``trial.study``, ``storage.name`` on ``trial.storage`` (``hpo.proxy``)."""


@dataclass
class WorkerBoot:
    """What a worker needs to start; sent once at process start."""

    slot: int
    objective: str
    objective_kwargs: dict[str, Any]
    env: dict[str, str]
    log_path: str
    storage_url: str
    study_name: str
    threads: int | None = None
    cudnn_benchmark: bool = False
    deterministic: bool = False
    #: Helper processes (library pools, see :mod:`hpo.pools`) the worker may keep between
    #: trials; past it, or with 0, none are kept and the worker is recycled if it had some.
    max_helpers: int = 0
    #: The study's ``max_host_mem_mb``: kept helpers may hold at most half of it at rest.
    max_host_mem_mb: float | None = None
    #: The study's ``recycle_rss_growth_mb`` and ``recycle_gpu_growth_mb`` (:mod:`hpo.growth`).
    rss_growth_mb: float | None = None
    gpu_growth_mb: float | None = None


@dataclass
class TrialSpec:
    """One trial to run; sent with each ``RUN`` message."""

    number: int
    trial_id: int
    n_objectives: int
    log_path: str
    outcome_path: str
    params: dict[str, Any] = field(default_factory=dict)
    user_attrs: dict[str, Any] = field(default_factory=dict)
    datetime_start: datetime.datetime | None = None
    fault: str | None = None
    fault_delay_s: float | None = None  # None: inject before the objective starts


# -- the exception codec ------------------------------------------------------------------------
class RemoteError(RuntimeError):
    """An exception raised in the supervisor that could not be sent back as itself."""


class SupervisorLost(BaseException):
    """The worker's channel to the supervisor broke during a trial call: the supervisor died.

    A ``BaseException``, so an objective's ``except Exception`` cannot swallow it; the worker
    reports the trial as ``supervisor_lost`` (the lifeline then takes the worker down).
    """


#: Qualified name of :class:`SupervisorLost` in outcomes.
SUPERVISOR_LOST = "hpo.protocol.SupervisorLost"


Encoded = tuple[bytes | None, str, str]


def encode_exception(exc: BaseException) -> Encoded:
    """An exception raised while serving a call, for the worker (pickled where possible)."""
    blob: bytes | None
    try:
        data = pickle.dumps(exc)
        pickle.loads(data)
        blob = data
    except Exception:
        blob = None
    return blob, qualified_name(type(exc)), str(exc)


def decode_exception(value: Encoded) -> BaseException:
    """The exception :func:`encode_exception` encoded, or a :class:`RemoteError` naming it."""
    blob, type_name, message = value
    if isinstance(blob, bytes):
        try:
            exc = pickle.loads(blob)
            if isinstance(exc, BaseException):
                return exc
        except Exception:
            pass
    return RemoteError(f"{type_name}: {message}")


def qualified_name(cls: type) -> str:
    """``torch.OutOfMemoryError``, ``ValueError``, ``mypkg.errors.BadData``: how tags name types."""
    module = cls.__module__
    if module in ("builtins", "__main__") or not module:
        return cls.__qualname__
    if module.startswith("torch") and hasattr(sys.modules.get("torch"), cls.__name__):
        return f"torch.{cls.__name__}"  # torch._C._OutOfMemoryError and friends: the public name
    return f"{module}.{cls.__qualname__}"
