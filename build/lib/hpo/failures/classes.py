"""Failure classes, actions, the :class:`Diagnosis` record and the failure policy.

A failed trial is described by one :class:`Diagnosis`: *what* went wrong (a
:class:`FailureClass`), what the default policy does about it (an :class:`Action`), whether
the CUDA context of the process that failed is unusable afterwards (``sticky``) and a
one-line summary and hint for people. The classifier (:mod:`hpo.failures.classify`) builds
diagnoses; :func:`hpo.failures.policy.decide` says what to do with them.

Nothing here knows about processes, storages or CUDA strings.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


class FailureClass(str, enum.Enum):
    """Why a trial failed. The value is the lowercase name used in tags, YAML and reports.

    - ``oom``: GPU memory exhausted (allocator or a CUDA library could not get memory).
    - ``cuda_context_corrupted``: a CUDA kernel fault (illegal address, device-side assert,
      launch failure, ECC...) that leaves the process's CUDA context unusable.
    - ``cudnn`` / ``cublas``: an error reported by cuDNN / cuBLAS (and the other CUDA math
      libraries: cuSOLVER, cuFFT, cuRAND, cuSPARSE).
    - ``nccl``: a collective-communication error (NCCL, ``DistBackendError``).
    - ``device_unavailable``: the GPU cannot be used at all (no device, driver mismatch,
      busy, lost, wrong ordinal, no kernels for its architecture).
    - ``numerical``: the run diverged (NaN/Inf loss, objective value or gradients).
    - ``host_oom``: host RAM or ``/dev/shm`` exhausted (OOM killer, allocator failure).
    - ``segfault``: the process died of a native crash (SIGSEGV, SIGBUS, SIGABRT, SIGILL).
    - ``timeout``: a deadline expired (trial timeout, NCCL watchdog, CUDA launch watchdog).
    - ``data_error``: the data does not fit the model (labels out of range, shape mismatch).
    - ``user_error``: a bug in the objective or its environment; the default for unknown
      exceptions.
    - ``worker_lost``: the worker exited without a result and left no other evidence.
    - ``supervisor_lost``: the supervisor died while the trial ran (found on resume).
    - ``interrupted``: the trial was stopped from outside (Ctrl-C, SIGTERM, SIGHUP).
    """

    OOM = "oom"
    CUDA_CONTEXT_CORRUPTED = "cuda_context_corrupted"
    CUDNN = "cudnn"
    CUBLAS = "cublas"
    NCCL = "nccl"
    DEVICE_UNAVAILABLE = "device_unavailable"
    NUMERICAL = "numerical"
    HOST_OOM = "host_oom"
    SEGFAULT = "segfault"
    TIMEOUT = "timeout"
    DATA_ERROR = "data_error"
    USER_ERROR = "user_error"
    WORKER_LOST = "worker_lost"
    SUPERVISOR_LOST = "supervisor_lost"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:
        return self.value

    def __format__(self, format_spec: str) -> str:
        return format(self.value, format_spec)


class Action(str, enum.Enum):
    """What the supervisor does with a failed trial.

    - ``prune``: finish the trial as PRUNED, so samplers learn to avoid its region.
    - ``retry``: finish it as FAIL and enqueue the same parameters again (in a fresh worker
      when the diagnosis is sticky), within ``max_retries``.
    - ``fail``: finish it as FAIL; the parameters are not retried.
    - ``quarantine``: like ``retry``, and stop scheduling trials on that GPU.
    - ``stop``: finish it as FAIL and stop the study (no new trials).
    """

    PRUNE = "prune"
    RETRY = "retry"
    FAIL = "fail"
    QUARANTINE = "quarantine"
    STOP = "stop"

    def __str__(self) -> str:
        return self.value

    def __format__(self, format_spec: str) -> str:
        return format(self.value, format_spec)


DEFAULT_POLICY: Mapping[FailureClass, Action] = MappingProxyType(
    {
        FailureClass.OOM: Action.PRUNE,
        FailureClass.CUDA_CONTEXT_CORRUPTED: Action.RETRY,
        FailureClass.CUDNN: Action.RETRY,
        FailureClass.CUBLAS: Action.RETRY,
        FailureClass.NCCL: Action.RETRY,
        FailureClass.DEVICE_UNAVAILABLE: Action.QUARANTINE,
        FailureClass.NUMERICAL: Action.PRUNE,
        FailureClass.HOST_OOM: Action.PRUNE,
        FailureClass.SEGFAULT: Action.RETRY,
        FailureClass.TIMEOUT: Action.FAIL,
        FailureClass.DATA_ERROR: Action.FAIL,
        FailureClass.USER_ERROR: Action.FAIL,
        FailureClass.WORKER_LOST: Action.RETRY,
        FailureClass.SUPERVISOR_LOST: Action.RETRY,
        FailureClass.INTERRUPTED: Action.RETRY,
    }
)
"""The action for each class when the study YAML says nothing (``on_failure``)."""


@dataclass(frozen=True)
class Diagnosis:
    """The classifier's verdict on one failed trial.

    ``action`` is the *default* policy's action for ``failure_class``; a study with
    ``on_failure`` overrides asks its :class:`Policy` instead. ``sticky`` means the CUDA
    context of the failed process is unusable: the worker must not run another trial.
    ``cuda`` means the failure came from CUDA, a CUDA library, NCCL or the driver.
    ``cuda_error_type`` is a short snake_case token (``"illegal_memory_access"``,
    ``"out_of_memory"``, ``"cudnn_execution_failed"``...) or ``None``. ``rule`` is the id of
    the rule that matched, ``None`` for fallbacks and :func:`diagnosis_for`.
    ``error_code`` is the CUDA runtime error number (``cudaError_t``; NCCL's
    ``ncclResult_t`` when ``cuda_error_type`` starts with ``nccl_``) the verdict rests on, if
    one was known. ``recognised`` is ``False`` when no rule recognised the evidence with
    confidence: the class is then the default's, the summary says so, and the text is worth
    keeping for analysis (``hpo failures --unrecognised``).
    """

    failure_class: FailureClass
    action: Action
    sticky: bool
    cuda: bool
    summary: str
    hint: str
    cuda_error_type: str | None = None
    rule: str | None = None
    error_code: int | None = None
    recognised: bool = True

    def to_dict(self) -> dict[str, object]:
        """A JSON-serialisable dict; enums become their values."""
        return {
            "failure_class": self.failure_class.value,
            "action": self.action.value,
            "sticky": self.sticky,
            "cuda": self.cuda,
            "summary": self.summary,
            "hint": self.hint,
            "cuda_error_type": self.cuda_error_type,
            "rule": self.rule,
            "error_code": self.error_code,
            "recognised": self.recognised,
        }


@dataclass(frozen=True)
class ClassInfo:
    """Defaults for a class: used by ``diagnosis_for`` and by rules that set no hint."""

    summary: str
    hint: str
    sticky: bool = False
    cuda: bool = False


OOM_HINT = (
    "Lower the batch size or sequence length (or add it to the search space), use gradient "
    "accumulation or activation checkpointing, and set "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (and PYTORCH_ALLOC_CONF) against "
    "fragmentation. 'Process N has X GiB in use' means another process shares the GPU."
)
DEVICE_HINT = (
    "Check the GPU with `nvidia-smi` (and dmesg for Xid errors), that the driver supports the "
    "CUDA runtime of this torch build and that CUDA_VISIBLE_DEVICES names existing GPUs; "
    "`hpo doctor` runs these checks."
)

CLASS_INFO: Mapping[FailureClass, ClassInfo] = MappingProxyType(
    {
        FailureClass.OOM: ClassInfo("CUDA out of memory", OOM_HINT, cuda=True),
        FailureClass.CUDA_CONTEXT_CORRUPTED: ClassInfo(
            "CUDA error (sticky: context unusable)",
            "The CUDA context is unusable: the trial is retried in a fresh worker. Rerun it with "
            "CUDA_LAUNCH_BLOCKING=1 (`hpo replay N`) to see the failing kernel; if the same GPU "
            "fails repeatedly, check it with `nvidia-smi` and dmesg (Xid errors).",
            sticky=True,
            cuda=True,
        ),
        FailureClass.CUDNN: ClassInfo(
            "cuDNN error",
            "Often memory pressure or an unsupported shape: try a smaller batch, "
            "torch.backends.cudnn.benchmark=False, or torch.backends.cudnn.enabled=False to "
            "confirm; check that the cuDNN of this torch build matches the driver.",
            cuda=True,
        ),
        FailureClass.CUBLAS: ClassInfo(
            "cuBLAS error",
            "Often memory pressure (handle or workspace allocation) or a dtype the GPU does not "
            "support (bf16/fp16 on old GPUs): try a smaller batch or another dtype; check that "
            "this torch build supports the GPU.",
            cuda=True,
        ),
        FailureClass.NCCL: ClassInfo(
            "NCCL error",
            "Rerun with NCCL_DEBUG=INFO (or WARN) to see the cause; check the network "
            "interfaces (NCCL_SOCKET_IFNAME, NCCL_IB_DISABLE), that every rank has its own GPU, "
            "and the logs of the other ranks (one may have died first).",
            cuda=True,
        ),
        FailureClass.DEVICE_UNAVAILABLE: ClassInfo("GPU unavailable", DEVICE_HINT, cuda=True),
        FailureClass.NUMERICAL: ClassInfo(
            "numerical divergence (NaN/Inf)",
            "The hyperparameters made training diverge: lower the learning rate, add gradient "
            "clipping or warm-up, use bf16 instead of fp16; torch.autograd.set_detect_anomaly "
            "finds the first op that produced NaN.",
        ),
        FailureClass.HOST_OOM: ClassInfo(
            "host memory exhausted",
            "Host RAM or /dev/shm ran out: fewer DataLoader workers or a smaller prefetch, fewer "
            "trials in parallel, a larger --shm-size (Docker) or memory limit; `dmesg | grep -i "
            "oom` confirms the kernel OOM killer.",
        ),
        FailureClass.SEGFAULT: ClassInfo(
            "native crash",
            "A native library crashed. Retry once; if it repeats, run the trial alone with "
            "PYTHONFAULTHANDLER=1 (`hpo replay N`) and check for mismatched torch/CUDA/extension "
            "builds.",
        ),
        FailureClass.TIMEOUT: ClassInfo(
            "timed out",
            "The trial exceeded its time limit: raise `timeout` in the study YAML, or make the "
            "trial cheaper (fewer epochs, smaller model).",
        ),
        FailureClass.DATA_ERROR: ClassInfo(
            "data does not fit the model",
            "Check labels against the number of classes, token ids against the vocabulary, and "
            "input shapes against the model (a hyperparameter such as a size or sequence length "
            "may produce the mismatch).",
        ),
        FailureClass.USER_ERROR: ClassInfo(
            "error in the objective",
            "A bug in the objective or its environment: fix the code; `hpo replay N` reruns the "
            "trial with the same parameters.",
        ),
        FailureClass.WORKER_LOST: ClassInfo(
            "worker exited without a result",
            "The worker died without reporting why: read its log tail; `hpo replay N` reruns the "
            "trial in the foreground.",
        ),
        FailureClass.SUPERVISOR_LOST: ClassInfo(
            "supervisor died while the trial ran",
            "The trial was orphaned by a supervisor crash or kill and is retried on resume.",
        ),
        FailureClass.INTERRUPTED: ClassInfo(
            "interrupted",
            "The trial was stopped from outside (Ctrl-C, SIGTERM, SIGHUP, scheduler "
            "preemption); resume the study to continue.",
        ),
    }
)
