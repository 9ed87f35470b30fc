"""The rules table: which evidence means which failure class, as data, plus a small engine.

Each :class:`Rule` names one kind of failure and the cues that reveal it:

- ``text``: regular expressions searched in the message and traceback (case-insensitive,
  multi-line; use ``(?-i:...)`` for a case-sensitive part). A cue may capture
  ``(?P<code>...)``: it fills ``{code}`` in ``summary`` and, when ``code_type`` is set,
  becomes the ``cuda_error_type`` (snake_cased) instead of the rule's default.
- ``types``: regular expressions that must match a whole exception type name, as reported
  (``torch.cuda.OutOfMemoryError``) or as found in the text (``ValueError: ...``).
- ``signals``: signal names (``SIGSEGV``) the worker died of.

A rule matches when any of its cues does. The engine returns the matching rule with the
highest ``priority`` (the table order breaks ties), so strong evidence beats weak evidence:

====  ==========================================================================
 100  the objective's own guards (``hpo.guards.DataError``/``NumericalError``)
  90  root causes: hardware faults, launch watchdog, lost GPU, CUDA init failing (cuInit)
  86  an NCCL or HCCL error raised before the watchdog's timeout in the same log, with no CUDA
      fault or OOM named before it (the order is derived in classify: the lines can be far apart)
  85  NCCL watchdog timeout; Ascend HCCL's collective timeouts (sticky, as the watchdog's)
  81  NCCL reporting a sticky CUDA failure (``Cuda failure 'an illegal memory...'``)
  80  sticky CUDA kernel faults (illegal address, device-side assert, ...)
  75  unusable device (no device, driver mismatch, busy, wrong ordinal, ...)
  70  out of memory (GPU and host)
  71  a host memory monitor killed the task (Ray calls this OutOfMemoryError too); an op on
      the CPU that ran out of memory in the GPU's wording (ONNX Runtime's NCHWc nodes,
      TensorFlow 1's node line naming cpu:0, the JVM's java.lang.OutOfMemoryError)
  66  NCCL watchdog taking the process down after an error; a distributed store timeout
      (also while NCCL fetches its unique id: a peer never arrived, NCCL never ran)
  65  NCCL errors
  61  a dimension the user's own line names (above the data rule's shape errors)
  60  cuDNN, cuBLAS, numerical, data and known user errors
  55  DataLoader worker killed by a signal; DataLoader, peer and job time limits
  50  ``KeyboardInterrupt``; Ray Tune's stop on Ctrl-C (above the actor deaths it causes)
  49  Dask's nanny over its memory budget (below a Ctrl-C after it, above KilledWorker)
  45  weak evidence (DataLoader worker exited, distributed network errors, numpy's overflow
      then invalid value)
  42  a worker of a process pool (joblib/loky, concurrent.futures, Ray) died
      also XLA's stream "already in an error state"; an elastic training's dead actor
  41  Dask's connect limit (below the pool worker's death it often follows)
  40  any other CUDA error (assumed sticky; not recognised)
  36  srun ending a job step because one of its tasks exited (above the kills it prints)
  35  crash or kill evidence in the log text (``Segmentation fault``, ``exitcode: -9``)
      and a signal handler's report of a stop signal (``*** SIGTERM received at time=``)
  34  warnings a run goes on after: torch's cuDNN plan warning, XLA's pinned host buffers,
      W&B's init timeout
  20  the signal the worker died of
  15  launcher wrappers that only say a child failed
  11  an RL return or reward logged as NaN (weak: loops print NaN before any episode ends)
  10  start-up warnings that a framework found no usable GPU and went on without one (also
      "No CUDA runtime is found", printed on import by a CUDA extension build; torch's
      "UserWarning: CUDA initialization: ...")
====  ==========================================================================

Some rules name no failure and yield to a plain Python error (``AssertionError: ...``,
``TypeError: ...``) or a library's own error (``wandb.errors.UsageError``; not the consequence
errors of a failed child, peer or link, ``classify._CONSEQUENCE_ERROR``) named in the same text,
whatever their priority (``yields_to_plain_error``):
launcher lines that only say a child failed, srun ending a step after a task exited, a
signal handler's report, autograd anomaly mode's warning, torch's cuDNN plan warning, Dask's
nanny over its memory budget, an elastic training's dead actor, XLA's pinned host warnings,
faulthandler's report of a Windows access violation (also printed for violations that were
handled), and the start-up warnings. The
warnings rank below crashes and signals too, so they decide only when nothing else is named.

CUDA error *codes* (``cudaErrorX``, ``CUDA_ERROR_X``, numbers, ``cudaGetErrorString`` texts)
are read before these rules, from the table in :mod:`hpo.failures.codes`; a code competes
with the rules at the priority of its class (see :data:`CODE_PRIORITY`), just above the rules
of that class. A CUDA library's status given by number (``CUBLAS_STATUS_SUCCESS (13 vs.
0)``, ``CUBLASError(code 13``) is read as its name (``codes.LIBRARY_STATUSES``), which the rules
below classify. A rule with ``confident=False`` is a catch-all: its verdict stands, but the
diagnosis is marked not recognised.

The CUDA, cuDNN, cuBLAS and NCCL error strings live here and in :mod:`hpo.failures.codes`,
nowhere else in ``hpo``.
"""

from __future__ import annotations

import bisect
import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

# The regex parser, to tell which cues treat every digit alike (_digit_blind); private, so any
# failure there falls back to exact windows.
try:
    _sre_constants: Any = importlib.import_module("re._constants")
    _sre_parser: Any = importlib.import_module("re._parser")
except ImportError:  # Python 3.10
    _sre_constants = importlib.import_module("sre_constants")
    _sre_parser = importlib.import_module("sre_parse")

from hpo.failures.classes import OOM_HINT, FailureClass

__all__ = [
    "CODE_PRIORITY",
    "EXPANDABLE_SEGMENTS_FAILURE",
    "expandable_segments_failure",
    "code_hint",
    "RULES",
    "Evidence",
    "Match",
    "Rule",
    "NCCL_ERROR_FIRST",
    "literal_anchor",
    "match_rule",
    "match_rules",
]

FC = FailureClass

P_GUARD = 100
P_ROOT = 90
P_NCCL_TIMEOUT = 85
P_STICKY = 80
P_DEVICE = 75
P_MEMORY = 70
P_NCCL_ABORT = 66
P_STORE_TIMEOUT = 66
P_NCCL = 65
P_SPECIFIC = 60
P_KILLED_WORKER = 55
P_INTERRUPT = 50
P_WEAK = 45
P_POOL = 42
P_CUDA_GENERIC = 40
P_TEXT_SIGNAL = 35
P_SIGNAL = 20
P_WRAPPER = 15
P_HINT = 10

#: What XLA's and TensorFlow's driver calls print before the CUDA driver's out-of-memory status
#: when a pinned *host* buffer could not be allocated ("failed to alloc 1073741824 bytes on host:
#: CUDA_ERROR_OUT_OF_MEMORY"): host memory, read by ``xla-pinned-host-memory``, and never the
#: GPU's out-of-memory code (the GPU rules and :mod:`hpo.failures.classify` skip it).
HOST_BUFFER_PREFIX = "bytes on host: "

#: A row of Slurm's ``sacct`` (job id, array index and step first; the state last, then the exit
#: code in the default format; sacct cuts a long state to nine characters and a "+"). The
#: lookahead wants a time or an exit code on the line ("00:00:48", "0:0"), which a log line that
#: starts with a number and ends in a word has not.
_SACCT_ROW = r"^\d{4,}(?:_\d+)?(?:\.\w+)?[ \t](?=[^\n]{0,300}?\d:\d)[^\n]{0,300}?[ \t]"
_SACCT_END = r"(?:[ \t]+\d+:\d+)?[ \t]*$"

#: The line ``classify`` adds to the evidence when an NCCL error comes before the watchdog's
#: timeout: the two can be far apart, beyond a cue's window, so their order is derived there and
#: the rule ``nccl-error-before-watchdog`` reads this line.
NCCL_ERROR_FIRST = "NCCL error before the watchdog's timeout"

#: A source line that names a tensor dimension: ``dim=``/``axis=`` or a reduction or reshaping
#: method given a number first (``x.mean(1)``, ``x.transpose(0, 2)``). One line, no newline.
_DIM_LINE = (
    # The lookahead is atomic, so a long line costs one scan, not one per candidate position.
    r"(?=[^\n]*?(?:\b(?:dim|axis)\s*=|\.(?:mean|sum|max|min|argmax|argmin|softmax|log_softmax|"
    r"squeeze|unsqueeze|transpose|permute|flatten|norm|std|var|cumsum|prod|topk|sort|select|"
    r"narrow|size|chunk|split|unbind)\(\s*-?\d))[^\n]*"
)


@dataclass(frozen=True)
class Rule:
    """One row of the table. See the module docstring for how cues and priority work."""

    id: str
    failure_class: FailureClass
    summary: str
    priority: int
    text: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    signals: tuple[str, ...] = ()
    sticky: bool = False
    cuda: bool = False
    cuda_error_type: str | None = None
    code_type: bool = False
    hint: str | None = None
    confident: bool = True
    # A consequence or a start-up warning, not a cause: it yields to a plain Python error
    # (``ValueError: ...``) named in the same text (see ``classify``).
    yields_to_plain_error: bool = False


# Hints shared by several rules. Class-level defaults live in classes.CLASS_INFO.
_DSA_HINT = (
    "A device-side assert: usually an index out of range (labels outside [0, num_classes), "
    "token ids >= vocabulary size, gather/scatter indices) or NaN/Inf fed to a bounded loss "
    "such as BCE. Rerun with CUDA_LAUNCH_BLOCKING=1 (`hpo replay N`) or on CPU to see the "
    "failing op. The worker's CUDA context is unusable and is replaced."
)
_STICKY_HINT = (
    "The CUDA context is unusable; the trial is retried in a fresh worker. Typical causes: a "
    "bug in a custom kernel or extension, an index error, a torch build that does not match "
    "the GPU, or a hardware fault. Rerun with CUDA_LAUNCH_BLOCKING=1 (`hpo replay N`); if it "
    "follows one GPU, check it with `nvidia-smi` and dmesg (Xid errors)."
)
_HARDWARE_HINT = (
    "A hardware fault on the GPU or its interconnect: the trial is retried in a fresh worker "
    "and repeated faults quarantine the GPU. Check it with `nvidia-smi -q -d ECC` and dmesg "
    "(Xid); a GPU with uncorrectable errors needs a reset or replacement."
)
_LAUNCH_TIMEOUT_HINT = (
    "A kernel ran longer than the display watchdog allows (the GPU also drives a display, or "
    "Windows WDDM TDR): use a GPU without a display (or TCC mode), or make kernels shorter "
    "with a smaller batch or resolution."
)
_NCCL_TIMEOUT_HINT = (
    "A collective did not finish within the process-group timeout: one rank hung or died "
    "(data stall, OOM, dead peer, uneven batches). Read the other ranks' logs first; raise the "
    "timeout in init_process_group only if ranks are legitimately slow."
)
_CUDNN_FIND_HINT = (
    "cuDNN found no algorithm for this convolution, usually because its workspace does not "
    "fit in the remaining GPU memory: use a smaller batch, torch.backends.cudnn.benchmark="
    "False, or check that the cuDNN of this torch build supports the GPU."
)
_HANDLE_HINT = (
    "The library could not create its handle or workspace, almost always because GPU memory "
    "was already full (or an earlier asynchronous CUDA error): smaller batch, fewer processes "
    "on the GPU."
)
_EXEC_FAILED_HINT = (
    "A library kernel failed to run and the CUDA context may be unusable (fresh worker). "
    "Causes: a torch build without kernels for this GPU, an earlier asynchronous CUDA error "
    "(rerun with CUDA_LAUNCH_BLOCKING=1, `hpo replay N`), or a driver problem."
)
_STORE_TIMEOUT_HINT = (
    "A rank waited on the rendezvous store (TCPStore) for a peer that never arrived: another "
    "rank died or hung before this point (read its log first), or MASTER_ADDR/MASTER_PORT are "
    "unreachable. Raise the timeout in init_process_group only if ranks start slowly."
)
_SHM_HINT = (
    "/dev/shm is too small for the DataLoader workers: raise it (docker --shm-size or "
    "--ipc=host), use fewer workers or a smaller prefetch_factor, or "
    "torch.multiprocessing.set_sharing_strategy('file_system')."
)
_OOM_KILLER_HINT = (
    "Most often the kernel OOM killer (check `dmesg | grep -i oom`): reduce host memory use "
    "(DataLoader workers, prefetching, cached datasets, checkpoint loading) or run fewer "
    "trials per host."
)
_SEGV_HINT = (
    "A native crash. Retry once; if it repeats, run the trial alone with PYTHONFAULTHANDLER=1 "
    "(`hpo replay N`) and check for mismatched torch, CUDA and extension builds."
)
_INTERRUPT_HINT = (
    "Stopped from outside (Ctrl-C, SIGTERM/SIGHUP from a scheduler or a closed terminal): "
    "nothing is wrong with the trial; resume the study, under nohup/tmux or the scheduler's "
    "requeue."
)

_POOL_HINT = (
    "A worker of a process pool the objective uses (joblib/loky, concurrent.futures, Ray) "
    "died; the trial's own worker is fine and the trial is retried. The pool's exit codes "
    "say why: SIGKILL(-9) is most often the kernel OOM killer (fewer pool workers, less memory "
    "per task), SIGSEGV(-11) a native crash in the task; n_jobs=1 shows the task's own error."
)
_MISUSE_HINT = (
    "A CUDA API was called in a way it does not allow (a bug, not a device fault; the CUDA "
    "context stays usable): for CUDA graphs, keep synchronising calls, allocations and .item() "
    "out of the captured region (torch.compile mode='reduce-overhead', vLLM/SGLang graph "
    "capture), or disable CUDA graphs; `hpo replay N` reproduces it."
)
_FORK_HINT = (
    "CUDA was used in a forked child (a DataLoader worker or a multiprocessing.Process after "
    "the parent initialised CUDA): keep CUDA out of Dataset/collate code, use the 'spawn' or "
    "'forkserver' start method (DataLoader multiprocessing_context), or num_workers=0. Not a "
    "device fault; the trial's CUDA context is fine."
)
_PLATFORM_HINT = (
    "The GPU, driver or platform does not support this operation (older GPUs, Windows/WSL, "
    "virtual GPUs, Jetson): e.g. CUDA IPC between processes on Windows, expandable_segments "
    "in PYTORCH_CUDA_ALLOC_CONF on vGPU/WSL. Every trial on this device fails the same way; "
    "the CUDA context itself is fine (`hpo doctor`)."
)

# Bits of regex reused below.
_BECOMES = (
    r"(?:is|are|was|were|be|becomes?|became|equals?(?: to)?|changed to|goes to|went to"
    r"|turns?(?: in)?to|turned (?:in)?to|jumps? to|gets?|got)"
)
_NET_FAILURES = (
    "Connection refused",
    "Network is unreachable",
    "No route to host",
    "Connection reset by peer",
    "Connection timed out",
)
_CUDA = r"(?:CUDA|HIP)"
# A bare "OOM" is GPU memory only on a line that names GPU work and nothing of the host: the
# kernel's OOM killer, Ray's and Kubernetes' host-memory kills ("OOM killer", "OOMKilled") and
# "CPU/host/system RAM" lines are host_oom's. Upper case only, as a whole word ("BLOOM", "room").
_OOM_WORD = r"(?-i:\bOOMs?\b)"
_GPU_WORK = r"(?:train|fine-?tun|finetun|infer|lora\b|batch|epoch|forward|backward|GPU|CUDA|VRAM)"
# From the start of such a line; the first lookahead (is "OOM" on it at all?) is a cheap scan
# that spares the others on lines that only have "room" or "zoom".
_GPU_OOM_LINE = (
    r"^(?=[^\n]*?" + _OOM_WORD + r")"
    r"(?![^\n]*(?:kill|\b(?:CPU|host|system)\b|(?<!GPU )\bRAM\b))[^\n]*?"
)
# Something training computes, said to turn NaN ("l_pix becomes nan", "the weights turned into
# NaN"). Only these subjects: NaN in the data ("the column becomes NaN after the merge") is the
# data's fault, not a divergence the hyperparameters caused. Matched from the start of a line
# that has the word "nan" (a cheap scan first, as for _GPU_OOM_LINE).
_NAN_LINE = r"^(?=[^\n]*?\bnan\b)[^\n]*?"
_TRAINED = (
    r"(?:los{2}\w*|l[_-][a-z]\w*|grad\w*|weights?|param(?:eter)?s?|outputs?|logits"
    r"|activations?|model|train\w*|epochs?|iter(?:ation)?s?)"
)
_TURNS = (
    r"(?:becomes?|became|becoming|turns? (?:in)?to|turned (?:in)?to|turning (?:in)?to"
    r"|goes to|went to|going to|changed? to|jumps? to|jumped to)"
)
# From the start of a line that is not a source comment as a traceback shows it ("   2563     #
# if loss is nan or inf ...", an IPython frame of transformers' Trainer; "--> 12 # ...").
_NOT_A_COMMENT = r"^(?![ \t]*(?:-*>[ \t]*)?(?:\d+[ \t]+)?# )[^\n]*?"
_ASYNC_FOOTER = r"(?:CUDA|HIP) kernel errors might be asynchronously reported"

RULES: tuple[Rule, ...] = (
    # --- the objective's own guards --------------------------------------------------------
    Rule(
        "guard-data-error",
        FC.DATA_ERROR,
        "data error reported by the objective's guard",
        P_GUARD,
        types=(r"(?:hpo\.guards\.)?DataError",),
    ),
    Rule(
        "guard-numerical-error",
        FC.NUMERICAL,
        "non-finite values reported by the objective's guard",
        P_GUARD,
        types=(r"(?:hpo\.guards\.)?NumericalError",),
    ),
    # --- root causes ------------------------------------------------------------------------
    Rule(
        "cuda-ecc-uncorrectable",
        FC.CUDA_CONTEXT_CORRUPTED,
        "uncorrectable ECC error on the GPU (sticky: context unusable)",
        P_ROOT,
        text=(
            r"uncorrectable ECC error",
            r"cudaErrorECCUncorrectable",
            r"CUDA_ERROR_ECC_UNCORRECTABLE",
            r"hipErrorECCNotCorrectable",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="ecc_uncorrectable",
        hint=_HARDWARE_HINT,
    ),
    Rule(
        "cuda-nvlink-uncorrectable",
        FC.CUDA_CONTEXT_CORRUPTED,
        "uncorrectable NVLink error (sticky: context unusable)",
        P_ROOT,
        text=(r"uncorrectable NVLink error", r"cudaErrorNvlinkUncorrectable"),
        sticky=True,
        cuda=True,
        cuda_error_type="nvlink_uncorrectable",
        hint=_HARDWARE_HINT,
    ),
    Rule(
        "cuda-launch-timeout",
        FC.TIMEOUT,
        "CUDA kernel killed by the launch watchdog (sticky: context unusable)",
        P_ROOT,
        text=(
            r"the launch timed out and was terminated",
            r"cudaErrorLaunchTimeout",
            r"CUDA_ERROR_LAUNCH_TIMEOUT",
            # MATLAB's gpuArray.
            r"\bthe CUDA driver timeout was encountered\b",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="launch_timeout",
        hint=_LAUNCH_TIMEOUT_HINT,
    ),
    Rule(
        "gpu-lost",
        FC.DEVICE_UNAVAILABLE,
        "the GPU fell off the bus or is lost",
        P_ROOT,
        text=(
            r"fallen off the bus",
            r"GPU is lost",
            r"\bNV_ERR_GPU_IS_LOST\b",
            r"\bGPU lost from the bus\b",
            r"Unable to determine the device handle for GPU",
            r"NVIDIA-SMI has failed because it couldn'?t communicate with the NVIDIA driver",
            r"\bXid\b[^\n]{0,40}\b79\b",
        ),
        cuda=True,
        cuda_error_type="gpu_lost",
    ),
    # --- NCCL watchdog timeout --------------------------------------------------------------
    Rule(
        "nccl-watchdog-timeout",
        FC.TIMEOUT,
        "NCCL collective timed out (watchdog)",
        P_NCCL_TIMEOUT,
        text=(
            r"Watchdog caught collective operation timeout",
            r"ran for \d+ milliseconds before timing out",
            r"watchdog got stuck for \d+ seconds without making progress",
            r"Heartbeat monitor timed out",
            r"detected no heartbeat of its watchdog",
            r"NCCL communicator was aborted[^\n]{0,200}(?:timed out|timeout)",
            # Only the C++ frames: the error was constructed in the watchdog's timeout check.
            r"Exception raised from checkTimeout at",
            r"frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout\(",
            # PyTorch 2.5+: the watchdog's own line, and the dump signal that a rank whose collective
            # timed out sends to the others ("Received a dump signal due to a collective timeout from
            # rank 2"; terminals may wrap it).
            r"\bTimeout at NCCL work: \d+",
            r"\bReceived a dump signal due to a collective timeout from\b",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="nccl_timeout",
        hint=_NCCL_TIMEOUT_HINT,
    ),
    Rule(
        "hccl-collective-timeout",
        # Ascend's HCCL collectives and stream synchronisation: a peer or kernel that never
        # finished, as the NCCL watchdog's timeout (sticky: the task may still be on the device).
        FC.TIMEOUT,
        "HCCL collective timed out (Ascend)",
        P_NCCL_TIMEOUT,
        text=(
            r"\bThe wait execution of the Notify register times out\b",
            # (Ascend's: CANN's error code before it, or the runtime call after it.)
            r"\bE[EIJ]\d{4}: [^\n]{0,80}?\bStream synchronize timeout\b",
            r"\bStream synchronize timeout\b[^\n]{0,120}?\brt\w+ execute failed\b",
            r"\[TaskExecStage\]\[Timeout\]",
            # torch_npu's device synchronise with a timeout (507048: the task did not finish);
            # HCCL's FFTS+ task stuck on a notify.
            r"\bAclrtSynchronizeDeviceWithTimeout, error code is 507048\b",
            r"\bThe execution of the internal task times out\b",
            r"\bhccl fftsplus task timeout\b",
        ),
        sticky=True,
        hint=_NCCL_TIMEOUT_HINT,
    ),
    Rule(
        "nccl-error-before-watchdog",
        # An NCCL error raised before a rank's watchdog timed out is the first failure named:
        # the peers waited on the rank that failed until their collectives timed out.
        FC.NCCL,
        "NCCL error, then the NCCL watchdog's timeout",
        P_NCCL_TIMEOUT + 1,
        # Derived evidence (classify._nccl_error_first): the order of two lines far apart.
        text=(rf"^{re.escape(NCCL_ERROR_FIRST)}$",),
        sticky=True,
        cuda=True,
        cuda_error_type="nccl_error",
        hint=(
            "The first NCCL error decides: read the log of the rank that raised it "
            "(NCCL_DEBUG=INFO); the other ranks timed out waiting for it."
        ),
    ),
    # --- sticky CUDA kernel faults ----------------------------------------------------------
    Rule(
        "nccl-sticky-cuda-failure",
        FC.NCCL,
        "NCCL error caused by a sticky CUDA failure (context unusable)",
        P_STICKY + 1,
        text=(
            r"Cuda failure[^\n']{0,20}'(?:an illegal memory access was encountered|unspecified "
            r"launch failure|device-side assert triggered|misaligned address|an illegal "
            r"instruction was encountered|uncorrectable ECC error encountered)'",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="nccl_unhandled_cuda_error",
        hint=_STICKY_HINT,
    ),
    Rule(
        "cuda-device-side-assert",
        FC.CUDA_CONTEXT_CORRUPTED,
        "CUDA device-side assert triggered (sticky: context unusable)",
        P_STICKY,
        text=(
            r"device-side assert(?:ion)? triggered",
            r"cudaErrorAssert\b",
            r"CUDA_ERROR_ASSERT\b",
            r"hipErrorAssert\b",
            r"device-side assertion failures were found",
            r"block: \[\d+, ?\d+, ?\d+\],? thread: \[\d+, ?\d+, ?\d+\],? Assertion",
            r"\.cuh?:\d+: [^\n]{0,200}Assertion `[^\n]{0,300}` failed",
            # Interleaved output of many threads: the kernel file, then its assertion.
            r"\.cuh?\b[^\n]{0,300}\bAssertion `[^\n`]{0,300}index out of bounds",
            # Paddle's kernel asserts print no colon after the line number ("cross_entropy_kernel.cu:1008
            # Assertion `false` failed.").
            r"\.cuh?:\d+ Assertion `[^\n]{0,300}` failed",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="device_side_assert",
        hint=_DSA_HINT,
    ),
    Rule(
        "cuda-illegal-memory-access",
        FC.CUDA_CONTEXT_CORRUPTED,
        "CUDA illegal memory access (sticky: context unusable)",
        P_STICKY,
        text=(
            r"an illegal memory access was encountered",
            # cuda-gdb stopping on the fault ("CUDA Exception: Warp Illegal Address").
            r"CUDA Exception: (?:Lane|Warp|Device|Cluster) (?:Illegal|Out-of-range) Address",
            r"cudaErrorIllegalAddress",
            r"CUDA_ERROR_ILLEGAL_ADDRESS",
            r"(?-i:\bErrorIllegalAddress\b)",
            r"hipErrorIllegalAddress",
            # ROCm's HSA runtime: a GPU page fault ("Memory access fault by GPU node-2").
            r"Memory access fault by GPU\b",
            # The code alone, numbered as before CUDA 10.1 (Faiss: "details: CUDA error 77").
            r"\bCUDA error 77\b",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="illegal_memory_access",
        hint=_STICKY_HINT,
    ),
    Rule(
        "cuda-unspecified-launch-failure",
        FC.CUDA_CONTEXT_CORRUPTED,
        "CUDA unspecified launch failure (sticky: context unusable)",
        P_STICKY,
        text=(
            r"unspecified launch failure",
            # thrust's system_error message, sometimes cut short ("what():  unspecified launch fail").
            r"\bwhat\(\):\s+unspecified launch fail\b",
            r"cudaErrorLaunchFailure",
            r"CUDA_ERROR_LAUNCH_FAILED",
            r"hipErrorLaunchFailure",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="unspecified_launch_failure",
        hint=_STICKY_HINT,
    ),
    Rule(
        "cuda-misaligned-address",
        FC.CUDA_CONTEXT_CORRUPTED,
        "CUDA misaligned address (sticky: context unusable)",
        P_STICKY,
        text=(
            # Not UBSan's host-side reports ("runtime error: load of misaligned address 0x7f
            # for type 'int'", also "member call on", "downcast of", ...).
            r"misaligned address(?!\s+0x[0-9a-f]+ for type)",
            r"cudaErrorMisalignedAddress",
            r"CUDA_ERROR_MISALIGNED_ADDRESS",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="misaligned_address",
        hint=_STICKY_HINT,
    ),
    Rule(
        "cuda-illegal-instruction",
        FC.CUDA_CONTEXT_CORRUPTED,
        "CUDA illegal instruction (sticky: context unusable)",
        P_STICKY,
        text=(
            r"an illegal instruction was encountered",
            # The CUDA-prefixed wording only: a bare "Illegal instruction" is a CPU SIGILL.
            r"\bCUDA error\W{0,4}illegal instructions?\b",
            r"cudaErrorIllegalInstruction",
            r"CUDA_ERROR_ILLEGAL_INSTRUCTION",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="illegal_instruction",
        hint=_STICKY_HINT,
    ),
    Rule(
        "cuda-other-kernel-fault",
        FC.CUDA_CONTEXT_CORRUPTED,
        "CUDA kernel fault (sticky: context unusable)",
        P_STICKY,
        text=(
            r"hardware stack error",
            r"invalid program counter",
            r"operation not supported on global/shared address space",
            r"cudaError(?:HardwareStackError|InvalidPc|InvalidAddressSpace)",
            r"CUDA_ERROR_(?:HARDWARE_STACK_ERROR|INVALID_PC|INVALID_ADDRESS_SPACE)",
            # cuda-gdb's name for any GPU exception that stopped a kernel ("received signal
            # CUDA_EXCEPTION_14, Warp Illegal Address"): each one is a kernel fault.
            r"\bCUDA_EXCEPTION_\d+\b",
            r"CUDA Exception: (?:Lane|Warp|Device|Cluster) \w",
            # The kernel log's Xid for a fault in the application's kernels: 13 (graphics engine
            # exception: illegal instruction or address, out-of-range access), 31 (MMU fault), 43 (the
            # GPU stopped the channel). 79 (fallen off the bus) is a lost GPU.
            r"\bXid \([^)\n]{1,40}\): (?:13|31|43),",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="kernel_fault",
        hint=_STICKY_HINT,
    ),
    Rule(
        "xla-stream-error-state",
        # XLA puts a stream in this state after any failed operation on it: sticky, but below
        # the out-of-memory or NCCL error that caused it.
        FC.CUDA_CONTEXT_CORRUPTED,
        "the GPU stream is already in an error state (XLA, TensorFlow)",
        P_CUDA_GENERIC + 2,
        text=(
            r"\bstream did not block host until done; was already in an error state\b",
            # TensorFlow 1's session after a failed stream: the same consequence.
            r"^InternalError: GPU sync failed\b",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="stream_error_state",
    ),
    Rule(
        "accelerator-device-lost",
        # Intel GPUs (Level Zero, the Unified Runtime) and Vulkan: the driver reset the GPU after
        # a hang, and the process's context is gone; a fresh process can use the GPU again
        # (labelling conventions). NVIDIA's "fallen off the bus" stays gpu-lost.
        FC.CUDA_CONTEXT_CORRUPTED,
        "the accelerator's context was lost (driver reset after a hang)",
        P_STICKY,
        text=(
            r"\b(?:UR|ZE)_RESULT_ERROR_DEVICE_LOST\b",
            r"\bVK_ERROR_DEVICE_LOST\b",
            r"\bvk::DeviceLostError\b",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="device_lost",
        hint=_STICKY_HINT,
    ),
    Rule(
        "npu-kernel-fault",
        # Ascend NPUs: an AI-core or vector-core exception in a kernel (an out-of-range memory
        # access, a trap), reported at the next synchronise or launch, as a CUDA kernel fault is
        # (507015: ACL_ERROR_RT_AICORE_EXCEPTION, 507035: ..._VECTOR_CORE_EXCEPTION).
        FC.CUDA_CONTEXT_CORRUPTED,
        "NPU kernel fault (AI-core or vector-core exception)",
        P_STICKY,
        text=(
            r"\bNPU function error: [^\n]{0,200}\berror code is 5070(?:15|35)\b",
            r"\b(?:aclrtSynchronize\w*|rtKernelLaunch\w*)(?:\([^)\n]{0,80}\))? failed: 5070(?:15|35)\b",
            r"\bthere is an (?:exception of (?:fftsplus )?aicore error|aicore error exception)\b",
            r"\[vector core exception\]",
            r"\bThe DDR address of the MTE instruction is out of range\b",
        ),
        sticky=True,
        hint=_STICKY_HINT,
    ),
    Rule(
        "cuda-unknown-error",
        FC.CUDA_CONTEXT_CORRUPTED,
        "CUDA unknown error (sticky: context unusable)",
        P_STICKY,
        text=(
            _CUDA + r" error: unknown error",
            r"cuda runtime error \(30\)",
            r"cudaErrorUnknown",
            r"CUDA_ERROR_UNKNOWN",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="unknown",
        hint=_STICKY_HINT,
    ),
    # --- unusable device --------------------------------------------------------------------
    Rule(
        "cuda-no-device",
        FC.DEVICE_UNAVAILABLE,
        "no CUDA device visible",
        P_DEVICE,
        text=(
            r"no (?:CUDA|ROCm|HIP)-capable device is detected",
            r"No HIP GPUs are available",
            r"No supported device detected",
            r"No OpenCL device found",
            # Lightning: more GPUs asked for than the process sees.
            # (Within the three lines before its anchor, "But your machine only has", as every cue
            # must fit the lines around its anchor: tests/test_failures.py.)
            r"You requested GPUs: \[[^\]\n]*\][ \t]*(?:\n[ \t]*){0,2}(?:\(pid=\d+\)[ \t]*(?:\n[ \t]*)?)?"
            r"But your machine only has",
            r"GPUAccelerator can not run on your system since the accelerator is not available",
            r"\bGPUs requested but none are available\b",
            r"cudaErrorNoDevice",
            r"CUDA_ERROR_NO_DEVICE",
            r"No CUDA GPUs are available",
            # An objective's own check raising it ("RuntimeError: CUDA is not available. Ensure
            # that a GPU is available"); a CPU-only torch says "not compiled with CUDA".
            r"Error: CUDA is not available\b",
            r"(?<!Warning: CUDA initialization: )Found no NVIDIA driver\b",
            r"hipErrorNoDevice",
            r"no GPU resources available",
            # Docker without the NVIDIA runtime; Lightning, vLLM and NVML finding no GPU.
            r"could not select device driver \"[^\"\n]*\" with capabilities: \[\[gpu\]\]",
            r"No supported gpu backend found",
            r"Failed to infer device type",
            r"could not load NVML library",
            # TensorFlow 1 placing an op on a GPU that never registered (cuInit failed).
            r"specification '/device:(?:XLA_)?GPU:\d+' because no devices matching that specification are registered",
            # Kubernetes could not give the pod its GPU; CatBoost's task_type=GPU; macOS without MPS.
            r"requested number of devices unavailable for [\w.]+/gpu\b",
            r"\bGPU Device not found\b",
            r"The MPS backend is supported on MacOS \d",
            # The driver found no GPU it could drive (dmesg).
            r"NVRM: No NVIDIA graphics adapter probed",
            r"NVRM: The NVIDIA probe routine was not called",
            # ProcessGroupNCCL on a host that shows no GPU; torch's XPU backend without a device;
            # XGBoost's gpu_hist with none visible (its fatal CHECK, not the warning it goes on
            # after); a Kubernetes device plugin with only unhealthy devices to give.
            r"\bis only supported with GPUs, no GPUs found\b",
            r"\bNo XPU devices are available\b",
            r"\bNo visible GPU is found for XGBoost\b",
            r"\bAllocate failed due to no healthy devices present\b",
        ),
        cuda=True,
        cuda_error_type="no_device",
    ),
    Rule(
        "cuda-driver-mismatch",
        FC.DEVICE_UNAVAILABLE,
        "NVIDIA driver does not match this CUDA runtime",
        P_DEVICE,
        text=(
            r"CUDA driver version is insufficient",
            r"cudaErrorInsufficientDriver",
            r"CUDA_ERROR_INSUFFICIENT_DRIVER",
            # Not torch's start-up warning ("UserWarning: CUDA initialization: The NVIDIA driver on
            # your system is too old"): it goes on on the CPU (device-fallback-warning).
            r"(?<!CUDA initialization: The )NVIDIA driver on your system is too old",
            r"system has unsupported display driver\s*/\s*cuda driver combination",
            r"cudaErrorSystemDriverMismatch",
            r"forward compatibility was attempted on non supported HW",
            r"cudaErrorCompatNotSupportedOnDevice",
            r"PTX was compiled with an unsupported toolchain",
            r"cudaErrorUnsupportedPtxVersion",
            # The NVIDIA container runtime refusing an image that needs a newer driver.
            r"\bnvidia-container-cli: requirement error: unsatisfied condition: cuda\b",
            r"\bunsupported CUDA version: driver [\d.]+ < image\b",
            # NVML (NCCL's topology probe, nvidia-smi) after a driver upgrade without a reboot.
            r"\bnvmlInit(?:_v2)?\(\) failed: Driver/library version mismatch",
            # AWS Neuron's runtime on an older driver.
            r"\bThis runtime requires Neuron Driver version [\d.]+ or greater\b",
        ),
        cuda=True,
        cuda_error_type="driver_mismatch",
    ),
    Rule(
        "cuda-init-failed",
        FC.DEVICE_UNAVAILABLE,
        "CUDA could not be initialised",
        P_DEVICE,
        text=(
            r"system not yet initialized",
            r"cudaErrorSystemNotReady",
            r"Unexpected error from cudaGetDeviceCount",
            # Not torch's start-up warning of the same ("UserWarning: CUDA initialization: ..."):
            # torch goes on on the CPU (device-fallback-warning).
            r"(?<!Warning: )CUDA initialization: ",
            r"CUDA unknown error\s*-\s*this may be due to an incorrectly set up environment",
            r"CUDA call failed lazily at initialization",
            r"CUDA driver initialization failed",
            r"NVML_SUCCESS == DriverAPI::get\(\)->nvml\w+",
            r"device >= 0 && device < num_gpus INTERNAL ASSERT FAILED",
            # TensorRT's CUDA initialisation (35: driver too old, 100: no device).
            r"\bCuda initialization failure with error:? \d+",
            r"\bUnable to start CUDA Context\b",
            r"Failed to initialize NVML",
            r"NVML_ERROR_(?:LIB_RM_VERSION_MISMATCH|DRIVER_NOT_LOADED|LIBRARY_NOT_FOUND|GPU_IS_LOST)",
            r"NVMLError_(?:LibRmVersionMismatch|DriverNotLoaded|LibraryNotFound|GpuIsLost)",
            r"RM has detected an NVML/RM version mismatch",
            r"there are 0 visible CUDA devices",
            r"cudaGetDeviceCount failed",
            r"nvidia-container-cli: initialization error",
            r"nvml error: driver not loaded",
            # No driver library at all (CUDA.jl: could not load library "libcuda").
            r"could not load library \"libcuda\"",
            # The kernel driver failing to bring a GPU up (dmesg: "NVRM: GPU 0000:01:00.0: RmInitAdapter
            # failed! (0x22:0x56:894)").
            r"\bNVRM: [^\n]{0,80}\bRmInitAdapter failed\b",
            # ROCm's runtime could not start (no /dev/kfd, a broken driver): rocminfo, hipInit.
            r"(?<!aborting with error : )\bHSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary "
            r"resources\b",
            # AWS Neuron's runtime could not bring its devices up ("NRT:nrt_init  Failed to
            # initialize devices, error:5"; the driver needs a reload).
            r"\bnrt_init\b[^\n]{0,80}\bFailed to initialize devices\b",
        ),
        cuda=True,
        cuda_error_type="init_failed",
    ),
    Rule(
        "xla-cuda-init-failed",
        FC.DEVICE_UNAVAILABLE,
        "CUDA could not be initialised (no kernel ran)",
        # Above the sticky faults: "CUDA_ERROR_UNKNOWN" here comes from cuInit, not a kernel.
        P_ROOT,
        text=(
            r"failed call to cuInit\b",
            # (Not for out of memory: another process holds the GPU's memory; the OOM decides.)
            r"failed call to cuDevicePrimaryCtxRetain\b(?!: CUDA_ERROR_OUT_OF_MEMORY)",
            r"\bcall to cuInit results in",
            r"CUDA device intialisation problem",
            # JAX: "CUDA backend failed to initialize", "Backend 'cuda' failed to initialize".
            r"(?:CUDA backend|Backend 'cuda') failed to initialize",
            r"No visible GPU devices",
            # Paddle querying the devices at start-up (gpu_info.cc) gets CUDA's unknown error.
            r"CUDA error\(999\), unknown error\.[ \t]*\n\s{0,40}[^\n]{0,200}\bgpu_info\.cc:\d+",
        ),
        cuda=True,
        cuda_error_type="init_failed",
    ),
    Rule(
        "xla-no-cuda-device",
        FC.DEVICE_UNAVAILABLE,
        "XLA found no usable CUDA device",
        # XLA's consequence of a failed device set-up: below an out-of-memory named before it
        # (cuDevicePrimaryCtxRetain failing with CUDA_ERROR_OUT_OF_MEMORY), above the abort.
        P_MEMORY - 1,
        text=(r"no supported devices found for platform CUDA",),
        cuda=True,
        cuda_error_type="init_failed",
    ),
    Rule(
        "cuda-device-busy",
        FC.DEVICE_UNAVAILABLE,
        "CUDA device busy or unavailable",
        P_DEVICE,
        text=(
            r"CUDA(?:-capable)? devices? ?(?:\(s\))? (?:is/are|are|is) busy or unavailable",
            r"cudaErrorDevicesUnavailable",
            r"CUDA_ERROR_DEVICES_UNAVAILABLE",
            # AWS Neuron: the NeuronCores are held by another process ("NeuronCore(s) not
            # available - Requested:nc1-nc1 Available:0").
            r"\bNeuronCore\(s\) not available - Requested:",
        ),
        cuda=True,
        cuda_error_type="device_busy",
    ),
    Rule(
        "cuda-invalid-device-ordinal",
        FC.DEVICE_UNAVAILABLE,
        "CUDA device ordinal out of range",
        P_DEVICE,
        text=(
            r"invalid device ordinal",
            r"cudaErrorInvalidDevice\b",
            r"CUDA_ERROR_INVALID_DEVICE\b",
            r"GPU device may be out of range",
            # Ascend (CANN): a device id past the device count.
            r"\bSet device failed, invalid device, set device=\d+",
            r"\bGot device count\[\d+\] and device id\[\d+\], please check if device id is valid",
            r"hipErrorInvalidDevice\b",
            # IPEX selecting an XPU that does not exist ("dpcppSetDevice: device_id is out of range").
            r"\bdpcppSetDevice: device_id is out of range\b",
            # EGL rendering (habitat-sim, Magnum) asked for a CUDA device it cannot see.
            r"\bunable to find CUDA device \d+ among \d+ EGL devices\b",
        ),
        cuda=True,
        cuda_error_type="invalid_device",
    ),
    Rule(
        "cuda-no-kernel-image",
        FC.DEVICE_UNAVAILABLE,
        "this build has no kernels for the GPU's architecture",
        P_DEVICE,
        text=(
            r"no kernel image is available for execution on the device",
            # cuDNN frontend's kernels for newer GPUs only ("IndexerForward requires SM100+
            # compute capability, found SM9").
            r"\brequires SM\d+\+? compute capability, found SM\d+",
            r"cudaErrorNoKernelImageForDevice",
            r"CUDA_ERROR_NO_BINARY_FOR_GPU",
            r"hipErrorNoBinaryForGpu",
            r"invalid device function",
            r"cudaErrorInvalidDeviceFunction",
            r"with CUDA capability sm_\d+ is not compatible with the current PyTorch installation",
            r"PyTorch no longer supports this GPU because it is too old",
            # cuDNN/cuBLAS need a newer compute capability than the GPU has.
            r"(?:CUDNN|CUBLAS)_STATUS_ARCH_MISMATCH",
            r"cudnnStatusArchMismatch",
            r"Initializing CuDNN backend[^\n]*\n[^\n]*\bArch mismatch",
            # A PTX newer than the driver can compile (cudaErrorUnsupportedPtxVersion), also
            # when the message is wrapped across lines.
            r"the provided PTX was compiled with an\s+unsupported toolchain",
            # A GPU too old for the library: Triton (torch.compile), a rocBLAS build without the GPU's
            # architecture, a TensorRT engine built for another compute capability.
            r"which is too old to be supported by the triton GPU compiler",
            r"Triton only supports devices of CUDA Capability >= \d",
            r"BLAS error: Cannot read [^\n]{0,300}TensileLibrary\w*\.dat",
            r"\brocBLAS error: Could not load [^\n]{0,300}TensileLibrary\w*\.dat",
            r"The engine plan file is generated on an incompatible device",
            # ARCH_MISMATCH in THC's words (by number: classify reads it as the name).
            r"\bcublas runtime error : an absent device architectural feature",
            # flash-attn on a GPU older than its kernels ("FlashAttention only supports Ampere GPUs or
            # newer.").
            r"\bFlashAttention only supports \w+ GPUs or newer\b",
            # HIP's loader finding no code object for the GPU (218: hipErrorNoBinaryForGpu).
            r"\bCannot retrieve Static function, error: 218\b",
        ),
        cuda=True,
        cuda_error_type="no_kernel_image",
        hint=(
            "The torch build (or a CUDA extension) has no kernels for this GPU architecture: "
            "install a build whose CUDA version and arch list cover the GPU (`hpo doctor` "
            "shows both); every trial on this GPU will fail the same way."
        ),
    ),
    # --- out of memory ----------------------------------------------------------------------
    Rule(
        "mps-out-of-memory",
        FC.OOM,
        "MPS out of memory",
        P_MEMORY,
        text=(
            r"MPS backend out of memory",
            # MLX's Metal allocator ("[malloc_or_wait] Unable to allocate 124367104 bytes.").
            r"\[malloc_or_wait\] Unable to allocate \d+ bytes",
        ),
        cuda_error_type="out_of_memory",
        hint=OOM_HINT,
    ),
    Rule(
        "cuda-out-of-memory",
        FC.OOM,
        "CUDA out of memory",
        P_MEMORY,
        text=(
            # Not the advice "If you encounter CUDA out of memory, try to set --tile ...".
            # Also Ascend (torch_npu), Cambricon, Moore Threads: the same allocator message.
            r"\b(?:CUDA|HIP|XPU|NPU|MLU|MUSA) out of memory(?!\s*,\s*(?:try|reduce|set|use|consider)\b)",
            # Intel Gaudi's device memory ("MODULE:PT_DEVMEM Allocation failed for size::268435456").
            r"\bMODULE:PT_DEVMEM Allocation failed for size\b",
            # LightGBM's CUDA learner ("[LightGBM] [Fatal] [CUDA] out of memory").
            r"\[CUDA\] out of memory\b",
            # ggml's graph allocator on any backend ("failed to allocate Vulkan0 buffer of size").
            r"\bggml_gallocr_\w+: failed to allocate (?!CPU )\w+ buffer of size \d+",
            # Ascend's device memory manager out of memory (errno 12 in its driver log).
            r"\[devmm\]\[devmm_\w+ \d+\]<errno:12\b",
            # TensorFlow 1's graph op that could not get memory on its device (a CPU one says so).
            r"\bResource exhausted: failed to allocate memory\b(?![^\n]{0,300}(?:\n[^\n]{0,300})?device:CPU)",
            # HAMi's vGPU interposer: cuMemAlloc's status 2, CUDA_ERROR_OUT_OF_MEMORY.
            r"\bcuMemoryAllocate failed res=2\b",
            # Ascend's runtime: the device memory pool could not be allocated.
            r"\bMemory_Allocation_Failure\(EL0004\)",
            # GPU memory named in prose: "the graphics card ran out of memory", "out of memory
            # with vGPU-32GB", "out of VRAM".
            r"\b(?:GPU|graphics card|video card|VRAM|video memory)\b[^\n.]{0,30}\b(?:runs?|ran|running)"
            r" out of memory",
            r"\bout of memory (?:with|on|in) (?:an? |the )?v?GPU\b",
            r"\bout of (?:GPU|video|graphics) memory\b",
            r"\bout of VRAM\b",
            r"Allocation on device \d+ would exceed allowed memory",
            # The allocator's OOM report queries NVML; where NVML fails (MIG, WSL) this replaces
            # the OOM message (pytorch#112377).
            r"NVML_SUCCESS == r INTERNAL ASSERT FAILED",
            r"cudaMalloc\w*[^\n]{0,40}out of memory",
            # Not Lua Torch's host "you tried to allocate 3GB. Buy new RAM!".
            r"(?<!you )Tried to allocate \d+(?:\.\d+)? ?[KMGTP]i?B\b",
            # The type named in prose or an issue title ("raise CUDA OutOfMemoryError when").
            # (Not on a source line: "except torch.cuda.OutOfMemoryError:" names a handler.)
            r"(?<!except )(?<!except \()(?<!, )(?<![.\w])(?:CUDA|torch\.cuda)[ .]OutOfMemoryError\b",
            r"\b(?:CUDA|GPU) OOM\b",
            r"\b(?:CUDA|HIP|XPU|GPU|VRAM) out-of-memory\b",
            # A bare "OOM" on a line about GPU work ("OOM while training lora", "LoRA fine-tuning
            # OOMs on a 4090"); see _GPU_OOM_LINE for what it must not be.
            _GPU_OOM_LINE + _OOM_WORD + r"[^\n.]{0,40}?\b" + _GPU_WORK,
            _GPU_OOM_LINE + r"\b" + _GPU_WORK + r"\w*[^\n.]{0,40}?" + _OOM_WORD,
            _CUDA + r" error:\s*out of memory",
            r"cuda runtime error \(2\) : out of memory",
            # HIP/CUDA check macros ("error: out of memory (2) at .../init_device.cpp:54").
            r"\berror: out of memory \(2\) at \S+:\d+",
            r"cudaErrorMemoryAllocation",
            # (Not a pinned host buffer's: xla-pinned-host-memory.)
            rf"(?<!{HOST_BUFFER_PREFIX})CUDA_ERROR_OUT_OF_MEMORY",
            r"hipErrorOutOfMemory",
            r"\bHIP_ERROR_OutOfMemory\b",
            # Vulkan (ggml, ncnn): vk::Result::eErrorOutOfDeviceMemory.
            r"(?:\bVK_|\be|\b)ERROR_?OUT_?OF_?DEVICE_?MEMORY\b",
            # XLA (JAX, TensorFlow, EXLA) device allocator
            r"Out\s+of memory while trying to allocate \d+ bytes",
            # XLA ("RESOURCE_EXHAUSTED: Out of memory allocating 20029400304 bytes.") and CuPy
            # ("Out of memory allocating 25,600,000 bytes (allocated so far: ...)"),
            # "out of memory to allocate 1073741824 bytes (total ...)".
            r"\bOut of memory allocating [\d,]+ bytes",
            r"\bout of memory to allocate \d+ bytes",
            # PaddlePaddle, vLLM's KV cache, thrust's device allocator, dh::safe_cuda.
            r"Out of memory error on GPU \d+",
            # OpenCV's CUDA module (cv::cuda::GpuMat).
            r"\(-217:Gpu API call\) out of memory\b",
            # Paddle's C++ traceback through a GPU kernel into its output's allocation (the abort
            # on paddle::memory::allocation::BadAlloc, before the message is printed).
            r"\bphi::\w+Kernel<[^\n]{0,300}\bphi::GPUContext\b[^\n]*\n[^\n]*"
            r"\bphi::DeviceContext::Alloc\b",
            r"No available memory for the cache blocks",
            r"thrust::system::detail::bad_alloc",
            r"\bCUDA error: [^\n]{0,200}\.cuh?\(\d+\): out of memory",
            # Caffe/glog checks of cudaMalloc (2 is cudaErrorMemoryAllocation), thrust, RMM,
            # pycuda, faiss, Theano, TensorRT, XLA on GPU and TPU.
            r"\bcudaSuccess \(2 vs\. 0\)",
            r"thrust::system::system_error'\s*\n\s*what\(\):[^\n]*: out of memory",
            r"instance of '(?:CUDA|cuda)::\w+'\s*\n\s*what\(\):[^\n]*\n?[^\n]*\berror: out of memory",
            r"RMM failure at:?[^\n]{0,300}(?:Maximum pool size exceeded|out of memory)",
            r"cuMemAlloc\w* failed: out of memory",
            r"Failed to cudaMalloc \d+ bytes",
            r"bytes of device memory \(out of memory\)",
            r"Cuda Runtime \(out of memory\)",
            r"Cuda Error in [\w:]+: 2 \(out of memory\)",
            # dlib's CHECK_CUDA ("Error while calling cudaMalloc(&...) in file ...:908. code: 2,
            # reason: out of memory").
            r"\bError while calling cuda(?!MallocHost)\w+\([^\n]{0,300}\. code: 2, reason: out of memory\b",
            # TensorRT's builder and runtime.
            r"Requested amount of (?:GPU )?memory \(\d+ bytes\) could not be allocated",
            r"\bOutOfMemory Error in allocate\b",
            r"\bError Code 2: OutOfMemory\b",
            # Apple's Metal (MLX, llama.cpp, Swift): the GPU's share of unified memory.
            r"\bkIOGPUCommandBufferCallbackErrorOutOfMemory\b",
            r"Insufficient Memory \(IOAF code 8\)",
            # CatBoost's GPU memory pool; ManagedCuda's CUDA_ERROR_OUT_OF_MEMORY; spconv; RMM.
            r"\bNCudaLib::TOutOfMemoryError\b",
            r"(?-i:\bErrorOutOfMemory\b)",
            r"\bcuda failed with error 2 out of memory",
            r"\bbad_alloc: out_of_memory: CUDA error\b",
            r"\brmm::out_of_memory\b",
            # HIP's old numbering (1002: hipErrorMemoryAllocation) in TensorFlow on ROCm.
            r"\bhipError_t\(1002\)",
            # OpenCL (LightGBM's GPU learner): CL_MEM_OBJECT_ALLOCATION_FAILURE.
            r"\bMemory Object Allocation Failure\b",
            r"\bCL_MEM_OBJECT_ALLOCATION_FAILURE\b",
            # accelerate's find_executable_batch_size halves the batch on each OOM until zero.
            r"No executable batch size found, reached zero",
            # ONNX Runtime's arena; CatBoost's GPU tree-ctr memory estimate.
            r"\bBFCArena::AllocateRawInternal\b[^\n]{0,300}Failed to allocate memory",
            # Paddle's GPU allocator check (platform/gpu_info.cc).
            r"\benforce allocating <= available failed\b",
            r"not enough memory for tree-ctrs",
            r"Failed to allocate request for [\d.]+ ?[KMGT]i?B",
            # XLA on TPU: HBM and the on-chip memories (vmem, smem) are all device memory.
            r"Ran out of memory in memory space (?:hbm|vmem|smem|cmem)\b",
            r"Exceeded (?:hbm|vmem|smem|cmem) capacity",
            r"RESOURCE_EXHAUSTED: (?:E\d+: )?\w*(?:VmemOom|SmemOom|HbmOom|AllocationFailure)\b",
            r"Attempting to allocate [\d.]+ ?[KMGT]i?B?\. That was not possible\. There are "
            r"[\d.]+ ?[KMGT]i?B? free",
            r"RESOURCE_EXHAUSTED: Allocation \(size=\d+\) would exceed memory\s+\(size=\d+\)",
            # XLA's OOM report lists the largest allocations, each with these two lines.
            r"\bXLA label: [^\n]*\n[^\n]{0,120}\bAllocation type: (?:HLO temp|scoped|parameter"
            r"|output|constant|maybe-live-out|thread-local)\b",
            r"Error allocating device buffer: Attempting to allocate",
            r"Attempting to reserve [\d.]+[KMGT] at the bottom of memory",
            r"RESOURCE_EXHAUSTED: Failed to allocate request for",
            r"BufferAssignment OOM Debugging",
            # TensorFlow's BFC allocator ("ResourceExhaustedError: OOM when allocating tensor
            # with shape[...] ... on /device:GPU:0 by allocator GPU_0_bfc"); on the CPU it is
            # host memory (host-allocator-failed).
            r"\bOOM when allocating tensor(?![^\n]{0,300}(?:device:CPU:\d|by allocator cpu))",
            # ggml/llama.cpp's CUDA_CHECK ("CUDA error 2 at .../ggml-cuda.cu:1752: out of memory").
            r"\b(?:CUDA|HIP) error \d+ at [^\n]{1,300}?: out of memory\b",
            # LoRAX/TGI's warm-up; an engine's GPU arena ("ROCm model arena alloc failed ... out of memory").
            r"Not enough memory to handle \d+ prefill tokens",
            r"\b(?:ROCm|CUDA|HIP|GPU|Metal)\b[^\n]{0,60}\balloc(?:ation)? failed\b[^\n]{0,120}\bout of memory\b",
            # XLA's and TensorFlow's BFC allocator on a GPU ("Allocator (GPU_0_bfc) ran out of memory
            # trying to allocate"; TensorFlow 0.x: "bfc_allocator.cc:271] Ran out of memory trying to
            # allocate 44.94MiB. See logs for memory state."); torch's cudaMallocAsync backend, whose
            # OutOfMemoryError ComfyUI prints as "Allocation on device" alone.
            r"\bAllocator \(GPU_\d+_bfc\) ran out of memory trying to allocate\b"
            r"(?![^\n]{0,200}The caller indicates that this is not a failure)",
            r"\bbfc_allocator\.cc:\d+\] Ran out of memory trying to allocate\b[^\n]{0,40}See logs for memory state",
            r"!!! Exception during processing ?!!! Allocation on device[ \t]*$",
            # MXNet's pooled storage manager ("pooled_storage_manager.h:107: cudaMalloc failed: out of
            # memory", which pastes may wrap).
            r"\bpooled_storage_manager\.h:\d+: cudaMalloc fail\s?ed: out of memory",
            # Intel GPUs (torch XPU, SYCL): Level Zero and the Unified Runtime out of device
            # memory ("level_zero backend failed with error: 40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)").
            r"\bUR_RESULT_ERROR_OUT_OF_RESOURCES\b",
            r"\bUR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY\b",
            r"\bZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY\b",
            # vLLM's start-up check: the KV cache the settings need does not fit in GPU memory
            # (max_model_len, gpu_memory_utilization are the parameters).
            r"KV cache is needed, which is larger than the available KV cache memory\b",
            r"\bis larger than the maximum number of tokens that can be stored in KV cache\b",
            # ... and its check that the GPU has the memory gpu_memory_utilization asks for.
            r"\bFree memory on device \([\d.]+/[\d.]+ GiB\) on startup is less than desired GPU "
            r"memory utilization\b",
            r"\bNo available memory for the cache blocks\b",
            # Theano's GPU pools (CNMeM; "Error allocating 39190528 bytes of device memory"), raised
            # as a Python MemoryError, which alone is host memory.
            # (Not the pool's set-up, "cnmemInit call failed! Reason=CNMEM_STATUS_OUT_OF_MEMORY",
            # after which Theano goes on on the CPU.)
            r"(?<!Reason=)\bCNMEM_STATUS_OUT_OF_MEMORY\b",
            r"\bError allocating \d+ bytes of device memory\b",
            # TensorFlow 2's eager ops on the GPU allocator ("ResourceExhaustedError: failed to
            # allocate memory [Op:AddV2]"); on the CPU it says "OOM when allocating ... cpu".
            r"\bfailed to allocate memory \[Op:\w+\]",
            # The CUDA samples' error macro in hand-written CUDA programs ('Cuda error in func
            # "cuda_init_device" at line 33: out of memory', "Cuda error in file 'x.cu' in line 9 :
            # out of memory.").
            r"\bCuda error in (?:func(?:tion)?|file) [^\n]{1,200}?[ \t]?: out of memory\b",
            # AWS Neuron's device memory (HBM): "Failed to allocate 4.000GB (alignment: none,
            # usage: tensors) on ND 0:NC 4", then its usage table.
            r"\bFailed to allocate [\d.]+ ?[KMGT]?i?B \(alignment: [^\n)]{0,40}\) on ND \d+:NC \d+",
            # Ascend (CANN, MindSpore): the NPU's memory ("rtMalloc execute failed,
            # reason=[driver error:out of memory]"; "Malloc device memory failed, size[...]").
            r"\breason=\[driver error:out of memory\]",
            r"\bMalloc device memory failed, size\[\d+\]",
        ),
        types=(r"(?:torch\.)?(?:cuda\.)?OutOfMemoryError", r"cupy\.cuda\.memory\.OutOfMemoryError"),
        cuda=True,
        cuda_error_type="out_of_memory",
        hint=OOM_HINT,
    ),
    Rule(
        "cuda-library-alloc-failed",
        FC.OOM,
        "CUDA library could not allocate GPU memory ({code})",
        P_MEMORY,
        text=(
            r"(?P<code>(?:CUBLAS|CUDNN|CUSOLVER|CUSPARSE|CUFFT|CURAND)_(?:STATUS_)?ALLOC(?:ATION)?_FAILED)",
            # ROCm's counterparts (hipBLAS, hipBLASLt, rocBLAS, hipSPARSE, hipFFT, hipSOLVER).
            r"\b(?:HIPBLAS|HIPBLASLT|ROCBLAS|HIPSPARSE|HIPFFT|HIPSOLVER)_STATUS_ALLOC_FAILED\b",
            # The same status in THC's words (by number: classify reads it as the name).
            r"\bcublas runtime error : resource allocation failed",
        ),
        cuda=True,
        cuda_error_type="out_of_memory",
        code_type=True,
        hint=OOM_HINT,
    ),
    Rule(
        "host-shm-exhausted",
        FC.HOST_OOM,
        "shared memory (/dev/shm) exhausted",
        P_MEMORY,
        text=(
            r"unable to write to file </torch_",
            r"unable to (?:open|allocate) shared memory",
            r"unable to mmap \d+ bytes from file </torch_",
            # NCCL's own /dev/shm segments are NCCL's failure (labelled nccl).
            r"/dev/shm(?!/nccl-)[^\n]{0,200}No space left on device",
            r"No space left on device[^\n]{0,200}/dev/shm",
            r"Too many open files\. Communication with the workers is no longer possible",
            r"insufficient shared memory \(shm\)",
            r"out of shared memory",
            r"killed by signal: Bus\s+error",
            r"workers are out of shared\s+memory",
            r"Couldn't open shared file mapping: <torch_",
            # pandarallel's memory file system is /dev/shm (the frame that writes to it).
            r"pickle\.dump\(chunk, filedescriptor\)\s*\n\s*OSError: \[Errno 28\]",
            # Old torch sharing a storage through a file (file_system strategy).
            r"Torch: unable to mmap memory: you tried to mmap",
        ),
        hint=_SHM_HINT,
    ),
    Rule(
        "host-allocator-failed",
        FC.HOST_OOM,
        "host memory allocation failed",
        P_MEMORY,
        text=(
            r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory)",
            # dlib's pinned host buffer (cudaMallocHost).
            r"\bError while calling cudaMallocHost\([^\n]{0,300}\. code: 2, reason: out of memory\b",
            # OpenCV's host allocator (alloc.cpp).
            r"\(-4:Insufficient memory\) Failed to allocate \d+ bytes",
            r"posix_memalign\(&data, gAlignment, nbytes\) == 0\. 12 vs 0",
            r"std::bad_alloc",
            # MSVC's std::bad_alloc::what() ("[LightGBM] [Warning] bad allocation").
            r"\bbad allocation[ \t]*$",
            r"Unable to allocate \d+(?:\.\d*)? ?[KMGTP]i?B for an array",
            r"Unable to allocate array with shape",
            # Windows: the commit limit (RAM + paging file) is reached.
            r"paging file is too? small",
            r"\[WinError 1455\]",
            r"\bos error 1455\b",
            # Arrow's allocator ("realloc of size 2172846080 failed").
            r"\b(?:re|m|c)alloc of size \d+ failed",
            # Not ibverbs' memlock limit ("ibv_create_cq failed with error Cannot allocate memory").
            # Nor an NCCL network plugin's registration limit ("NCCL WARN NET/OFI Unable to
            # register memory ... Error: Cannot allocate memory"): NCCL's failure.
            # Nor libfabric's EFA provider (its completion queue: "Unable to create extended CQ:
            # Cannot allocate memory"), a locked-memory or device limit that NCCL then reports.
            # (Nor glibc's "cannot allocate memory for thread-local data: ABORT", which a dying pool
            # worker prints: the pool convention.)
            r"^(?![^\n]*(?:NCCL WARN|libfabric:))[^\n]*(?<!failed with error )Cannot allocate memory"
            r"(?! for thread-local data)",
            r"\[Errno 12\]",
            r"Torch: not enough memory: you tried to (?:re)?allocate",
            r"\bOOM when allocating tensor[^\n]{0,300}(?:device:CPU:\d|by allocator cpu)",
            # R, LLVM, pandas' C parser, macOS malloc, OpenCL's host (the JVM: cpu-device-oom).
            r"\bcannot allocate vector of size [\d.]+ ?[KMGT]b\b",
            r"\bLLVM ERROR: out of memory\b",
            r"\bC error: out of memory\b",
            r"\bcan't allocate region\b",
            r"\bmach_vm_map\(size=\d+\) failed",
            r"\bOut of Host Memory\b",
            r"\bCL_OUT_OF_HOST_MEMORY\b",
            # MXNet's CPU storage.
            r"\bFailed to allocate CPU Memory\b",
            # Rust's global allocator ("memory allocation of 8192 bytes failed", then an abort).
            r"^memory allocation of \d+ bytes failed",
            # Windows' paging-file error in German (WinError 1455); Paddle's system allocator (errno 12).
            r"\bDie Auslagerungsdatei ist zu klein\b",
            r"\bFail to alloc memory of \d+ size, error code is 12\b",
            # V8 (Node.js tools a pipeline runs) at its heap limit, before it aborts; Level Zero's
            # and the Unified Runtime's host memory.
            r"\bFATAL ERROR: [^\n]{0,100}Allocation failed - JavaScript heap out of memory",
            r"\b(?:UR|ZE)_RESULT_ERROR_OUT_OF_HOST_MEMORY\b",
            r"\bPI_ERROR_OUT_OF_HOST_MEMORY\b",
        ),
        types=(
            r"(?:[\w.]*\.)?MemoryError",
            r"(?:numpy\.(?:core\.)?_exceptions\.)?_ArrayMemoryError",
            r"(?:pyarrow\.lib\.)?ArrowMemoryError",
        ),
    ),
    Rule(
        "dask-nanny-memory",
        # Dask's nanny restarting a worker over its memory limit: a warning the trial may go on
        # after. Above the pool's worker death it explains (KilledWorker then says host_oom, see
        # the conventions), below a Ctrl-C the user pressed after it and below the trial's own
        # errors, plain Python ones included: those are what ended the trial.
        FC.HOST_OOM,
        "a Dask worker went over its memory budget",
        P_INTERRUPT - 1,
        text=(r"\bWorker\b[^\n]{0,80}? exceeded \d+% memory budget",),
        hint="Dask's nanny restarted a worker that went over its memory_limit: smaller partitions "
        "or chunks, fewer threads per worker, or a larger memory_limit.",
        yields_to_plain_error=True,
    ),
    Rule(
        "cpu-device-oom",
        FC.HOST_OOM,
        "an op placed on the CPU could not allocate host memory",
        P_MEMORY + 1,
        text=(
            # ONNX Runtime's arena (BFCArena) is the same on the CPU and the GPU; a node that
            # the NCHWc layout transformer rewrote ("Name:'347_nchwc'") runs on the CPU
            # execution provider, the only one with NCHWc kernels.
            r"\bnode\. Name:'[^'\n]{0,200}_nchwc'[^\n]{0,300}\bBFCArena::AllocateRawInternal\b",
            # TensorFlow 1 names the device on the node line below the OOM
            # ("[[Node: ... _device="/job:localhost/replica:0/task:0/cpu:0"]").
            r"\bOOM when allocating tensor[^\n]{0,300}\n\s*\[\[(?:\{\{)?Node: [^\n]{0,600}?"
            r"(?<!\w)_device=\"[^\"\n]{0,100}/(?:device:)?cpu:\d",
            # The JVM's heap (Spark, PySpark): host memory, above the GPU rule that a Python type
            # name (OutOfMemoryError) would otherwise pick.
            r"\bjava\.lang\.OutOfMemoryError: (?:GC overhead limit exceeded|Java heap space"
            r"|Cannot allocate new \w*Pointer|Physical memory usage is too high)",
            # Julia's Base.OutOfMemoryError() (CUDA.jl names the GPU: OutOfGPUMemoryError).
            r"^(?:ERROR: )?(?:LoadError: )?OutOfMemoryError\(\)",
        ),
    ),
    Rule(
        "xla-pinned-host-memory",
        # XLA's and TensorFlow's pinned host buffers, in the CUDA driver's OOM wording ("failed to
        # alloc 1073741824 bytes on host: CUDA_ERROR_OUT_OF_MEMORY"): host memory. A warning the
        # allocator goes on after (it asks again for less), so it decides only when nothing
        # else is named, and yields to a plain Python error.
        FC.HOST_OOM,
        "pinned host memory could not be allocated",
        P_TEXT_SIGNAL - 1,
        text=(
            rf"\bfailed to alloc \d+ {HOST_BUFFER_PREFIX}CUDA_ERROR_OUT_OF_MEMORY\b",
            r"\bcould not allocate pinned host memory of size\b",
        ),
        yields_to_plain_error=True,
    ),
    Rule(
        "host-memory-monitor",
        FC.HOST_OOM,
        "killed by a host memory monitor",
        # Above the GPU OOM rule: Ray names its host-memory kill OutOfMemoryError too.
        P_MEMORY + 1,
        text=(
            r"Task was killed due to the node running low on memory",
            r"killed due to memory pressure \(OOM\)",
            r"RayOutOfMemoryError",
            r"Out of memory: Killed process",
            r"Out of memory: Kill process \d+",
            # Colab's RAM monitor; LSF's memory limit (the kill comes with exit code 143).
            r"Your session crashed after using all available RAM",
            r"\bTERM_MEMLIMIT: job killed after reaching LSF memory usage limit",
            # HTCondor's memory policy; a worker pool's memory monitor (plaso's engine).
            r"\bJob killed by HTCondor due to excessive memory use\b",
            r"\bJob has gone over (?:cgroup )?memory limit of \d+",
            r"\bkilled because it exceeded the memory limit: \d+",
            r"invoked oom-killer",
            r"\boom-kill:",
            r"\boom[-_]kill events?\b",
            r"killed by signal: Killed",
            # Dask's scheduler refusing a task whose inputs exceed any worker's memory limit.
            r"worth of input dependencies, but worker \S+ has memory_limit set to",
            # Kubernetes and workflow engines reporting the kill.
            # Kubernetes' container status: describe's "Reason: OOMKilled", and get pods' STATUS
            # after the READY column ("0/1   OOMKilled   4 (57s ago)"); not prose.
            r"Reason:\s+OOMKilled",
            r"\b\d+/\d+\s+OOMKilled\b",
            r"container init was OOM-killed",
            r"The node was low on resource: memory",
            r"Task ran out of memory",
            r"\bray-oom-prevention\b",
            # Ray's memory monitor ("2 worker(s) were killed due to the node running low on memory").
            r"worker\(s\) were killed due to the node running low on memory",
            r"\bwhich exceeds the memory usage threshold of [\d.]+\. Ray killed this worker\b",
            r"^OOM kill reason: ",
            # PBS's memory limit; pynisher's (auto-sklearn's) memory limit.
            r"PBS: job killed: (?:p?v?mem|mem job total)[^\n]{0,60}exceeded limit",
            r"\bStatusType\.MEMOUT\b",
            r"\bMemout \(used more than \d+ ?MB\)",
            # YARN's memory enforcement killing a Spark executor's container.
            r"\bContainer killed by YARN for exceeding (?:physical )?memory limits\b",
            # Slurm's cgroup memory enforcement ("slurmstepd: error: StepId=7284712.0 exceeded
            # memory limit (1295467052032 > 1288490188800), being killed"). Not the bare "Exceeded
            # step memory limit at some point", which Slurm also prints for steps that finish.
            r"\bexceeded memory limit \(\d+ > \d+\), being killed\b",
            r"\bslurmstepd: error: Exceeded job memory limit(?! at some point)",
        ),
        types=(r"ray\.exceptions\.OutOfMemoryError", r"(?:ray\.\w+\.)?RayOutOfMemoryError"),
        hint=_OOM_KILLER_HINT,
    ),
    # --- NCCL -------------------------------------------------------------------------------
    Rule(
        "nccl-async-abort",
        FC.NCCL,
        "NCCL error; the watchdog took the process down (sticky)",
        P_NCCL_ABORT,
        text=(
            r"Some NCCL operations have failed\s+or\s+timed out",
            r"To avoid data inconsistency, we are taking the entire process down",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="nccl_error",
    ),
    Rule(
        "nccl-error",
        FC.NCCL,
        "NCCL error",
        P_NCCL,
        text=(
            r"NCCL error",
            # One cue per result name: each has a long literal anchor, where "nccl" alone is on
            # every line of an NCCL log (see literal_anchor).
            r"\bncclUnhandledCudaError\b",
            # Ascend's HCCL: a glog check on its status, its own error log lines.
            r"\bstatus == HCCL_SUCCESS \(\d+ vs\. 0\)",
            r"^\[ERROR\] HCCL\(\d+,",
            # Intel's oneCCL (torch-ccl): its error log and exceptions.
            r"\|CCL_ERROR\|",
            r"\boneCCL: [^\n]{0,200}\bEXCEPTION: ",
            # MPI's own fatal errors (Intel MPI, MPICH: "Fatal error in PMPI_Init: ..."); PSM3's
            # transport assertions (oneCCL and MPI over Omni-Path).
            # (Not the code's own MPI misuse: a receive buffer too small, an invalid rank, ...)
            r"\bFatal error in PMPI_\w+: (?!Message truncated|Invalid (?:rank|communicator|count|"
            r"datatype|tag|argument|root|buffer pointer|size)\b)",
            r"\bAssertion failure at psm3?/",
            # CuPy's NcclError failing to name a status it does not know (KeyError: 6).
            r"\bnccl\.NcclError\.__init__\b",
            r"\bncclSystemError\b",
            r"\bncclInternalError\b",
            r"\bncclInvalidArgument\b",
            r"\bncclInvalidUsage\b",
            r"\bncclRemoteError\b",
            # Not NCCL's start-up warning that libcuda.so is missing (device-fallback-warning),
            # nor XLA quoting NCCL's last warning ("Last NCCL warning(error) log entry (may be
            # unrelated)").
            r"NCCL WARN(?!ing\(error\))(?! Failed to find CUDA library)[^\n]{0,200}"
            r"(?:fail|error|Duplicate GPU|closed by remote peer|Mismatched collective)",
            r"NCCL communicator was aborted",
            # RAFT/cuML's NCCL wrapper ("RuntimeError: NCCL_ERROR: b'unhandled system error'").
            r"\bNCCL_ERROR: b?['\"]",
            # torch's own check (TORCH_DISTRIBUTED_DEBUG=DETAIL) of collectives that do not match.
            r"\bDetected mismatch between collectives on ranks\b",
            # NCCL's invalid usage: two ranks on one GPU (quoted without the WARN prefix).
            r"\bDuplicate GPU detected\s*: rank \d+ and rank \d+ both on\b",
            r"\bnccl(?:CommInit\w*|GroupEnd|AllReduce|Broadcast|Send|Recv)\w* failed: ",
            r"NCCL operation nccl\w+\([^\n]{0,300}\) failed:(?! Unable to load NCCL library)",
            # BytePS's NCCL manager checking a CUDA call; AWS Neuron's collectives (its NCCL).
            r"\bnccl_\w+\.cc:\d+\] Check failed\b",
            r"\bnrt_load_collectives failed\b",
            # Caffe's NCCL_CHECK ("Check failed: result == ncclSuccess (1 vs. 0)").
            r"Check failed: result == ncclSuccess\b",
            # Caffe2's CAFFE_NCCL_CHECK ("[enforce fail at cuda_nccl_gpu.cc:24] status ==
            # ncclSuccess"); Paddle's EnforceNotMet raised in its NCCL wrappers ("unhandled
            # cuda error at [.../platform/nccl_helper.h:93]").
            r"\benforce fail at [^\]\n]{0,200}\] status == ncclSuccess\b",
            r"\bat \[[^\[\]\n]{0,300}?[/\\]nccl_\w+\.(?:h|cc|cu|cu\.cc):\d+\]",
            r"NCCL WARN Bootstrap Root : rank \d+ of \d+ ranks has already checked in",
            r"is setting up NCCL communicator",
            r"ncclUniqueId",
            r"NET/IBP?\s*:\s*Got completion",
            r"NCCL WARN Net\s*:",
            r"NCCL WARN Bootstrap\s*:",
            r"NCCL WARN socket\w+\b",
            # TensorFlow's NCCL ops: "Error invoking NCCL: unhandled cuda error", and an error
            # raised inside an NcclAllReduce node.
            r"Error invoking NCCL\b",
            r"\[\[\{?\{?node [\w/]*Nccl\w*",
            r"StartAbort \w+: unhandled (?:system|cuda) error",
            # ncclGetErrorString(ncclUnhandledCudaError) under another framework's own CUDA error
            # wording (ggml's "CUDA error: unhandled cuda error (run with NCCL_DEBUG=INFO for
            # details)" from ncclGroupEnd()).
            r"\bunhandled cuda error \(run with NCCL_DEBUG=INFO for details\)",
            # NVLink SHARP multicast memory, which NCCL sets up for NVLS collectives.
            r"Failed to bind NVLink SHARP \(NVLS\) Multicast memory",
            # NCCL naming a network failure ("NCCL INFO Call to connect returned Connection
            # refused, retrying", "NCCL Network is unreachable"); nccl-tests' "Test NCCL failure".
            # One cue per failure, "NC{2}L" so that the failure, not "nccl", is the anchor.
            *(rf"\bNC{{2}}L\b[^\n]{{0,200}}{failure}" for failure in _NET_FAILURES),
            r"\bNCCL failure\b",
            # init_process_group's exchange with its peers breaking at the network.
            r"\b_set_sequence_number_for_group\(\)\n(?:[ \t]*[\^~]+[ \t]*\n)?\w*Error: "
            r"(?:Connection reset by peer|Connection refused|Broken pipe)\b",
            # NCCLCHECK's trace of a failed call, one line per frame ("NCCL INFO
            # misc/socket.cc:564 -> 2"): printed only when a call returned an error.
            r"NCCL INFO [\w/]+\.(?:cc|h|cu):\d+ -> [1-9]\b",
            # NCCL's log lines start with its source file ("misc/socket.cc:441 NCCL WARN"; old
            # releases print "include/socket.h:344 WARN" without the NCCL tag).
            r"\b(?:include|misc|transport|bootstrap|init|proxy|graph|enqueue|net|group|channel)"
            r"/\w+\.(?:cc|h|cu):\d+ (?:NCCL )?WARN\b(?! Failed to find CUDA library)",
            r"\bncclSocket\w+:",
            # A failed NCCL call by name ("ncclCommInitRank() failed", "ncclGroupEnd() failed").
            r"\bnccl[A-Z]?\w+\(\)[^\n]{0,20}\bfailed\b",
            # NCCL creating its own /dev/shm segment ("Error while creating shared memory segment
            # /dev/shm/nccl-UmqSM9 (size 7340384)").
            r"\bError while creating shared memory segment /dev/shm/nccl-",
            # TensorFlow 1's NCCL ops ("OP_REQUIRES failed at nccl_communicator.cc:116 : Internal:
            # unhandled system error").
            r"\bOP_REQUIRES failed at nccl_\w+\.cc:\d+",
            # Ascend's HCCL, NCCL's counterpart: communicator set-up and transport errors.
            r"\bHcclCommInitRootInfo\w* fail",
            r"\bHCCL function error: hccl\w+\(",
            r"\bHCCL error in: ",
            r"\bcall hccl api failed\b",
            r"\bEI0009: [^\n]{0,120}\bTransport init error\b",
            r"\bThe arguments for collective communication are inconsistent between ranks\b",
            r"\bEI0004: The ranktable is invalid\b",
        ),
        types=(r"(?:torch\.distributed\.)?DistBackendError", r"(?:\w+\.)*NcclError"),
        cuda=True,
        cuda_error_type="nccl_error",
    ),
    # A rank that timed out on the c10d store while setting up NCCL ("is setting up NCCL
    # communicator and retrieving ncclUniqueId ... store->get('0') got error: Socket Timeout")
    # timed out: a peer never arrived (it died or hung first), NCCL itself never ran.
    Rule(
        "distributed-store-timeout",
        FC.TIMEOUT,
        "timed out waiting on the distributed store (a peer never arrived)",
        P_STORE_TIMEOUT,
        text=(
            r"Timed out after \d+ seconds waiting for clients",
            r"Timed out initializing process group",
            r"Socket Timeout",
            r"Timeout waiting for key",
            # DataLoader's shared seed (torch.utils.data), spelled "distribtued" in PyTorch's
            # source: any spelling of "distributed" (distri...d), not "distribution store".
            r"Timed out (?:receiving|waiting for|sending)[^\n]{0,60}\b(?:from|to|in|on) the "
            r"distri\w{3,7}d store",
            r"The client socket has timed out after \d+m?s while trying to connect to",
            r"\bDistStoreError\b",
            r"\bRendezvousTimeoutError\b",
            # c10d's FileStore/HashStore: a key another rank should have set never came.
            r"^(?:RuntimeError|DistStoreError): Wait timeout\b",
            r"got error: wait timeout after \d+ ?ms",
            r"connect\(\) timed out\. Original timeout was \d+ ?ms",
            # JAX's coordination service ("DEADLINE_EXCEEDED: Barrier timed out. Barrier_id:").
            r"\bBarrier timed out\b",
            r"\bTask \S+ heartbeat timeout\b",
            r"\bWait timeout after \d+ ?(?:ms|seconds) for key",
            r"Timed out waiting for tasks to start",
            r"\bconnectFullMesh failed with [^\n]{0,200}Connect timeout\b",
            r"CoordinationService/RegisterTask[^\n]*\n[^\n]*\bDeadline Exceeded\b",
            r"waitForInput: socket [^\n]{0,300} timed out after \d+ ?ms",
            # XLA's coordination key-value store waiting for a peer's NCCL clique id.
            r"\bGetKeyValue\(\) timed out with key\b",
            # HCCL's link set-up (EI0006): the peer never connected.
            r"\bwait socket establish timeout\b",
            # NCCL's and NVSHMEM's bootstrap sockets; c10d's client that never reached the store.
            r"\bsocketStartConnect: exceeded timeouts\b",
            # TensorFlow's collective ops (MultiWorkerMirroredStrategy) past their deadline.
            # (TensorFlow before 2.11 prints "Deadline exceeded:".)
            r"\bBaseCollectiveExecutor::StartAbort DEADLINE[_ ]EXCEEDED\b",
            r"\bThe client socket has failed to connect to [^\n]{1,200}\(errno: 110 - Connection "
            r"timed out\)[^\n]*\n(?:[^\n]*\n){0,2}[^\n]*The client socket has failed to connect to any "
            r"network address\b",
            r"\bGetting socket times out\b",
            # MindSpore's unique id for a communicator never published by the root rank.
            r"\bFailed to fetch the unique id of the collective lib from the meta server node\b",
        ),
        types=(
            r"(?:torch\.distributed\.)?DistStoreError",
            r"(?:[\w.]*\.)?RendezvousTimeoutError",
        ),
        hint=_STORE_TIMEOUT_HINT,
    ),
    # --- cuDNN ------------------------------------------------------------------------------
    Rule(
        "cudnn-execution-failed",
        FC.CUDNN,
        "cuDNN kernel failed to execute (context may be unusable)",
        P_SPECIFIC,
        text=(r"CUDNN_STATUS_EXECUTION_FAILED",),
        sticky=True,
        cuda=True,
        cuda_error_type="cudnn_execution_failed",
        hint=_EXEC_FAILED_HINT,
    ),
    Rule(
        "cudnn-no-engine",
        FC.CUDNN,
        "cuDNN found no engine/algorithm for the convolution",
        P_SPECIFIC,
        text=(
            r"(?:FIND|GET) was unable to find an engine",
            r"Unable to find a valid cuDNN algorithm",
            r"no valid convolution algorithms available in CuDNN",
            r"Failed to determine best cudnn convolution algorithm",
            # cudnn-frontend's Python graph API.
            r"\bcudnnGraphNotSupportedError\b",
            r"No valid engine configs? for",
        ),
        cuda=True,
        cuda_error_type="cudnn_find_no_engine",
        hint=_CUDNN_FIND_HINT,
    ),
    Rule(
        "cudnn-library-missing",
        # An installation problem, like an NCCL library that cannot be loaded: no retry mends
        # it, so user_error (see the labelling conventions). Before cudnn-not-initialized: a
        # version mismatch is why TensorFlow then cannot create its cuDNN handle.
        FC.USER_ERROR,
        "cuDNN library could not be loaded, or is not the version torch was built with",
        P_SPECIFIC,
        text=(
            r"Could not load library libcudnn",
            # TensorFlow 0.x: the cuDNN it found lacks a function ("could not find cudnnCreate in
            # cudnn DSO; dlerror: ... undefined symbol").
            r"\bcould not find cudnn\w+ in cudnn DSO\b",
            r"Unable to load any of \{?libcudnn",
            r"libcudnn\w*\.so[.\d]*: cannot open shared object file",
            r"DNN library is not found",
            r"Could not locate cudnn\w*\.dll",
            r"third-party dynamic library \(cudnn[\w.]*\)[^\n]{0,80}not configured correctly",
            # Windows' "[WinError 126] ... Error loading "...\cudnn_cnn_infer64_8.dll" or one of
            # its dependencies." (anchored on the tail: a path may be long).
            r"\bcudnn\w*\.dll\"?\s+or\s+one of its dependencies",
            # Windows: the cuDNN DLL is not on PATH.
            r"\bcudnn(?:64|_\w+64)_\d+\.dll\b[^\n]{0,40}(?:not found|Is it on your PATH|could not"
            r" be (?:found|loaded))",
            r"(?:Could not (?:find|load)|Unable to load)[^\n]{0,20}\bcudnn(?:64|_\w+64)_\d+\.dll",
            # A cuDNN other than the one torch was built against, or a sub-library of another
            # version or that cannot be loaded: the same installation problem.
            r"cuDNN version (?:mismatch|incompatibility): PyTorch was compiled\s+against",
            r"\bCUDNN_STATUS_SUBLIBRARY_(?:LOADING_FAILED|VERSION_MISMATCH)\b",
            r"\bCUDNN_STATUS_VERSION_MISMATCH\b",
            # TensorFlow's and caffe2's wording of the same (written down after v24).
            r"Loaded runtime CuDNN library: [\d.]+",
            r"cuDNN compiled \(\d+\) and runtime \(\d+\) versions mismatch",
        ),
        cuda=True,
        cuda_error_type="cudnn_library_missing",
        hint="The cuDNN libraries are missing or do not match this torch build: reinstall torch "
        "with its bundled cuDNN (nvidia-cudnn-cu* wheels) and check LD_LIBRARY_PATH; every trial "
        "fails the same way (`hpo doctor`).",
    ),
    Rule(
        "cudnn-not-initialized",
        FC.CUDNN,
        "cuDNN could not be initialised",
        P_SPECIFIC,
        text=(
            r"CUDNN_STATUS_NOT_INITIALIZED",
            # XLA (JAX, TensorFlow) could not initialise cuDNN.
            r"DNN library initialization failed",
            # TensorFlow: the handle could not be created (the status may be line-wrapped).
            r"Could not create cudnn handle",
            r"Failed to get convolution algorithm",
            r"cuDNN failed to initialize",
            # TensorRT's cuDNN tactic source.
            r"\bCould not initialize cudnn\b",
        ),
        cuda=True,
        cuda_error_type="cudnn_not_initialized",
        hint=_HANDLE_HINT,
    ),
    Rule(
        "cudnn-plan-warning",
        # torch's cuDNN v8 API warns and tries the next plan: a failure only when nothing else
        # is named, and it yields to a plain Python error that follows it.
        FC.CUDNN,
        "cuDNN rejected an execution plan (a warning)",
        # Below every failure named after it (torch raises most as RuntimeError, which is no
        # plain Python error): only a warning with nothing after it is read as cudnn.
        P_TEXT_SIGNAL - 1,
        text=(r"UserWarning: Plan failed with a cudnnException\b",),
        cuda=True,
        cuda_error_type="cudnn_error",
        yields_to_plain_error=True,
    ),
    Rule(
        "cudnn-status",
        FC.CUDNN,
        "cuDNN error ({code})",
        P_SPECIFIC,
        text=(
            # (Not the plan warning's line: cudnn-plan-warning reads it.)
            r"^(?![^\n]*Plan failed with a cudnnException)[^\n]*?"
            r"(?P<code>CUDNN_STATUS_(?!SUCCESS)[A-Z_]+)",
            r"cuDNN error",
            r"(?<!Plan failed with a )cudnnException",
            r"cuDNN Frontend error",
            # The cuDNN loaded at run time is not the one torch/caffe2 was built with.
            r"cuDNN version incompatibility",
            # Caffe's CUDNN_CHECK ("Check failed: status == CUDNN_STATUS_SUCCESS").
            r"Check failed[^\n]{0,60}CUDNN_STATUS_SUCCESS",
            r"\bcuDNN launch failure",
            # darknet's cudnn_check_error ("cuDNN status Error in: file: ./src/...").
            r"\bcuDNN status Error in: ",
            r"cuDNN version mismatch: \w+ was compiled against \d+ but linked against \d+",
            # MXNet's CUDNN_CALL checks; XLA's autotuner on a status it does not know.
            r"Check failed: \(?cudnn[A-Z]\w*\(",
            r"<unknown cudnn status: \d+>",
            # TensorFlow's CudnnRNN op finding no cuDNN RNN implementation.
            r"\bFail(?:ed)? to find the dnn implementation\b",
            # Knet (Julia): "cudnn.cudnnConvolutionForward error 3".
            r"\bcudnn\.cudnn\w+ error \d+",
            # dlib's CHECK_CUDNN ("Error while calling cudnnCreate(&handles[...]) in file ... reason: A
            # call to cuDNN failed").
            r"\bError while calling cudnn\w*\(",
            r"\breason: A call to cuDNN failed\b",
            # TensorFlow's CudnnRNN ("Failed to call ThenRnnForward with model config").
            r"\bFailed to call ThenRnn(?:Forward|Backward)\b",
            # ATen's cuDNN code asserting that a cuDNN call or graph succeeded ("mha_graph->
            # execute(...).is_good() INTERNAL ASSERT FAILED at .../ATen/native/cudnn/MHA.cpp").
            r"INTERNAL ASSERT FAILED at \"[^\"\n]{0,300}[/\\]ATen[/\\]native[/\\]cudnn[/\\]\w+\.cpp\"",
            # MIOpen, ROCm's cuDNN ("MIOpen Error: .../convolutionocl.cpp:831: Forward Convolution
            # cannot be executed due to incorrect params"; "miopenStatusUnknownError").
            r"\bMIOpen Error: ",
            r"\bmiopenStatus(?!Success\b)[A-Z]\w+",
        ),
        types=(r"(?:torch\.backends\.cudnn\.)?CuDNNError",),
        cuda=True,
        cuda_error_type="cudnn_error",
        code_type=True,
    ),
    # --- cuBLAS and the other math libraries ------------------------------------------------
    Rule(
        "cublas-execution-failed",
        FC.CUBLAS,
        "cuBLAS kernel failed to execute (context may be unusable)",
        P_SPECIFIC,
        text=(
            r"CUBLAS_STATUS_EXECUTION_FAILED",
            # cuBLAS's own status string (cublasGetStatusString), as THC's "cublas runtime error :"
            # and Julia's CUBLASError print it (by number, 13: classify reads it as the name).
            r"\bthe GPU program failed to execute\b",
        ),
        sticky=True,
        cuda=True,
        cuda_error_type="cublas_execution_failed",
        hint=_EXEC_FAILED_HINT,
    ),
    Rule(
        "cublas-not-initialized",
        FC.CUBLAS,
        "cuBLAS could not create its handle",
        P_SPECIFIC,
        text=(r"CUBLAS_STATUS_NOT_INITIALIZED", r"\bfail(?:ed)? to create cublas handle"),
        cuda=True,
        cuda_error_type="cublas_not_initialized",
        hint=_HANDLE_HINT,
    ),
    Rule(
        "cublas-status",
        FC.CUBLAS,
        "cuBLAS error ({code})",
        P_SPECIFIC,
        text=(
            r"(?P<code>(?:CU|HIP)BLAS(?:LT)?_STATUS_(?!SUCCESS)[A-Z_]+)",
            r"cuBLAS API failed",
            # Transformer Engine, ggml, bitsandbytes, ONNX Runtime, XLA naming a cuBLAS failure.
            r"\bCUBLAS Error: ",
            r"\bcuBLAS error \d+ at ",
            r"\bcublasLt ran into an error\b",
            r"\bCUBLAS error executing cublas\w*\(",
            r": INTERNAL: cublas\w*\(",
            # ggml: "CUDA error: <cuBLAS status string>" then the function that called cuBLAS.
            # (A log prefix may start each line: "0.16.061.894 E   current device: 0, ...".)
            r"CUDA error: [^\n]{1,120}\n[^\n]{0,40}?(?:current device: \d+, )?in (?:function )?"
            r"\w*cublas",
            r"\bcuBLAS call cublas\w*\(",
            r"CUBLAS failure \d+",
            # DyNet's CUBLAS_CHECK: the call, then the status number on the next line.
            r"\bCUBLAS failure in cublas\w*\(",
            # THC (torch < 1.0, Lua Torch): "cublas runtime error : <status> at .../THCBlas.cu".
            r"\bcublas runtime error : ",
            # TensorFlow's cuBLAS call failing (most often the handle, under memory pressure).
            r"\bBlas (?:x?GEMM|GEMV|\w+) launch failed",
            # cuBLAS's parameter check, printed before it returns INVALID_VALUE (the reference
            # BLAS xerbla wording: "** On entry to GEMM_EX  parameter number 9 had an illegal
            # value").
            r"\*\* On entry to \w+\s+parameter number \d+ had an illegal value",
            # cuSPARSE's and cuSOLVER's own parameter checks ("On entry to cusparseSpMM() ...").
            r"\*\* On entry to cu\w+\(\) parameter number \d+",
            # glog CHECKs on a cuBLAS call (Caffe's CUBLAS_CHECK, MXNet's mshadow streams), any status.
            r"== CUBLAS_STATUS_SUCCESS \(\d+ vs\. 0\)",
            # Julia: CUDA.jl/CuArrays' CUBLASError, Knet's "cublas.cublasSgemm_v2 error 13".
            r"\bCUBLASError\(code \d+",
            r"\bcublas\.cublas\w+ error \d+",
            # XLA's GEMM autotuner could not list cuBLAS algorithms (no handle).
            r"->GetBlasGemmAlgorithms\(",
            # mshadow's parenthesised CHECK ("Check failed: (err) == (CUBLAS_STATUS_SUCCESS) Create cublas
            # handle failed"); DyNet's CUBLAS_CHECK glued to the line before ("selected: 0CUBLAS failure").
            r"== \(CUBLAS_STATUS_SUCCESS\)",
            r"(?<![A-Za-z])CUBLAS failure in cublas\w*\(",
            # Paddle: "OSError: (External) CUBLAS error(15)."
            r"\bCUBLAS error\(\d+\)",
        ),
        cuda=True,
        cuda_error_type="cublas_error",
        code_type=True,
    ),
    Rule(
        "cuda-math-library-status",
        FC.CUBLAS,
        "CUDA math library error ({code})",
        P_SPECIFIC,
        text=(
            r"(?P<code>(?:CUSOLVER|CUSPARSE|CURAND)_STATUS_(?!SUCCESS)[A-Z_]+)",
            r"(?P<code>CUFFT_(?!SUCCESS)[A-Z_]+)",
            r"cuFFT error",
            # GROMACS's fatal error for a cuFFT call ("cufftPlanMany R2C plan failure (error code 5)").
            r"\bcufft\w+ [^\n]{0,40}\bfailure \(error code \d+\)",
            r"cusolver error",
            r"cusolver\w*\(&?handle\) failed",
            r"\bcuSolver internal error",
            r"\bcuSolver execution failed",
            r"\bcuSolver has not been initialized\b",
            r"\boperation cu(?:solver|sparse|fft|rand)\w+\([^\n]{0,300}\) failed",
            # A CUDA error raised by a math-library call ("CUDA error: insufficient resources
            # when calling `cusparseSpGEMM_workEstimation(...)`").
            r"\bCUDA error: [^\n]{1,120} when calling `?cu(?:sparse|solver|fft|rand)\w+\(",
            r"\bcu(?:SPARSE|SOLVER|FFT|RAND) ERROR \(code = \d+",
            r"\bInternal cu(?:SPARSE|SOLVER|FFT|RAND) failure with error (?:code )?\d+",
            r"\bCURAND failure in curand\w+",
            r"\bCURAND Gen \w+ \w+ failed",
            r"\bcu(?:SPARSE|SOLVER|FFT|RAND)(?:Lt)? API failed",
            # Knet (Julia): "curand.curandCreateGenerator error 203".
            r"\bcurand\.curand\w* error \d+",
            r"\bcusolver\.cusolver\w* error \d+",
            r"\bcusparse\.cusparse\w* error \d+",
            r"\bcufft\.cufft\w* error \d+",
            # mshadow's parenthesised CHECKs on cuRAND/cuFFT/cuSPARSE/cuSOLVER ("Check failed: (status) ==
            # (CURAND_STATUS_SUCCESS) CURAND Gen Uniform failed"); TensorFlow's cuFFT plans ("failed to make
            # cuFFT batched plan:5", "failed to initialize batched cufft plan with customized allocator");
            # jaxlib's wrappers ("operation gpusparseSpMM_bufferSize(...) failed: invalid value") and
            # cuSPARSE's own log ("** On entry to cusparseSpMM_bufferSize(): matrix B and C must be ...").
            r"== \((?:CURAND|CUSPARSE|CUSOLVER)_STATUS_SUCCESS\)",
            r"== \(CUFFT_SUCCESS\)",
            r"\bCURAND Gen \w+ failed",
            r"\bfailed to (?:make|create|initialize) (?:batched )?cufft (?:batched )?plan\b",
            r"\boperation gpu(?:sparse|solver|blas)\w*\([^\n]{0,300}\) failed",
            r"\*\* On entry to cu(?:sparse|solver)\w*\(\)",
            # CUDA.jl's errors for the other libraries ("CUSOLVERError(code 1, the library was not
            # initialized)").
            r"\bCU(?:SOLVER|SPARSE|FFT|RAND)Error\(code \d+",
        ),
        cuda=True,
        cuda_error_type="math_library_error",
        code_type=True,
    ),
    # --- numerical ----------------------------------------------------------------------------
    Rule(
        "numerical-nonfinite",
        FC.NUMERICAL,
        "non-finite values (NaN/Inf)",
        P_SPECIFIC,
        text=(
            r"returned nan values in its \d+\w* output",
            r"returned (?:-?inf(?:inity)?|nan)\b",
            r"The value (?:-?inf|nan) is not acceptable",
            r"failed with value (?:-?inf|nan)\b",
            r"\bnan loss\b",
            _NOT_A_COMMENT + r"\bloss is nan\b",
            r"\bloss is inf\b",
            # torch.linalg's finiteness check on its input.
            r"\binput tensor should not contain infs or NaNs\b",
            r"\bloss was nan\b",
            r"\bloss was inf\b",
            r"\bloss became nan\b",
            r"\bloss became inf\b",
            r"\bloss becomes nan\b",
            r"\bloss becomes inf\b",
            r"\bloss = nan\b",
            r"\bloss = inf\b",
            # The loss said to be NaN in any wording ("loss value changed to `NaN`", "loss value
            # equals to NaN", "Loss is going to be NaN"). "los{2}" keeps "loss" out of the literal
            # prefilter, so the rarer "nan" is the anchor ("loss" is on many traceback lines).
            _NOT_A_COMMENT + r"\blos{2}(?:es)?\b[^\n.]{0,40}?\b" + _BECOMES + r"\s*[`'\"]?nan\b",
            _NOT_A_COMMENT + r"\blos{2}(?:es)?\b[^\n.]{0,40}?\b" + _BECOMES + r"\s*[`'\"]?inf\b",
            # The loss as a key with a NaN value: Keras' progress bar ("- loss: nan - val_loss:
            # nan"), tqdm postfixes ("loss=nan"), logged dicts ("'loss': nan").
            r"\b\w*los{2}\w*['\"]?\s*[:=]\s*['\"]?nan\b(?!-)",
            # The loss followed by NaN ("getting loss NaN", "loss of NaN", "loss value NaN").
            r"\blos{2}(?:es)?\s+(?:(?:of|to|values?)\s+)?[`'\"]?nan\b(?!-)",
            # The loss as a bracketed or piped field of a log line ("| [Loss] nan |").
            r"\[\w*los{2}\w*\]\s*[:=]?\s*nan\b(?!-)",
            # A trained quantity said to turn NaN (see _TRAINED). Not Inf: "inf" is in every
            # INFO log line, so it would be a poor anchor.
            _NAN_LINE + r"\b" + _TRAINED + r"\b[^\n.]{0,60}?\b" + _TURNS + r"\s+[`'\"]?nan\b(?!-)",
            # Mixed precision: the dynamic loss scale has collapsed to its minimum (every step
            # overflows: the run has diverged). Halving from a large scale is normal.
            r"Reducing dynamic loss scale from 1(?:\.0)? to 1\b",
            r"Attempted loss scale: 1(?:\.0)?, reducing to 1\b",
            r"reducing (?:dynamic )?loss scale to 0\.\d+",
            r"non-finite loss",
            r"probability tensor contains either\s*`?inf`?\s*,\s*`?nan`?\s*or e",
            # int() of a NaN (a box or score from a diverged net), as the finiteness checks.
            r"\bValueError: cannot convert float NaN to integer\b",
            # THNN's BCE check on a NaN probability (a negative one is the code's: no sigmoid).
            r"\binput value should be between 0~1, but got -?nan\b",
            r"is non-finite, so it cannot be clipped",
            r"Current loss scale already at minimum",
            # The loss scale driven far down by overflow after overflow (apex, DeepSpeed,
            # fairseq): from a start of 2**16, 2 or less is 15 overflows in a row.
            r"reducing (?:dynamic )?loss scale to (?:[12](?:\.0)?|0\.\d+)\b",
            r"Attempted loss scale: [24](?:\.0)?, reducing to [12](?:\.0)?\b",
            r"setting loss scale to: 0\.\d+",
            # TensorFlow's CheckNumerics ("Found Inf or NaN global norm. : Tensor had NaN values").
            r"Tensor had (?:NaN|Inf) values",
            r"Found Inf or NaN global norm",
            r"\bis inf or nan\b",
            r"Nan in summary histogram",
            r"found (?:NaN|Inf) in (?:local )?grad norm",
            r"\bgrad norm is (?:nan|inf)\b",
            r"The gradients at all steps are invalid",
            r"Non-finite norm encountered",
            r"range of \[[^\]\n]*\b(?:nan|inf)\b[^\]\n]*\] is not finite",
            r"invalid float value: -?(?:nan|inf)\b",
            # A NaN metric that a parser then refuses (xgboost's eval log).
            r"could not convert string to float: '-?nan(?:\(ind\))?'",
            r"For input string: \"-?nan",
            # Not the initial best ("best_val_loss: inf" before any epoch finished).
            r"\b(?!(?:best|min|lowest)_?)\w*los{2}\w*['\"]?\s*[:=]\s*['\"]?-?inf\b",
            r"\bblob \S+ diff: -?nan\b",
            # The loss named on a log line with a NaN value ("[Losses: x nan, y nan, ...]"), a
            # row of NaN in a metrics table, a boosting metric ("train-logloss:-nan", CatBoost's
            # "learn: nan"), a progress-bar NLL ("nll=nan.0").
            # Not Megatron's "loss scale: 1024.0 | number of nan iterations: 0".
            _NOT_A_COMMENT
            + r"\blos{2}(?:es)?\b[^\n]{0,80}?[\s:=,\[(]-?nan\b(?!-)(?! iterations?\b)",
            r"(?:^|[\s|])\[?-?nan\]?[ \t]+\[?-?nan\]?(?:[ \t]|$)",
            r"\b\w*(?:loss|error|rmse|mae|nll|auc|ppl)\w*\s*[:=]\s*-nan\b",
            r"\bnll\s*[:=]\s*-?nan\b",
            r"^\s*\d+:\s+learn:?\s+-?nan",
            r"Input contains NaN",
            # JAX's checkify/debug_nans; darknet's "-nan, -nan avg loss".
            r"\bnan generated by primitive \w+",
            r"(?:^|\s)-?nan, -?nan avg loss\b",
            r"The factorization could not be completed because the input is not positive-definite",
            r"failed to converge because the input matrix is ill-conditioned",
            r"Loss became infinite or NaN",
            r"Monitored metric \S+ = (?:nan|-?inf) is not finite",
            r"NaN or Inf found in input tensor",
            r"Batch \d+: Invalid loss, terminating training",
            r"outputs? (?:is|are|contains?|became|becomes) (?:a )?(?:nan|inf)\b",
            r"logits (?:is|are|contains?|became|becomes) (?:a )?(?:nan|inf)\b",
            r"grad(?:ient)?s? (?:is|are|contains?|became|becomes) (?:a )?(?:nan|inf)\b",
            r"NOT NULL constraint failed: trial_(?:intermediate_)?values?\.",
            # torch.distributions: the Real() constraint of loc fails only for NaN.
            r"to satisfy the constraint (?:Real\(\)|IndependentConstraint\(Real\(\), \d+\)), "
            r"but found invalid values",
            # Categorical normalises probs before the Simplex() check, so NaN or drifting entries
            # fail it; a negative entry in the dump is logits passed as probs, the code's error.
            r"to satisfy the constraint Simplex\(\), but found invalid values:?[ \t]*\n"
            r"(?!(?:[^\n]*\n){0,2}[^\n]*?(?<![\w.])-\d)",
            # Any other constraint, when the values it printed are NaN.
            r"to satisfy the constraint [^\n]{1,80}, but found invalid values:?[ \t]*\n"
            r"(?:[^\n]*\n){0,2}?[^\n]*?\bnan\b",
            r"The parameter (?:loc|scale|probs|logits|concentration|rate) has invalid values",
            # A tensor printed whole NaN ("[nan, nan, nan,  ..., nan, nan, nan]").
            r"\[nan, nan, nan,\s+\.\.\., nan, nan, nan\]",
            r"\bNansException\b",
            r"A tensor with all NaNs was produced",
            r"\bNaNs encountered when\b",
            r"\bTensor had (?:-?Inf|NaN) values\b",
            r"\bNaN is detected on (?:forward|backward)",
            r"\bLoss (?:is|in) not finite\b",
            r"\b(?:become|becomes|contains?) infinite or NaN\b",
            r"\bdtype=float\d+\) = '?-?nan\b",
            # Linear algebra on non-finite or no longer positive-definite matrices.
            r"must not contain infs or NaNs",
            r"\bLinAlgError: [^\n]*\bnot positive definite",
            r"leading minor of (?:the array|order \d+) is not positive definite",
            r"\bNotPSDError\b",
            r"not positive definite, even with jitter",
            # A library's finiteness check on its input or labels (see the labelling conventions).
            r"Input [Xy] contains (?:NaN|infinity)",
            # The same check named after predictions (sklearn's older wording, evalml), and a
            # benchmark's check on model outputs.
            r"\bInput y_(?:pred|prob|score) contains (?:NaN|infinity)",
            # A loss guard's own exception ("ValueError: aux has a inf").
            r"^\w*Error: \w{1,40} (?:has|have|contains?) (?:an? )?(?:nan|inf)s?\b",
            r"\(y_predicted contains NaN or infinity\)",
            # Not a check that passed ("no NaN detected in model outputs").
            r"(?<!\bno )(?<!\bnot )\bNaN (?:values? )?detected in (?:the )?model(?:'s)? "
            r"(?:outputs?|logits|predictions)\b",
            r"Label contains NaN, infinity or a value too large",
            # A NaN traced to an autograd node ("NaN in LogSoftmaxBackward0").
            r"\bNaNs? (?:in|from|at) (?:the )?\w*Backward\d*\b",
            # A float overflow in math.exp or math.pow ("math range error": perplexity of a
            # diverged loss), or in exp() on the line above; not the float power's errno 34 of
            # other arithmetic (a temperature schedule's ``tau ** (n / N)`` is the code's).
            r"\bOverflowError: math range error",
            r"\bexp\([^\n]{0,300}?(?:\n(?:[ \t]*[\^~]+[ \t]*\n)?|[ \t])OverflowError: \(34, "
            r"'Numerical result out of range'\)",
            # A sampler or optimiser refusing a non-finite value ("ValueError('`nan` is invalid
            # value.')" from CMA-ES).
            r"`(?:nan|-?inf)` is invalid value",
            # PyMC: the log-probability at the start point is not finite.
            r"Initial evaluation of model at starting point failed",
            # A dynamic loss scaler that halved its scale to zero after overflow on every step,
            # then divides by it (apex's amp/scaler.py "1. / scale").
            r"(?:[/\\]amp[/\\]\w*|loss_)scaler\.py\", line \d+, in \w+\n(?:[^\n]*\n){0,2}?"
            r"ZeroDivisionError: float division by zero",
            # DL4J's score listener; a training loop's bare "NaN detected" line (Theano code).
            r"\bScore at iteration \d+ is NaN\b",
            r"^[ \t]*NaN detected[ \t]*$",
            # xgboost's evaluation log with a non-finite metric ("[3]\ttrain-gamma-nloglik:nan").
            # Not AUC or ranking metrics: they are NaN when the evaluation set has one class.
            # One cue per spelling, so that ":nan" or ":-nan" is the anchor.
            *(
                r"^\[\d+\]\s+\w+-(?!(?:auc|aucpr|pr-auc|map|ndcg|pre)\b|(?:map|ndcg|pre)@)"
                rf"\w[\w@.-]*:{nan}\b"
                for nan in ("nan", "-nan")
            ),
            # Theano's NanGuardMode; a training loop stopping on a loss explosion (NCRF++); a LAPACK
            # SVD that did not converge (numpy, scipy: most often NaN or Inf in the matrix).
            r"\bNanGuardMode found an error\b",
            r"(?-i:\bLOSS EXPLOSION\b)",
            r"\bLinAlgError: SVD did not converge\b",
            # torch's LAPACK errors before linalg ("Lapack Error gesdd : 1 superdiagonals failed to
            # converge"; "syev : 2 off-diagonal elements didn't converge to zero"; a Cholesky
            # factor with a zero pivot, "cholesky_cpu: For batch 0: U(8,8) is zero, singular U").
            r"\bLapack Error (?:in )?\w+ : \d+ (?:superdiagonals|off-diagonal elements) "
            r"(?:failed to|didn't) converge",
            r"\bcholesky_(?:cpu|cuda): (?:For batch \d+: )?U\(\d+,\d+\) is zero, singular U\b",
            # xgboost's gpu_hist refusing gradient sums past 2^16 (reg:gamma, large targets).
            r"\bLabels are too large for this algorithm\. Rescale to less than 2\^16\b",
            # torch.multinomial on probabilities a diverged policy made negative or NaN; scipy's
            # assignment on a NaN cost matrix; TensorFlow's Cholesky on a covariance gone non-finite.
            r"\binvalid multinomial distribution \(encountering probability entry (?:< 0|= infinity or NaN)\)",
            r"\bmatrix contains invalid numeric entries\b",
            r"\bCholesky decomposition was not successful\b",
            # A library's finiteness check in its own words (scipy's least squares: "Residuals are
            # not finite in the initial point"; matplotlib: "Axis limits cannot be NaN or Inf").
            # Not torch.histc's "range of [0.0, 5.0] is not finite" with a finite range (above).
            r"^\w*Error: [^\n]{0,120}?(?<!\] )\b(?:is|are) not finite(?![\w-])",
            # (Not Optuna's "Constraint values cannot be NaN": the constraints function's bug.)
            r"^\w*Error: [^\n]{0,120}?(?<!Constraint values )\bcannot be (?:NaN|Inf)\b",
            # A library's or a training script's own NaN check on an error line ("NaNs detected in
            # inputs", "NaN detected in latents: ...", "There should be no NaNs in the encoded x").
            # (NaN as the error's first word; not missing labels: "NaNs found in labels. Please
            # drop or impute ...".)
            *(
                rf"(?<=Error: )NaNs? {verb} in\b"
                r"(?![^\n]{0,60}\b(?:labels?|targets?|impute|missing)\b)"
                for verb in ("detected", "found")
            ),
            r"^\w*Error: [^\n]{0,80}?\bshould be no NaNs in\b",
            # R's brulee stopping on an overflowing loss.
            r"\bnumerical overflow of the loss\b",
            # torchdiffeq's adaptive solvers: the step or the state went non-finite.
            r"\bunderflow in dt (?:-?nan|-?inf)\b",
            r"\bnon-finite values in state\b",
            # A learned scale gone NaN or negative, found when the distribution samples
            # (RL policies); torch.normal called directly with a bad std is the code's.
            r"[/\\]distributions[/\\]normal\.py\", line \d+, in sample\n[^\n]*\n"
            r"(?:[ \t]*[\^~]+[ \t]*\n)?RuntimeError: normal expects all elements of std >= 0\.0",
            # GluonTS's check of each epoch's loss; MindSpore's guard that stops training when
            # the global gradient norm stays above its threshold (the run has diverged).
            r"\bEncountered invalid loss value!",
            r"\bglobal norm \[[^\]\n]{1,40}\][^\n]{0,60}\bconsecutive times greater than "
            r"threshold\b",
        ),
        types=(r"FloatingPointError",),
    ),
    # --- data -------------------------------------------------------------------------------
    Rule(
        "data-target-out-of-bounds",
        FC.DATA_ERROR,
        "label outside the number of classes",
        P_SPECIFIC,
        text=(
            r"Target -?\d+ (?:is )?out of bounds",
            # YOLO's check of its label files against the number of classes; TensorFlow 1's
            # assert of labels past the classes (mean_iou's confusion matrix).
            r"\bLabel class \d+ exceeds nc=\d+",
            r"\[labels out of bound\] \[Condition x < y did not hold\b",
            # TensorFlow's sparse cross-entropy, xgboost, LightGBM, label encoders.
            r"Received a label value of -?\d+ which is outside the valid range",
            r"label must be in \[0, num_class\)",
            r"Label -?\d+ is not less than the number of label mappings",
            r"contains previously unseen labels?\b",
            r"Class values must be smaller than num_classes",
            r"label must be in \[0, ?1\] for logistic regression",
            # LightGBM's ranking objective (its own spelling).
            r"\bLabel excel \d+",
            r"\blabel \(-?\d+\) excel\b",
            r"\blbl < class_num\b",
            r"Please check label value",
            r"\blabel exceed num_class\b",
            r"Unknown class label: ",
            r"Unknown class name: \"",
            r"\bLabel must be in \[0, \d+\), but found -?\d+ in label\b",
            r"The label is out of the range",
            r"labels must be either 0 or 1",
            # dlib's loss_multiclass_log: a label >= the number of outputs.
            r"failing expression was y ?< ?output_tensor\.k\(\)",
            # Paddle's cross_entropy; Caffe's SoftmaxWithLoss; Torch7's ClassNLLCriterion on the CPU (the
            # CUDA kernel's assert, on t, is a device-side assert).
            r"\blabel value should less than the shape of axis dimension\b",
            r"\bExpected lbl < axis_dim\b",
            r"Check failed: label_value (?:>= 0|< )",
            r"Assertion `cur_target >= 0 && cur_target < n_classes' failed",
            # Caffe2's LabelCrossEntropy checks the label's shape and range.
            r"\[enforce fail at cross_entropy_op\.cc:\d+\]",
            # glog CHECKs bounding a label (Caffe SSD: "Check failed: label < colors.size() (10 vs. 10)");
            # TensorFlow 1's confusion matrix ("assertion failed: [`labels` out of bound]").
            r"Check failed: \(?\w{0,40}label\w{0,40} < [^\n]{1,80}\(\d+ vs\. \d+\)",
            r"\[`labels` out of bound\]",
        ),
        hint=(
            "Labels must be in [0, num_classes): check num_classes and the label mapping "
            "(use ignore_index for padding labels such as -100)."
        ),
    ),
    Rule(
        "data-label-format",
        FC.DATA_ERROR,
        "labels or inputs in a form the model does not take (dtype, encoding, NaN)",
        P_SPECIFIC,
        text=(
            # The loss wants class indices (Long), one label per sample.
            r"expected scalar type Long but found \w+",
            # torch < 1.2's wording, for the target argument only (a Float/Double mix between
            # other arguments is the code's error).
            r"Expected object of scalar type Long but got scalar type \w+ for argument #\d+ "
            r"'(?:target|targets|label|labels|y|index)'",
            r"\"nll_loss\w*\" not implemented for '\w+'",
            r"multi-target not supported",
            # xgboost's label checks.
            r"label must consist of integer labels",
            r"labels are not correctly provided",
            r"NaN values are not supported for target",
            r"Invalid classes inferred from unique values of [`']y[`']",
            r"The number of classes has to be greater than one",
            # One class in the labels (sklearn's SVC, LogisticRegression and roc_auc_score).
            r"needs to have more than 1 class\b",
            r"needs samples of at least 2 classes in the data\b",
            r"Only one class present in y_true\b",
            # Labels of another shape than one per sample (sklearn's column_or_1d) or all on one
            # side of CatBoost's binary border.
            r"\bbad input shape \(\d+, ?\d+\)",
            r"\by should be a 1d array, got an array of shape \(\d+, ?\d+\) instead\b",
            r"\bAll targets are (?:greater|smaller|less) than border\b",
            # Categories the encoder has not seen (sklearn's OneHotEncoder and OrdinalEncoder).
            r"\bFound unknown categories \[[^\]\n]{0,200}\] in column \d+ during (?:fit|transform)\b",
            # cross_entropy: float targets are class probabilities, integer labels go as Long.
            r"Expected floating point type for target with class probabilities, got \w+",
            # A dtype mismatch autograd raises in backward: the loss's target in another dtype than
            # the prediction (MSELoss given float64 targets), in torch < 1.6's and later wording.
            r"\bin backward\n(?:[^\n]{0,300}\n){0,2}RuntimeError: expected dtype \w+ but got dtype \w+",
            r"\bin backward\n(?:[^\n]{0,300}\n){0,2}RuntimeError: Found dtype \w+ but expected \w+",
            # Detection annotations outside the image (albumentations' box checks).
            r"In YOLO format all coordinates must be float and in range \(0, ?1\]",
            r"\bExpected \w+ for bbox [^\n]{0,200}? to be in the range \[0\.0, ?1\.0\]",
            r"Missing values like \"[^\"\n]{1,20}\" are not supported for target",
            r"\bTarget Labels for \w+ must be\b",
            # CatBoost: a group or categorical id that is neither an integer nor a string (NaN).
            r"\bbad object for id: ",
            # PIL: a sample file that is not a readable image (corrupt, truncated, empty).
            r"\bcannot identify image file\b",
            r"\bimage file is truncated\b",
            r"Unknown label type: '?(?:continuous|unknown|continuous-multioutput)",
            # (sklearn printing the labels themselves: "Unknown label type: (0  1 ...").
            r"\bUnknown label type: \(",
            r"Target value \"[^\"\n]*\" cannot be parsed as float",
            r"Failed to convert a NumPy array to a Tensor \(Unsupported object type \w+\)",
            r"\btoo many dimensions 'str'",
            r"could not convert string to float: ",
            r"ArrowInvalid: Column \d+: In chunk \d+: Invalid",
            # spaCy: the gold annotations cannot be reached by the parser.
            r"\[E024\] Could not find an optimal move to supervise the parser",
            r"You are passing a target array of shape \(\d+, ?\d*\) while using as loss",
            # Arrow (datasets, pandas): a column's values do not fit its type or length.
            r"ArrowInvalid: Could not convert [^\n]{1,200} with type \w+: tried to convert to",
            r"ArrowInvalid: Column \d+ named \S+ expected length \d+ but got length \d+",
            r"\bSchemas are inconsistent, try using to_parquet",
            # tiktoken: the text contains a special token as plain text.
            r"Encountered text corresponding to disallowed special token",
            # CatBoost: text in a numeric feature; categorical features declared on float data.
            r"\bBad value for num_feature\[",
            r"'cat_features' parameter specifies nonzero number of categorical features",
            # Chainer's type check on a loss function's inputs (the labels' dtype or shape).
            r"Invalid operation is performed in: (?:SoftmaxCrossEntropy|SigmoidCrossEntropy|MeanSquaredError|MeanAbsoluteError|Accuracy|BinaryAccuracy|Hinge)\b",
            # libsndfile: an audio sample that is not a readable sound file.
            r"\bError opening [^\n]{1,300}: (?:File contains data in an unknown format|Format not recognised)",
            # Caffe's data layers: mean values, datum sizes and crops that do not fit the images.
            r"Specify either 1 mean_value or as many as channels",
            r"Check failed: size_in_datum == data_size\b",
            r"Check failed: (?:height|width) <= datum_(?:height|width)\b",
            # CatBoost reading a string in a column not declared categorical ("Cannot convert 'b'Y'' to
            # float", raised from _catboost._FloatOrNan).
            r"\b_catboost\._FloatOrNanFromString\(\)",
            # torchvision's detection models: a target box with no area (x2 <= x1 or y2 <= y1).
            r"\bAll bounding boxes should have positive height and width\b",
            # CatBoost: an evaluation set with missing values where the learn set has none.
            r"\bThere are NaNs in test dataset \(feature number \d+\) but there were no NaNs "
            r"in learn dataset\b",
        ),
        hint=(
            "Classification losses take integer class indices of shape (batch,): convert "
            "labels with .long(), and one-hot or multi-label targets with argmax or a "
            "multi-label loss; encode string labels as 0..num_classes-1."
        ),
    ),
    Rule(
        "data-index-out-of-range",
        FC.DATA_ERROR,
        "index out of range (embedding lookup or indexing)",
        P_SPECIFIC,
        text=(
            r"index out of range in self",
            r"index -?\d+ is out of bounds for dimension \d+ with size \d+",
            # torch 1.0's advanced-indexing check names no dimension.
            r"index -?\d+ is out of bounds for dim with size \d+",
            r"index out of range: Tried to access index -?\d+ out of table with \d+",
            r"indices\[[\d,]+\] = -?\d+ is not in \[0, \d+\)",
            # SparseToDense's one-hot of a label past the classes ("indices[0] = [0,755] is out of
            # bounds: need 0 <= index < [32,5]").
            r"indices\[[\d,]+\] = \[[\d,]+\] is out of bounds: need 0 <= index < \[",
            # numpy/CuPy indexing.
            r"index -?\d+ is out of bounds for axis \d+ with size \d+",
            r"boolean index did not match indexed array along dimension \d+",
            # ONNX/Caffe2-style gather bounds (PyTorch Geometric's index_select on a CPU build).
            r"\bINDICES element is out of DATA bounds\b",
            # A Dataset's own bounds check on a sample index.
            r"\bIndex -?\d+ (?:is )?out of bounds for (?:dataset|data set) (?:with|of) (?:length|size) "
            r"\d+",
            # torch < 1.0's TH index check (an embedding given an id past its table).
            r"\bindex out of range at [^\n]{0,200}[/\\]TH[/\\]generic[/\\]\w+\.c(?:pp)?:\d+",
        ),
        hint=(
            "Token ids or indices exceed the table: check the tokenizer against the model's "
            "vocabulary size and the sequence length against max position embeddings."
        ),
    ),
    Rule(
        "user-dim-argument",
        # Above data-shape-mismatch: the same "Dimension out of range" raised in a model's
        # forward (an unbatched input) is the data's shape; raised on the line of the user's own
        # code that names the dimension, it is that line's argument.
        FC.USER_ERROR,
        "the code names a dimension or index the tensor does not have",
        P_SPECIFIC + 1,
        text=(
            # A traceback whose last frame is outside site-/dist-packages, its line naming a dim.
            r'^[ \t]*File "(?![^"\n]*(?:site|dist)-packages)[^"\n]*", line \d+, in [^\n]*\n'
            rf"{_DIM_LINE}\n(?:[ \t]*[\^~]+[ \t]*\n)?"
            r"(?:torch\.)?IndexError: Dimension out of range\b",
            # IPython: an unindented arrow line is a cell's top level (a library's line is inside
            # a function, so indented); it names a dim.
            r"^-*> ?\d+ (?=\S)"
            rf"{_DIM_LINE}\n(?:[ \t]+\d+ [^\n]*\n)?[ \t]*\n?"
            r"(?:torch\.)?IndexError: Dimension out of range\b",
            # A literal index on that line past the size ("----> 4 show([spectros[2]])" then
            # "index 2 is out of bounds for dimension 0 with size 2"): the code's index, not a
            # label's value.
            r'(?:^[ \t]*File "|\A)(?![^"\n]*(?:site|dist)-packages)[^"\n]*", line \d+, in [^\n]*\n'
            r"[^\n]{0,400}\[(?:[\d:]{1,6}, ?){0,4}\[?(?:\d{1,6}, ?){0,4}(?P<literal>\d+)"
            r"(?:, ?[\d:]{1,6}){0,4}\][^\n]{0,400}\n(?:[ \t]*[\^~]+[ \t]*\n)?"
            r"IndexError: index (?P=literal) is out of bounds for (?:(?:dimension|axis) \d+|dim) with "
            r"size",
            r"^-*> ?\d+ (?=\S)[^\n]{0,400}\[(?P<literal2>\d+)\][^\n]{0,400}\n(?:[ \t]+\d+ [^\n]*\n)?"
            r"[ \t]*\n?IndexError: index (?P=literal2) is out of bounds for (?:(?:dimension|axis) \d+|dim) "
            r"with size",
        ),
        hint="The dim argument or index on the failing line is past the tensor's shape: check "
        "the shape there (a reduction over a batch dimension the tensor no longer has, a "
        "hard-coded index into a shorter list).",
    ),
    Rule(
        "data-shape-mismatch",
        FC.DATA_ERROR,
        "tensor shapes do not fit the model",
        P_SPECIFIC,
        text=(
            r"mat1 and mat2 shapes cannot be multiplied",
            r"size mismatch",
            r"Expected input batch_size \(\d+\) to match target batch_size",
            # pack_padded_sequence given one length per sequence for another batch.
            r"Expected `len\(lengths\)` to be equal to batch_size, but got \d+ \(batch_size=\d+\)",
            r"The size of tensor a \(\d+\) must match the size of tensor b",
            r"shape '\[[^\]\n]*\]' is invalid for input of size",
            r"expected input\[[^\]\n]*\] to have \d+ channels, but got \d+ channels",
            r"Expected \d+D \(unbatched\) or \d+D \(batched\) input",
            r"Expected \d+-dimensional input for \d+-dimensional weight",
            r"Target size \([^)\n]*\)\)? must be the same as input size",
            r"Using a target size \([^)\n]*\)\)? that is different to the input size",
            r"Output size is too small",
            r"input\.size\(-1\) must be equal to input_size\. Expected \d+, got \d+",
            r"with inconsistent numbers of samples",
            r"logits and labels must have the same first dimension",
            r"Shapes \([^)\n]*\) and \([^)\n]*\) are incompatible",
            r"stack expects each tensor to be equal size",
            r"expected sequence of length \d+ at dim \d+ \(got \d+\)",
            r"cannot copy sequence with size \d+ to array axis with dimension \d+",
            r"The number of features in data \(\d+\) is not the same as it was in training data",
            r"cat_features must be integer or string",
            r"The expanded size of the tensor \(\d+\) must match the existing size \(\d+\)",
            r"Unable to create tensor, you should probably activate truncation and/or padding",
            r"Dimension out of range \(expected to be in range of \[-?\d+, -?\d+\], but got -?\d+\)",
            # numpy given ragged rows; sklearn given columns the model was not fit on; an empty
            # data set (a sampler over no samples, sklearn's check).
            r"The requested array has an inhomogeneous shape after \d+ dimensions?\b",
            r"The feature names should match those that were passed during fit\b",
            r"num_samples should be a positive integer value, but got num_samples=0\b",
            r"\bWith n_samples=0, test_size=",
            r"\bCannot have number of splits n_splits=\d+ greater than the number of samples: 0\b",
            # sklearn's StratifiedKFold (and ports of it): a class with fewer members than folds.
            r"\bn_splits=\d+ cannot be greater than the number of members in each class\b",
            # TensorFlow 1's graph assert of the labels against the logits' shape.
            r"Condition x == y did not hold element-wise:\] \[x \([^)\n]{0,200}"
            r"SparseSoftmaxCrossEntropyWithLogits/Shape",
            r"\bFound array with 0 sample\(s\) \(shape=",
            r"\bInvalid key: \d+ is out of bounds for size 0\b",
            # Keras's input spec, TensorFlow kernels, Theano, Paddle, JAX shape polymorphism.
            r"Input \d+ (?:of layer \"?[\w./-]+\"? )?is incompatible with (?:the )?layer",
            r"Error when checking (?:model )?(?:input|target): expected \w+ to have",
            r"Got invalid dimensions for input: ",
            r"\bX has \d+ features(?: per sample)?[;,] (?:but \w+ is )?expecting \d+",
            r"X has a different shape than during fitting",
            r"\bfeature_names mismatch\b",
            r"feature_names must have the same length as data",
            r"\bWrong size of feature_names\b",
            r"Size of feature_names error",
            r"Invalid column index: index = \d+, columnsCount = \d+",
            r"dot_general requires contracting dimensions to have the same shape",
            r"dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
            r"same shape",
            r"only batches of spatial targets supported",
            r"\bShape inconsistent, Provided = \[",
            r"Input\(Logits\) and Input\(Label\) should in same shape",
            r"The input tensor's dimension should be equal to the axis's size",
            r"Matrix size-incompatible: In\[0\]",
            r"Incompatible shapes: \[[\d,]+\] vs\. \[",
            r"Input to reshape is a tensor with \d+ values, but the requested shape",
            r"ConcatOp : Dimensions of inputs should match",
            r"Assign requires shapes of both tensors to match",
            r"Can't convert non-rectangular Python sequence to Tensor",
            r"Input dimension mis-match\. \(input\[\d+\]\.shape",
            r"\bBroadcast dimension mismatch\. Operands could not be broadcast together",
            r"Input shapes do not match the polymorphic shapes specification",
            r"is not consistent with the length of this :obj:`InstanceData`",
            # Inputs longer than the model or the pipeline takes (spaCy's E088, vLLM).
            r"\[E088\] Text of length \d+ exceeds maximum of \d+",
            r"exceeds the pre-allocated encoder cache size \d+",
            # Paddle, MXNet, Caffe, TensorFlow: the labels' shape against the logits'.
            r"\bthe axis dimension of Input\(X\) and Input\(Label\) should be equal\b",
            r"\bInferShape Error in \w+'s label argument\b",
            r"\blabel shape mismatch\b",
            r"Number of labels must match number of predictions",
            r"\bThe shape of labels \(received \([^)\n]*\)\) should equal the shape of logits\b",
            # torch.cat of tensors whose other dimensions differ (THC's and ATen's wording).
            r"Sizes of tensors must match except in dimension \d+",
            r"\ball the input arrays must have same number of dimensions\b",
            r"\ball the input array dimensions (?:for|except for) the concatenation axis must "
            r"match exactly\b",
            # DL4J's matrix product; sklearn's feature count and 2-D input; TensorFlow 1's feed.
            r"\bColumn of left array \d+ != rows of right \d+",
            # numpy's dot and matmul ("shapes (150,3) and (2,) not aligned: 3 (dim 1) != 2 (dim
            # 0)"; "matmul: Input operand 1 has a mismatch in its core dimension 0").
            r"\bshapes \([\d, ]*\) and \([\d, ]*\) not aligned: \d+ \(dim \d+\) != \d+",
            r"\bmatmul: Input operand \d has a mismatch in its core dimension \d+",
            r"Number of features of the model must\s+match\s+the input",
            r"\bIncorrect number of features\. Got \d+ features, expected \d+",
            r"Expected 2D array, got 1D array instead",
            r"Cannot feed value of shape \([^)\n]*\) for Tensor\b",
            # Caffe's layer shape checks on a bottom blob ("Check failed: num_priors_ * num_classes_ ==
            # bottom[1]->channels() (7315308 vs. 153468)") and on a datum against the mean file.
            r"Check failed: [^\n]{0,200}\bbottom\[\d+\]->(?:shape|channels|num|height|width|count)\([^\n]{0,120}\(\d+ vs\. \d+\)",
            r"Check failed: datum_(?:height|width|channels) == ",
            # DL4J/ND4J shape checks (placeholders, reshape, RNN labels, row assignment).
            r"\bcannot associate an array with shape \[[^\]\n]{0,200}\] with a placeholder of shape\b",
            r"\bNew shape length doesn't match original length\b",
            r"\bIllegalStateException: Mis ?matched shapes\b",
            r"\bSequence lengths do not match for \w+ input and labels\b",
            # sklearn's input checks (rank, number of features against a fitted transformer).
            r"\bFound array with dim \d+\. \w+ expected <= \d+",
            r"\bNumber of features of the input must be equal to or greater than that of the fitted transformer\b",
            # TensorFlow 1 and Keras: labels against logits or outputs.
            r"\bRank mismatch: Rank of labels \(received \d+\) should equal rank of logits\b",
            r"\bDimension \d+ in both shapes must be equal, but are \d+ and \d+",
            r"\bA target array with shape \([^)\n]{0,200}\) was passed for an output of shape\b",
            # Theano's elementwise ops; Julia's DimensionMismatch (Flux, MLUtils).
            r"\bInput dimension mis-?match\. Input \d+",
            r"\bDimensionMismatch(?:\(\"|: )",
            # xgboost, LightGBM (R), MXNet, TensorFlow image ops, torch's layer_norm, TensorFlow's CTC loss.
            r"\blabel size and pred size does not match\b",
            r"\blen of label is not same with #data\b",
            r"\bShape of Tensors are not consistent with target\b",
            r"\binput must have \d+ channels but instead has \d+ channels\b",
            r"\bGiven normalized_shape=\[[^\]\n]{0,200}\], expected input with shape\b",
            r"\bNot enough time for target transition sequence\b",
            # MXNet's shape inference on a weight or input ("Shape inconsistent, Provided=(2,3), inferred
            # shape=(3,2)").
            r"\bShape inconsistent, Provided ?= ?[(\[]",
            # R (tidymodels): two columns of different lengths.
            r"`\w+` has length \d+ but `\w+` has length \d+",
            # A model's own shape assertion on its input (whisper: "incorrect audio shape").
            *(
                rf"^AssertionError: {word} [\w ]{{0,30}}?shapes?\b"
                for word in ("incorrect", "invalid", "wrong", "unexpected", "bad", "mismatched")
            ),
        ),
    ),
    # --- known user errors (even when they mention CUDA) ------------------------------------
    Rule(
        "user-device-mismatch",
        FC.USER_ERROR,
        "tensors on different devices",
        P_SPECIFIC,
        text=(
            r"Expected all tensors to be on the same device",
            r"Expected object of device type \w+ but got device type",
            r"Input type \([\w.]+\) and weight type \([\w.]+\) should be the same",
            r"expected device \w+(?::\d+)? but got device",
            r"is on CPU, but expected (?:it|them) to be on GPU",
        ),
        hint="Move the model and every input to the same device (model.to(device), "
        "batch.to(device)); check tensors created inside forward().",
    ),
    Rule(
        "user-inplace-modified",
        FC.USER_ERROR,
        "a tensor needed for backward was modified in place",
        P_SPECIFIC,
        text=(r"needed for gradient computation has been modified by an inplace operation",),
        hint="An in-place operation (x += ..., x[idx] = ..., relu_(inplace=True)) changed a "
        "tensor autograd saved: use the out-of-place form; detect_anomaly shows the op.",
    ),
    Rule(
        "user-torch-without-cuda",
        FC.USER_ERROR,
        "this torch build has no CUDA",
        P_SPECIFIC,
        text=(r"Torch not compiled with CUDA enabled",),
        hint="Install a CUDA build of torch (`hpo doctor` shows the build); every trial fails "
        "the same way, so consider `on_failure: {user_error: stop}`.",
    ),
    Rule(
        "user-cuda-after-fork",
        FC.USER_ERROR,
        "CUDA used in a forked subprocess",
        P_SPECIFIC,
        text=(
            r"Cannot re-initialize CUDA in forked subprocess",
            # The autograd profiler in CUDA mode with DataLoader workers (torch < 1.8), often
            # through a C++ terminate.
            r"\bprofiler_cuda\.cpp:\d+: CUDA initialization error\b",
        ),
        hint="CUDA was initialised before fork(): use the 'spawn' or 'forkserver' start method "
        "(DataLoader multiprocessing_context) and keep CUDA out of DataLoader workers.",
    ),
    Rule(
        "user-cuda-stream-capture",
        FC.USER_ERROR,
        "CUDA graph capture broken by a forbidden call (API misuse)",
        P_SPECIFIC,
        text=(
            r"operation not permitted when stream is capturing",
            r"operation failed due to a previous error during capture",
            r"(?:cudaError|hipError)StreamCapture\w+",
            r"CUDA_ERROR_STREAM_CAPTURE_\w+",
            r"The CUDA graph capture on the stream has failed",
        ),
        cuda=True,
        cuda_error_type="stream_capture",
        hint=_MISUSE_HINT,
    ),
    Rule(
        "user-backward-twice",
        FC.USER_ERROR,
        "backward through a graph that was already freed",
        # Above anomaly mode's warning, which precedes it when anomaly detection is on.
        P_SPECIFIC,
        text=(r"Trying to backward through the graph a second time",),
        hint="Call backward() once per forward pass, or pass retain_graph=True; detach tensors "
        "kept across iterations (hidden states, running losses).",
    ),
    Rule(
        "hccl-listen-port-in-use",
        FC.USER_ERROR,
        "the collective library's port is already in use",
        # Ascend's HCCL cannot listen on its port ("... listen on ip[..] and specific port[16666]
        # fail. Please check the port status ..."): the cause the link timeout after it names.
        P_STORE_TIMEOUT + 1,
        text=(r"\[HcclSocket\]\[Listen\] [^\n]{0,200}\bspecific port\[\d+\] fail\b",),
        hint="Another process (often another trial or run on this host) holds that port: give "
        "each trial its own ports (HCCL_IF_BASE_PORT), or run one distributed trial per host at a "
        "time.",
    ),
    Rule(
        "user-address-in-use",
        FC.USER_ERROR,
        "the rendezvous port (MASTER_PORT) is already in use",
        # Below NCCL's own socket errors (NCCL reports a bind failure in its own words).
        P_SPECIFIC,
        text=(
            # torch.distributed's TCPStore on MASTER_PORT; an "Address already in use" elsewhere
            # (a dashboard, TensorBoard, a web server the objective starts) names nothing.
            r"\bThe server socket has failed to (?:listen on|bind to)\b[^\n]{0,300}"
            r"(?:EADDRINUSE|errno: 98|Address already in use)",
            r"^RuntimeError: Address already in use[ \t]*$",
        ),
        hint="Another process (often another trial or run on this host) already listens on that "
        "port (MASTER_PORT, 29500 by default): give each trial its own free port, or run one "
        "distributed trial per host at a time.",
    ),
    Rule(
        "user-launch-failed",
        FC.USER_ERROR,
        "the launcher could not start the program",
        # Above srun's step ending and the cancel that follow it.
        P_SPECIFIC,
        text=(
            r"\bslurmstepd: error: execve\(\): [^\n]{1,300}: (?:No such file or directory"
            r"|Permission denied|Exec format error)",
        ),
        hint="The script or program the scheduler was told to run is missing or not executable "
        "on the node: check its path (relative to the job's working directory) and mode.",
    ),
    Rule(
        "user-extension-build-failed",
        FC.USER_ERROR,
        "a C++/CUDA extension failed to build",
        # Above the launcher's and the pool's report that follows it (ninja's
        # ``CalledProcessError``, a pool re-raising the RuntimeError in its parent).
        P_SPECIFIC,
        text=(r"\bError building extension '[^'\n]{1,200}'",),
        hint="torch.utils.cpp_extension (load, load_inline, or a package that compiles its ops "
        "on first use) could not compile the extension: the compiler's error is above it in the "
        "log. Every trial fails the same way until the code or the toolchain is fixed.",
    ),
    Rule(
        "user-cpp-argument-error",
        FC.USER_ERROR,
        "a C++ library rejected an argument or setting the code gave it",
        # A named cause beats the abort that follows (text-crash): a string that did not parse
        # ("what():  stoul"), an index past a vector's end (vector::_M_range_check), SYCL asked
        # for a device feature it was not set up for (ext_intel_free_memory needs
        # ZES_ENABLE_SYSMAN=1). Other C++ exceptions with an internal message stay segfault.
        P_SPECIFIC,
        text=(
            r"terminate called after throwing an instance of 'std::(?:invalid_argument|out_of_range)'",
            r"\bThe device does not have the \w+ aspect\b",
        ),
        hint="A C++ library threw for an argument the code (or its configuration, an environment "
        "variable) passed: the what() line names it. Every trial fails the same way until it is "
        "fixed.",
    ),
    Rule(
        "user-loss-input-range",
        FC.USER_ERROR,
        "a loss was given values outside its input range",
        # THNN's BCE check on a number (a NaN there is numerical-nonfinite): logits where
        # probabilities go. Above the C assert's abort (text-crash).
        P_SPECIFIC,
        text=(r"\binput value should be between 0~1, but got -?\d",),
        hint="BCELoss expects probabilities in [0, 1]: apply a sigmoid first, or use "
        "BCEWithLogitsLoss on the raw outputs.",
    ),
    Rule(
        "user-kernel-launch-config",
        FC.USER_ERROR,
        "a kernel was launched with a configuration the GPU rejects",
        # XLA's Triton kernels ("Failed to launch CUDA kernel: triton_gemm_dot_0 with block
        # dimensions ... CUDA_ERROR_INVALID_VALUE"): a compiler's or the code's launch
        # parameters, not a dead context (above the uncertain invalid-value code).
        P_SPECIFIC,
        text=(r"\bFailed to launch CUDA kernel: [^\n]{0,300}\bCUDA_ERROR_INVALID_VALUE\b",),
        cuda=True,
        cuda_error_type="launch_configuration",
        hint="The kernel's launch parameters (block size, shared memory, grid) are invalid for "
        "this GPU: a compiler or kernel-configuration bug for these shapes; every trial with "
        "them fails the same way.",
    ),
    Rule(
        "cuda-allocator-oom-warning",
        FC.OOM,
        "the CUDA caching allocator warned of a failed allocation",
        # torch's caching allocator warning ("memory allocation failed with OOM on device 0 while
        # trying to allocate ..."): non-fatal, the allocator frees its cache and retries. Only when
        # nothing else is named: a later error in the same text is the failure.
        P_HINT + 1,
        text=(r"\bmemory allocation failed with OOM on device \d+ while trying to allocate\b",),
        yields_to_plain_error=True,
    ),
    Rule(
        "data-nan-in-loader",
        FC.DATA_ERROR,
        "a missing value reached int() while loading a sample",
        # int() of a NaN inside a Dataset's __getitem__: a missing label or field in the data,
        # not a diverged model (above numerical-nonfinite's cue for the same message).
        P_SPECIFIC + 1,
        text=(
            r", in __getitem__\n(?:[^\n]*\n){1,2}?(?:[ \t]*[\^~]+[ \t]*\n)?"
            r"ValueError: cannot convert float NaN to integer\b",
        ),
    ),
    Rule(
        "user-spawn-main-guard",
        FC.USER_ERROR,
        "a child process was started without the __main__ guard (spawn)",
        P_SPECIFIC,
        text=(
            r"An attempt has been made to start a new process before the\s+current process "
            r"has finished its bootstrapping phase",
        ),
        hint="Under the 'spawn' or 'forkserver' start method the script that starts processes "
        "must guard its entry point with `if __name__ == '__main__':`.",
    ),
    Rule(
        "user-cuda-checkpoint-on-cpu",
        FC.USER_ERROR,
        "CUDA checkpoint loaded without CUDA",
        P_SPECIFIC,
        text=(r"Attempting to deserialize object on a CUDA device",),
        hint="Pass map_location to torch.load, and check that the worker sees its GPU "
        "(`hpo doctor`).",
    ),
    Rule(
        "user-nccl-not-built",
        FC.USER_ERROR,
        "no NCCL in this build or installation (torch on Windows, macOS, CPU; XLA without it)",
        P_SPECIFIC,
        text=(
            r"Distributed package doesn't have NCCL built in",
            # XLA finding no NCCL library to load ("NCCL operation ncclGetUniqueId(&id) failed: Unable
            # to load NCCL library. Multi-GPU collectives will not work.").
            r"Unable to load NCCL library",
        ),
        hint="torch: use the gloo backend (init_process_group('gloo')) or a Linux CUDA build; "
        "JAX/XLA: install the NCCL its CUDA build expects (the nvidia-nccl-cu* wheel).",
    ),
    Rule(
        "disk-full",
        FC.USER_ERROR,
        "the disk is full (No space left on device)",
        # Not host_oom (PRUNED would blame the parameters) and below the /dev/shm rule, which
        # is host memory.
        P_SPECIFIC,
        text=(
            r"No space left on device",
            r"\[Errno 28\]",
            r"\bENOSPC\b",
            # torch.save's writer failing mid-file (a full disk or quota; the OS error is lost).
            r"\bPytorchStreamWriter failed writing file [^\n]{0,300}: file write failed",
        ),
        hint="The disk the trial writes to (checkpoints, caches, /tmp) is full: free space or "
        "write elsewhere. Every trial will fail the same way until then, so the breaker stops "
        "the run.",
    ),
    Rule(
        "user-objective-value",
        FC.USER_ERROR,
        "the objective did not return a number",
        P_SPECIFIC,
        text=(
            r"could not be cast to float",
            r"The objective returned (?:None|an? \w+)",
            r"failed with value (?:None|'|\")",
        ),
        hint="The objective must return a float (or one per objective): return the metric; "
        "None usually means a missing metric key.",
    ),
    Rule(
        "user-metric-inputs",
        FC.USER_ERROR,
        "a metric was given predictions in another form than the labels",
        P_SPECIFIC,
        text=(
            # sklearn's metrics: probabilities or one-hot rows passed where labels are expected
            # (see the labelling conventions).
            r"Classification metrics can't handle a mix of [\w-]+ and [\w-]+ targets",
        ),
        hint="Pass the metric class labels, as the targets are: threshold probabilities "
        "(proba > 0.5) or take argmax of scores and one-hot rows first.",
    ),
    Rule(
        "pool-result-unpicklable",
        FC.USER_ERROR,
        "a process pool could not unpickle a task or its result",
        P_SPECIFIC,
        text=(
            # loky's BrokenProcessPool message, and its remote traceback: the error was raised
            # while the pool read a result back, not by a worker dying.
            r"\bA (?:result|task) has failed to un-serialize\b",
            r"\bresult_item = result_reader\.recv\(\)\n[^\n]*\n[^\n]*_ForkingPickler\.loads\(",
        ),
        hint="Return only picklable objects from the function the pool runs (plain data, not "
        "open handles or classes whose __init__ needs arguments to rebuild).",
    ),
    # --- killed DataLoader workers, timeouts reported by torch.distributed -------------------
    Rule(
        "dataloader-worker-segfault",
        FC.SEGFAULT,
        "DataLoader worker crashed",
        P_KILLED_WORKER,
        text=(
            r"killed by signal: (?:Segmentation fault|Aborted|Illegal instruction"
            r"|Floating point exception)",
            r"Unexpected segmentation fault encountered in worker",
            r"Unexpected floating-point exception encountered in worker",
        ),
        hint=_SEGV_HINT,
    ),
    Rule(
        "dataloader-worker-terminated",
        FC.INTERRUPTED,
        "DataLoader worker terminated from outside",
        P_KILLED_WORKER,
        text=(r"killed by signal: (?:Terminated|Hangup|Interrupt)",),
        hint=_INTERRUPT_HINT,
    ),
    Rule(
        "distributed-time-limit",
        FC.TIMEOUT,
        "timed out waiting (DataLoader, peer or job time limit)",
        P_KILLED_WORKER,
        text=(
            r"Timed out waiting \d+ms for (?:recv|send)(?:/(?:recv|send))? operation",
            r"DUE TO TIME LIMIT",
            # Other schedulers' and runners' wall-clock limits.
            r"PBS: job killed: walltime \d+ exceeded limit \d+",
            r"\bTERM_RUNLIMIT: job killed after reaching LSF run time limit",
            r"\bjob exceeded wallclock limit\b",
            r"\bdue to wall clock limit\b",
            r"adjust/remove the job execution time limit",
            r"has exceeded the maximum execution time of \d+ minutes",
            # torch's multi-process test harness.
            r"Process \d+ terminated or timed out after [\d.]+ seconds",
            r"DataLoader timed out after \d+ seconds",
            # Torque/PBS's mail when the walltime ran out.
            r"\bJob exceeded its walltime limit\b",
            # Horovod's stall inspector: ranks waiting on a collective that others never submitted.
            r"waiting for remainder of ranks for more than \d+ seconds",
            # Training loops' own time-limit callbacks (anemoi; Lightning's Timer).
            r"\bTime limit (?:of \S+ )?reached\. (?:Stopping training|Elapsed time is)\b",
            # JAX's shutdown barrier with the coordination service (a peer never arrived): the final
            # exception, below a numerical or data error raised before the shutdown.
            r"\bXlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded\b",
            # Dask's comm connect limit; xgboost's rabit collectives; Ray Train's worker-group
            # start; pytest-timeout.
            r"\brabit\b[^\n]{0,300}: Poll timeout\b",
            r"\bworker group startup timed out after [\d.]+ seconds\b",
            r"\bFailed: Timeout >[\d.]+s\b",
            r"^\+{5,} Timeout \+{5,}$",
            # submitit's own report of a Slurm time limit (its "this job is preempted" twin is
            # interrupted; "Job has not timed out" is the preemption's first line).
            r"\bJob has timed out\. Ran \d+ minutes? out of requested \d+ minutes?",
            r"\bCaught signal \S+ on \S+: this job is timed-out\b",
            r"\bJob not requeued because: timed-out\b",
            # func_timeout's exception as a log shows it.
            r"(?-i:\bFunctionTimedOut): ",
            # A model server's start-up limit (Ollama's runner).
            r"\btimed out waiting for [\w.-]{1,40}(?: [\w.-]{1,40}){0,3} to start\b",
        ),
        types=(
            r"(?:asyncio\.(?:exceptions\.)?|concurrent\.futures\.(?:_base\.)?|builtins\.)?TimeoutError",
            r"(?:ray\.exceptions\.)?GetTimeoutError",
            # pynisher's per-run limits (auto-sklearn, SMAC); stopit's (TPOT's per-pipeline limit).
            r"(?:pynisher\.[\w.]*\.)?(?:Cpu|Wall)TimeoutException",
            r"(?:stopit\.(?:utils\.)?)?TimeoutException",
            r"(?:func_timeout\.(?:exceptions\.)?)?FunctionTimedOut",
        ),
    ),
    Rule(
        "wandb-init-timeout",
        # W&B's run start timed out (a service that never answered). Often caught, with an
        # offline fallback: below a crash, a Ctrl-C or a worker's death after it.
        FC.TIMEOUT,
        "W&B run initialization timed out",
        P_TEXT_SIGNAL - 1,
        text=(r"\bRun initialization has timed out after [\d.]+ sec\b",),
    ),
    Rule(
        "keyboard-interrupt",
        FC.INTERRUPTED,
        "interrupted (KeyboardInterrupt)",
        P_INTERRUPT,
        text=(
            r"Detected KeyboardInterrupt, attempting graceful shutdown",
            # The terminal's echo of Ctrl-C, glued to what Python printed next.
            r"^\^CTraceback",
            r"^\^CException ignored",
            # ... or glued to any other line ("^C2023-06-16 11:56:46 | INFO: Shutting down",
            # "58/71 [23:09<05:11, 23.96s/it]^C").
            r"^\^C(?=\S)",
            r"\S\^C$",
            # Ray Tune stopping on Ctrl-C/SIGINT, above the actor deaths it causes.
            r"Stop signal received \(e\.g\. via SIGINT/Ctrl\+C\)",
        ),
        types=(r"KeyboardInterrupt",),
        # (a logger's "Keyboard Interrupt. Ending early." is in text-interrupted)
        hint=_INTERRUPT_HINT,
    ),
    # --- weak evidence ----------------------------------------------------------------------
    Rule(
        "dataloader-worker-exited",
        # Not host_oom: nothing in the text says why the worker died (Windows has no SIGCHLD
        # report at all), and host_oom is PRUNED, which blames the parameters on no evidence.
        FC.WORKER_LOST,
        "DataLoader worker exited unexpectedly (no cause reported)",
        P_WEAK,
        text=(
            r"DataLoader worker \(pid\(?s?\)?[^)\n]*\) exited unexpectedly",
            # Paddle's DataLoader: the reader's queue was closed after a worker failed.
            r"Blocking queue is killed because the data reader raises an exception",
            r"DataLoader \d+ workers? exit unexpectedly",
        ),
        hint="A DataLoader worker died without a signal report: host RAM or /dev/shm "
        "exhaustion are the usual causes (fewer workers, a larger shm); num_workers=0 shows "
        "the worker's own error.",
    ),
    Rule(
        "numerical-anomaly-mode",
        FC.NUMERICAL,
        "autograd anomaly mode flagged a backward node (most often NaN/Inf)",
        P_WEAK,
        text=(
            # detect_anomaly's warning names the node; it is on because NaNs were being hunted,
            # but it also precedes other backward errors, so this is weak evidence.
            r"Error detected in \w+(?:\n\w+)?\. (?:Traceback of forward call|No forward pass)",
        ),
        yields_to_plain_error=True,
    ),
    Rule(
        "numerical-numpy-warnings",
        FC.NUMERICAL,
        "numpy overflowed and then produced NaN (inf/inf, inf-inf)",
        P_WEAK,
        text=(
            r"RuntimeWarning: ?overflow encountered in \w+[^\n]*\n(?:[^\n]*\n){0,2}[^\n]*"
            r"RuntimeWarning: ?invalid value encountered in",
        ),
    ),
    Rule(
        "numerical-jitter-exhausted",
        # GPyTorch's Cholesky retries with growing jitter (1e-6, 1e-5, 1e-4) before NotPSDError;
        # the last try means the kernel matrix is not positive definite, most often from
        # hyperparameters gone extreme. Weak: it yields to a plain Python error.
        FC.NUMERICAL,
        "GPyTorch reached its largest jitter: the kernel matrix is not positive definite",
        P_HINT + 1,
        text=(
            r"NumericalWarning: A not p\.d\., added jitter of 1\.0e-0[1-4] to the diagonal\n"
            r"(?:[ \t]*warnings\.warn\([^\n]*\n)?(?:[ \t]*\n)?[ \t]*(?:Traceback \(most recent call last\)"
            r"|-{20,}$)",
        ),
        yields_to_plain_error=True,
    ),
    Rule(
        "numerical-logged-return",
        # An RL return or reward logged as NaN. Loops also print NaN means before any episode has
        # finished, so this is weak: it decides only when nothing else is named (above the
        # start-up warnings, below a launcher's report and any signal or crash), and yields to a
        # plain Python error.
        FC.NUMERICAL,
        "an RL return or reward logged as NaN",
        P_HINT + 1,
        text=(
            # ("re[t]u[r]n" keeps "return", on many traceback lines, out of the literal anchor.
            # One cue, so a text with "nan" on every line is scanned once.)
            r"\bre(?:[t]u[r]n|[w]a[r]d)s?[ \t]{0,20}[:=][ \t]{0,20}-?nan\b(?!-)",
        ),
        yields_to_plain_error=True,
    ),
    Rule(
        "device-fallback-warning",
        FC.DEVICE_UNAVAILABLE,
        "the framework found no usable GPU and went on without one",
        # Warnings printed at start-up, after which the framework carries on on the CPU (JAX
        # prints one on every CPU-only host): below a crash or a signal in the same text, and
        # yielding to a plain Python error there.
        P_HINT,
        text=(
            # TensorFlow: its GPU libraries did not load.
            r"Skipping registering GPU devices",
            # torch: CUDA could not be initialised at import; it goes on on the CPU.
            r"Warning: CUDA initialization: ",
            r"but no GPU found in runtime",
            r"I will set the available devices to be zero",
            r"libcuda\.so(?:\.1)? not found",
            r"No GPU/TPU found, falling back to CPU",
            # JAX: no CUDA backend; torch: a GPU this build has no kernels for.
            r"Unable to initialize backend 'cuda'",
            # Ollama's GPU discovery (an INFO line, then the CPU): cudaErrorInsufficientDriver.
            r"\bcudart init failure: 35\b",
            # NCCL without the driver's library; it may carry on (WSL2 often does).
            r"NCCL WARN Failed to find CUDA library libcuda\.so",
            r"Found GPU\s?\d+ [^\n]{1,80} which is of cuda capability [\d.]+\.\s+Minimum and "
            r"Maximum cuda capability supported",
            # Ollama's GPU discovery by number ("cuInit err: 500", "cuda driver library init failure:
            # 802"), then the CPU; IPEX/torch XPU finding no device (a UserWarning); XGBoost 1.x going on
            # with gpu_id -1.
            r"\bcuInit err: [1-9]\d*",
            r"\bcuda driver library init failure: \d+",
            r"\bXPU Device count is zero\b",
            r"\bNo visible GPU is found, setting `gpu_id` to -1",
        ),
        cuda=True,
        cuda_error_type="no_device",
        yields_to_plain_error=True,
    ),
    Rule(
        "cuda-runtime-not-found",
        FC.DEVICE_UNAVAILABLE,
        "no CUDA runtime found (the GPU is not visible to this process)",
        # torch.utils.cpp_extension prints it on import when CUDA_HOME exists but
        # torch.cuda.is_available() is False, so it also precedes unrelated errors; like the
        # start-up warnings it ranks below crashes and signals and yields to plain errors.
        P_HINT,
        text=(r"No CUDA runtime is found",),
        cuda=True,
        cuda_error_type="no_device",
        yields_to_plain_error=True,
    ),
    Rule(
        "distributed-network-error",
        FC.NCCL,
        "torch.distributed network error",
        P_WEAK,
        types=(r"(?:torch\.distributed\.)?DistNetworkError",),
    ),
    # --- a process pool's worker died (not the trial's worker) ------------------------------
    Rule(
        "pool-worker-lost",
        FC.WORKER_LOST,
        "a process-pool worker died ({code})",
        P_POOL,
        text=(
            r"The exit codes of the workers are \{(?P<code>[^}\n]{1,80})\}",
            r"A worker process managed by the executor was unexpectedly terminated",
            r"A process in the process pool was terminated abruptly",
            r"A child process terminated abruptly, the process pool is not usable anymore",
            r"The actor died unexpectedly before finishing this task",
            r"The actor is dead because its (?:worker process|owner) has died",
            r"A worker died or was killed (?:while executing a task )?by an unexpected system error",
            r"\bRaylet is terminated: [^\n]{0,300}\bTermination is unexpected\b",
            r"\bERROR worker \d+ died\b",
            # Apache Beam's SDK harness; Open MPI's launch daemon.
            r"\bSDK worker appears to be dead\b",
            # (Not status 127: the daemon's command was not found, an installation problem.)
            r"\bA daemon \(pid (?:unknown|\d+)\) died unexpectedly with status (?!127\b)\d+",
            # Windows: loky kills a broken pool's workers with taskkill, which reports the ones
            # already gone ('ERROR: The process "13492" not found.', localised).
            r'^[^\w\n]*ERROR: The process "\d+" not found',
            r'^[^\w\n]*错误: 没有找到进程 "\d+"',
            r"The worker died unexpectedly while executing this task",
            r"\bWorkerCrashedError\b",
            # The type named alone (an issue title, a log that kept only the name).
            r"(?-i:\bBrokenProcessPool\b)",
            r"(?-i:\bTerminatedWorkerError\b)",
            r"state=finished raised (?:TerminatedWorkerError|BrokenProcessPool)",
            r"One of the subprocesses has abruptly died during map operation",
            r"Worker exited prematurely: (?:exitcode|signal) \d+",
            r"WorkerProc initialization failed due to an exception in a background process",
            # (vLLM naming no failed process, "Failed core proc(s): {}", is its error above.)
            r"Engine core initialization failed\. See root cause above(?!\. Failed core proc\(s\): \{\})",
            r"Engine core proc \S+ died unexpectedly",
            # Dask: the scheduler gave up on a task whose workers kept dying.
            r"(?-i:\bKilledWorker\b)",
            r"distributed\.nanny - WARNING - Restarting worker",
            r"Python worker exited unexpectedly \(crashed\)",
            r"Worker proc \S+ died unexpectedly",
            r"A worker died or was killed while executing (?:a )?task\b",
            # nnU-Net's batchgenerators and export pool; pytest-xdist; Dask; Paddle's DataLoader.
            r"(?:One or more|Some) background workers are no longer alive",
            r"\[gw\d+\] node down: Not properly terminated",
            r"\b(?:worker|slave) '?gw\d+'? crashed while running\b",
            # gunicorn's arbiter: a worker that died of a signal ("Worker (pid:54) was sent code
            # 139!"); deadpool's and billiard's pools; Hazelcast's simulator.
            r"\bWorker \(pid:\d+\) was sent code \d+!",
            r"\bWorker process died unexpectedly\b",
            r"billiard[/\\]pool\.py\", line \d+, in (?:_join_exited_workers|_set_terminated)\b",
            r"\bWorker terminated with exit code not 0\b",
            r"Maximum crashed workers reached",
            r"distributed\.scheduler - \w+ - Lost all workers",
            r"Actor status: 0 alive, \d+ dead",
            r"\bsent task to dead actor\b",
            r"likely worker died or was killed while executing the task",
            r"\bThe task's local raylet died\b",
            # Spark executors lost with no cause; Ray nodes marked dead (raylet gone); Ray's owner died.
            r"\bExecutorLostFailure \(executor \S+ lost\)",
            r"\bLost executor \S+ on [^\n]{1,100}: remote (?:Rpc|Akka) client disassociated",
            r"has been marked dead because the (?:detector|monitor) has missed too many heartbeats",
            r"The object's owner has exited\b",
            # A Spark executor lost with no cause named; a Ray task whose node died.
            r"\bExecutorLostFailure \(executor \S+ exited (?:caused by one of|unrelated to) the "
            r"running tasks\)",
            r"\bTask failed because the node it was running on is dead or unavailable\b",
            # Julia Distributed, Jupyter's kernel, R's parallel (mclapply, future, rslurm).
            r"^[ \t|]*Worker \d+ terminated\.[ \t]*$",
            r"\bThe kernel appears to have died\. It will restart automatically\b",
            # Colab's runtime, VS Code's and Jupyter server's kernel restarts (no cause named;
            # "Your session crashed after using all available RAM" is host_oom).
            r"\bYour session crashed\. Automatically restarting\b",
            r"\bDisposing session as kernel process died\b",
            r"\bThe Kernel crashed while executing code in the current cell or a previous cell\b",
            r"\bkernel [0-9a-f]{8}-[0-9a-f-]{27} restarted\b",
            r"KernelRestarter: restarting kernel \(\d+/\d+\)",
            r"\bscheduled cores? [\d, ]+ did not deliver results\b",
            r"\bparallel function calls? did not deliver (?:a )?results?\b",
            r"\bPost-mortem diagnostic: No process exists with this PID\b",
            # R's future: the connection to a cluster worker broke, no result came back
            # ("MultisessionFuture (<none>) failed to receive results from cluster RichSOCKnode #1
            # ... error reading from connection"; "the connection to the worker is corrupt").
            r"(?-i:Future) \([^)\n]{0,80}\) failed to (?:receive (?:message )?results|check(?:ing)? "
            r"resolved) from cluster\b",
            r"\bconnection to the worker (?:of [^\n]{1,80} )?is (?:lost|corrupt)",
            r"\bFailed to retrieve the value of \w*Future \(",
            # SoS workflows.
            r"\bOne of the local workers has been killed\b",
            # RLlib's trainer; Dask's nanny with no memory-budget line before it (host_oom).
            r"\bWorker crashed during call to `?\w+\(\)`?",
            r"distributed\.nanny - WARNING - Worker process \d+ was killed by unknown signal",
            # A Ray actor's fatal signal as the driver echoes it ("(WorkerDict pid=124799) ...
            # *** SIGABRT received at time="): the actor died, not the trial's process.
            r"^\((?:\w+ )?pid=\d+(?:, ip=[\d.]+)?\) [^\n]*\*\*\* SIG(?:SEGV|ABRT|BUS|ILL|FPE) received "
            r"at time=",
            r"^\((?:\w+ )?pid=\d+(?:, ip=[\d.]+)?\) Fatal Python error: (?:Segmentation fault|Aborted|"
            r"Floating point exception|Bus error|Illegal instruction)\b",
            # Julia's Distributed prints each worker's output under "From worker N:".
            r"^[ \t]*From worker \d+:[ \t]+signal \((?:4|6|7|8|11)\): \w",
        ),
        types=(
            r"(?:[\w.]*\.)?TerminatedWorkerError",
            r"(?:[\w.]*\.)?BrokenProcessPool",
            r"(?:ray\.exceptions\.)?(?:RayActorError|ActorDiedError|WorkerCrashedError)",
            # The raylet (Ray's per-node manager) running the task died with no cause named.
            r"(?:ray\.exceptions\.)?LocalRayletDiedError",
            r"(?:billiard\.exceptions\.)?WorkerLostError",
            r"(?:distributed\.scheduler\.)?KilledWorker",
            r"(?:ray\.exceptions\.)?OwnerDiedError",
        ),
        hint=_POOL_HINT,
    ),
    Rule(
        "elastic-actor-dead",
        # xgboost_ray's elastic training goes on with the actors left; a plain error after it
        # is what ended the trial.
        FC.WORKER_LOST,
        "a Ray training actor died (elastic training)",
        P_POOL,
        text=(r"Actor status: \d+ alive, [1-9]\d* dead",),
        hint=_POOL_HINT,
        yields_to_plain_error=True,
    ),
    Rule(
        "dask-connect-timeout",
        FC.TIMEOUT,
        "timed out connecting to a peer (Dask)",
        # Below a pool worker's death, which it often follows.
        P_POOL - 1,
        text=(r"\bTimed out trying to connect to '?\w{1,10}://[^'\s]{1,150}'? after [\d.]+ s\b",),
    ),
    # --- any other CUDA error ---------------------------------------------------------------
    Rule(
        "cuda-error",
        FC.CUDA_CONTEXT_CORRUPTED,
        "CUDA error ({code}), assumed sticky",
        P_CUDA_GENERIC,
        text=(
            _CUDA + r" error:\s*(?P<code>[^\n.(`]{1,80}?)\s*(?=$|\.|\(|Search for|"
            r"(?:CUDA|HIP) kernel|Compile with|For debugging|For more detailed)",
            r"cuda runtime error \(\d+\)",
            r"THCudaCheck FAIL",
            _ASYNC_FOOTER,
            r"c10_cuda_check_implementation",
            # (Not a pinned host buffer's OOM: xla-pinned-host-memory.)
            rf"(?<!{HOST_BUFFER_PREFIX})\bCUDA_ERROR_[A-Z_]+",
            r"CUDA failure \d+:",
            r"error == cudaSuccess",
            r"Compile with .?TORCH_USE_(?:CUDA|HIP)_DSA.? to enable device-side assertions",
        ),
        types=(r"(?:torch\.)?AcceleratorError", r"(?:torch\.cuda\.)?CudaError"),
        sticky=True,
        cuda=True,
        cuda_error_type="cuda_error",
        code_type=True,
        hint=_STICKY_HINT,
        confident=False,
    ),
    # --- crash, kill and interruption evidence in the log text ------------------------------
    Rule(
        "text-sigkill",
        FC.HOST_OOM,
        "killed by SIGKILL (most likely the kernel OOM killer)",
        P_TEXT_SIGNAL,
        text=(
            r"exitcode\s*:\s*-9\b",
            r"exits with return code = -9\b",
            r"non-zero exit status -9\b",
            r"worker died \(-9\)",
            r"exit code 137\b",
            r"interrupted by signal 9\b",
            r"terminated by signal 9\b",
            r"Signals\.SIGKILL",
            r"terminated with signal SIGKILL",
            r"Signal 9 \(SIGKILL\)",
            r"signal: killed\b",
            # Prose ("it was killed by the OOM killer") is weak evidence: Ray, for one, lists
            # the OOM killer among the *possible* causes of any worker death.
            r"killed by (?:the )?OOM[- ]?killer",
            r"^[^\S\n]*[*_`]*Killed[*_`]*\s*$",
            r"\]\s*Killed\s*$",
            r"^\s*已杀死\s*$",
        ),
        hint=_OOM_KILLER_HINT,
    ),
    Rule(
        "signal-handler-stop",
        FC.INTERRUPTED,
        "stopped by a signal from outside (reported by a signal handler)",
        # abseil's failure signal handler (Ray, TensorFlow, gRPC) and glog's print the signal
        # they caught, then the process dies, often as "Aborted": at the crash rules' priority,
        # after text-sigkill and before text-crash in the table. Ray and torchrun print it in
        # every process they shut down after a real failure, so it yields to a plain error.
        P_TEXT_SIGNAL,
        text=(
            r"\*\*\* SIG(?:TERM|INT|HUP) received at time=\d+",
            r"\*\*\* SIG(?:TERM|INT|HUP) \(@0x[0-9a-f]+\) received by PID \d+",
            # Paddle's signal handler.
            r"\bTermination signal is detected by the operating system\b",
        ),
        hint=_INTERRUPT_HINT,
        yields_to_plain_error=True,
    ),
    Rule(
        "abort-exception-not-rethrown",
        FC.SEGFAULT,
        "aborted at exit: a thread's forced unwind was caught and not rethrown",
        # glibc aborts with "FATAL: exception not rethrown" when a C++ ``catch (...)`` swallows
        # the unwind of a thread cancelled at interpreter exit: the process was already ending,
        # so a Python error named before it is the failure. Before text-crash (the "Aborted") in
        # the table, at its priority (not above the kill and stop lines at the same priority).
        P_TEXT_SIGNAL,
        text=(r"^FATAL: exception not rethrown[ \t]*$",),
        hint=_SEGV_HINT,
        yields_to_plain_error=True,
    ),
    Rule(
        "gloo-peer-lost",
        FC.NCCL,
        "Gloo lost (or could not reach) its peer",
        # Gloo's TCP (and, on Windows and macOS, libuv) transport losing its peer
        # ("[.../gloo/transport/tcp/pair.cc:534] Connection closed by peer"; "Read error ...:
        # Connection reset by peer"). A consequence: below anything that names why the peer went
        # (a Gloo timeout, a signal, a crash, a Ctrl-C) and yielding to a plain Python error.
        P_WRAPPER + 1,
        yields_to_plain_error=True,
        text=(
            # (A full-mesh connect that timed out is a timeout: distributed-store-timeout.)
            r"\bGloo connectFullMesh failed with (?![^\n]{0,300}(?:[Tt]imeout|timed out))",
            r"gloo[/\\]transport[/\\](?:tcp|uv)[/\\]pair\.cc:\d+\] (?:Connection closed by peer|Read error|"
            r"Write error|Connection reset by peer)",
            # Its connect to a peer that is not (or no longer) listening.
            r"gloo[/\\]transport[/\\](?:tcp|uv)[/\\]pair\.cc:\d+\] connect \[[^\]\n]{1,100}\]:\d+: "
            r"(?:Connection refused|No route to host)",
        ),
        hint="A peer rank went away mid-collective: its own log names why (a crash, an OOM, a "
        "timeout); the trial is retried.",
    ),
    Rule(
        "gloo-connect-timeout",
        FC.TIMEOUT,
        "Gloo timed out connecting to its peer",
        # As gloo-peer-lost, its refused and unreachable forms: a consequence of whatever kept
        # the peer away, yielding to a plain Python error.
        P_WRAPPER + 1,
        yields_to_plain_error=True,
        text=(
            r"gloo[/\\]transport[/\\](?:tcp|uv)[/\\]pair\.cc:\d+\] connect \[[^\]\n]{1,100}\]:\d+: "
            r"Connection timed out",
        ),
        hint="A peer rank never answered: its own log names why (it crashed, hung, or is not "
        "reachable on that interface: GLOO_SOCKET_IFNAME).",
    ),
    Rule(
        "slurm-node-failed",
        FC.WORKER_LOST,
        "Slurm lost a node of the job's allocation",
        P_POOL,
        text=(
            r"CANCELLED AT \S+ DUE TO NODE FAIL(?:URE)?\b",
            r"^s(?:alloc|run|batch): error: Node failure on \S+",
        ),
        hint="A node of the allocation failed (hardware, network or its daemon): the trial is "
        "retried; if one node keeps failing, exclude it (sbatch --exclude) and tell the "
        "cluster's admins.",
    ),
    # Slurm's accounting of how the job ended: seff's "State:" line, a sacct row (states in
    # upper case; sacct cuts a long one to nine characters and a "+"). A summary written after
    # the job, so weak: below anything the job printed and yielding to a plain Python error (a
    # job script may scancel itself after a step's ValueError; OUT_OF_MEMORY counts any
    # OOM-killed process of the job).
    *(
        Rule(
            f"slurm-accounting-{name}",
            failure_class,
            f"Slurm's accounting says the job ended {summary}",
            P_TEXT_SIGNAL,
            yields_to_plain_error=True,
            # One cue per state, so that each has the state as its literal anchor.
            text=tuple(
                cue
                for state, row_state in states
                for cue in (
                    rf"(?-i:^State: {state}\b)",
                    rf"{_SACCT_ROW}(?-i:{row_state}){_SACCT_END}",
                )
            ),
            hint=hint,
        )
        for name, failure_class, summary, states, hint in (
            (
                "timeout",
                FC.TIMEOUT,
                "at its time limit (TIMEOUT)",
                (("TIMEOUT", "TIMEOUT"),),
                "The job ran past its time limit: raise the limit (sbatch --time) or make trials "
                "cheaper.",
            ),
            (
                "oom",
                FC.HOST_OOM,
                "out of memory (OUT_OF_MEMORY)",
                (("OUT_OF_MEMORY", "OUT_OF_ME(?:MORY|\\+)"),),
                _OOM_KILLER_HINT,
            ),
            (
                "cancelled",
                FC.INTERRUPTED,
                "cancelled or preempted",
                (("CANCELLED", "CANCELLED(?: by \\d+|\\+)?"), ("PREEMPTED", "PREEMPTED")),
                _INTERRUPT_HINT,
            ),
            (
                "node-fail",
                FC.WORKER_LOST,
                "with a node failure (NODE_FAIL)",
                (("NODE_FAIL", "NODE_FAIL"),),
                "A node of the allocation failed: the trial is retried.",
            ),
        )
    ),
    Rule(
        "vllm-engine-dead",
        FC.WORKER_LOST,
        "vLLM's engine core process died",
        # The API server's (or LLM's) report that the engine core process is gone. A
        # consequence: below whatever the engine core printed above it (an OOM, a CUDA fault,
        # the signal that stopped it) and yielding to a plain Python error.
        P_WRAPPER + 1,
        yields_to_plain_error=True,
        text=(
            r"\bEngineDeadError: EngineCore encountered an issue\b",
            # vLLM V0's engine loop.
            r"\bAsyncEngineDeadError: Background loop has errored already\b",
        ),
        types=(r"(?:vllm\.[\w.]+\.)?(?:Async)?EngineDeadError",),
        hint="vLLM's engine process died without saying why above this line: read the engine "
        "core's log (its own traceback, an OOM, a signal); the trial is retried.",
    ),
    Rule(
        "ray-node-preempted",
        FC.INTERRUPTED,
        "the worker's node was preempted",
        # Above the pool's report of the actor's death, which names this as its cause.
        P_POOL + 1,
        text=(r"\b(?:actor's|task's|worker's) node was preempted\b",),
        hint=_INTERRUPT_HINT,
    ),
    Rule(
        "lightgbm-fatal",
        FC.USER_ERROR,
        "LightGBM stopped on a fatal check",
        # A named cause: above the C++ terminate and abort that follow it (text-crash).
        P_TEXT_SIGNAL + 1,
        # (Its "[Fatal] [CUDA] out of memory" is the OOM rule's, which outranks this one.)
        text=(r"^\[LightGBM\] \[Fatal\] ",),
        yields_to_plain_error=True,
    ),
    Rule(
        "text-crash",
        FC.SEGFAULT,
        "native crash ({code})",
        P_TEXT_SIGNAL,
        text=(
            r"(?P<code>Segmentation fault)",
            r"received signal (?P<code>SIG(?:SEGV|BUS|ILL|FPE|ABRT))",
            r"terminated with signal (?P<code>SIG(?:SEGV|BUS|ILL|FPE|ABRT|IOT))",
            r"Received signal: (?P<code>SIG(?:SEGV|BUS|ILL|FPE|ABRT|IOT))",
            r"\*\*\* (?P<code>SIG(?:SEGV|BUS|ILL|FPE|ABRT)) ",
            r"Signal (?:11|7|6|4|8) \((?P<code>SIG\w+)\) received by PID",
            # srun naming a task's crash ("srun: error: cgpu09: task 0: Aborted"); Open MPI's
            # report of the signal ("[cgpu09:43722] Signal: Aborted (6)").
            r"^srun: error: \S+: tasks? [\d,-]+: (?P<codesrun>Aborted|Segmentation fault|Bus error|"
            r"Illegal instruction)$",
            r"\] Signal: (?:Aborted|Segmentation fault|Bus error|Illegal instruction) \((?:6|11|7|4)\)$",
            r"exitcode\s*:\s*-(?:11|7|6|4|8)\b",
            r"exits with return code = -(?:11|7|6|4|8)\b",
            r"non-zero exit status -(?:11|7|6|4|8)\b",
            # Windows NTSTATUS exit codes: access violation, stack buffer overrun (abort),
            # stack overflow, illegal instruction; unsigned and signed spellings.
            r"exit (?:code|status) (?:3221225477|3221226505|3221225725|3221225501)\b",
            r"exit code -(?:1073741819|1073740791|1073741571|1073741795)\b",
            r"exit code 0xC00000(?:05|FD|1D)\b",
            r"exit code 0xC0000409\b",
            r"exit code 1(?:39|35|34|32|36)\b",
            # Julia's crash report ("signal (6): Aborted" then "in expression starting at").
            r"^signal \((?:4|6|7|8|11)\): (?:Aborted|Segmentation fault|Bus error|Illegal instruction"
            r"|Floating point exception)\b",
            # subprocess's CalledProcessError for a child shell's 128 + SIGSEGV.
            r"returned non-zero exit status 139\b",
            # The signal named by the IDE ("exit code 138 (interrupted by signal 10: SIGBUS)",
            # macOS numbering) and zsh's job line ("[1]    4939 bus error  python x.py").
            r"interrupted by signal \d+: (?P<code>SIG(?:SEGV|BUS|ILL|FPE|ABRT))",
            # One cue per crash, so that each has a literal anchor.
            *(
                rf"^(?:zsh: |\[\d+\]\s+\d+ )(?P<code>{crash})\s"
                for crash in ("bus error", "illegal hardware instruction", "abort")
            ),
            r"<Signals\.(?P<code>SIG(?:SEGV|BUS|ILL|FPE|ABRT)): \d+>",
            # Not interpreter set-up or shutdown ("init_fs_encoding: failed to get the Python
            # codec", "_enter_buffered_busy: could not acquire lock ... at interpreter shutdown").
            r"Fatal Python error: (?!_enter_buffered_busy|init_|_?Py_Initialize|_PyImport)\w+: ",
            r"0xC0000005: Access violation",
            r"^Exception Code: 0xC0000005\b",
            r"\bOSError: exception: access violation (?:reading|writing) 0x[0-9A-F]+",
            r"\bdied with status 0xC0000005 \(ACCESS_VIOLATION\)",
            r"\bucrtbase!abort\b",
            r"Fatal Python error: (?P<code>Aborted|Bus error|Illegal instruction"
            r"|Floating point exception)",
            r"(?P<code>Aborted|Bus error|Illegal instruction|Floating point exception)"
            r"\s*\(core dumped\)",
            r"terminated by signal (?:11|7|6|4|8)\b",
            # Prose that names only the core dump ("I got an error like 'core dumped'").
            r"\bcore dumped\b",
            r"terminate called (?:after throwing an instance of|recursively"
            r"|without an active exception)",
            r"double free or corruption",
            r"free\(\): invalid",
            r"malloc\(\): [a-z ]*corrupt",
            r"corrupted size vs\. prev_size",
            r"AddressSanitizer: (?P<code>SEGV) on unknown address",
            # A C/C++ assert() failing; abort() follows. (A CUDA kernel's assert, in a .cu file,
            # is the sticky device-side assert.)
            r"\bAssertion `[^\n`']{1,300}' failed\.",
            # The kernel's log of a process's fatal trap (dmesg, journalctl): an illegal
            # instruction, a divide error, a general protection fault, a segfault.
            r"\btraps: \S+\[\d+\] (?:trap (?:invalid opcode|divide error)|general protection)\b",
            r"\]: segfault at [0-9a-f]+ ip [0-9a-f]+ sp [0-9a-f]+ error \d+",
        ),
        hint=_SEGV_HINT,
    ),
    Rule(
        "faulthandler-access-violation",
        FC.SEGFAULT,
        "access violation reported by faulthandler (Windows)",
        P_TEXT_SIGNAL,
        # faulthandler on Windows also reports access violations that were then handled
        # (cpython#74311), so a Python error named in the same text decides.
        text=(r"fatal exception: access violation",),
        hint=_SEGV_HINT,
        yields_to_plain_error=True,
    ),
    Rule(
        "text-interrupted",
        FC.INTERRUPTED,
        "stopped by a signal from outside",
        P_TEXT_SIGNAL,
        text=(
            r"Received (?:1|2|15) death signal",
            r"Received (?:Signals\.)?SIG(?:HUP|TERM|INT) death signal",
            r"\bKeyboard Interrupt\b",
            # A cloud VM being preempted.
            r"Experiment has been interrupted",
            r"\btermination is imminent\b",
            r"Spot interruption",
            r"\bHost EC2 (?:\(instance [\w-]+\) )?terminated\b",
            r"^ERROR: InterruptException:",
            r"^InterruptException\(\)[ \t]*$",
            # W&B's sweep agent told by its controller to stop the run.
            r"\bwandb_agent - INFO - Agent received command: stop\b",
            # DeepSpeed's runner.py installs sigkill_handler for SIGINT and SIGTERM only (the
            # per-node launch.py's handler also runs when a rank dies: child-failed).
            r"deepspeed[/\\]launcher[/\\]runner\.py\", line \d+, in sigkill_handler\b",
            r"Instance is going to be interrupted",
            r"was requested to terminate",
            # torchelastic forwarding the SIGHUP it received to its workers.
            r"closing signal SIGHUP",
            r"got signal: (?:1|2|15)\b",
            r"exitcode\s*:\s*-(?:1|2|15)\b",
            r"exit code 1(?:30|43|29)\b",
            r"interrupted by signal (?:1|2|15)\b",
            r"terminated by signal (?:1|2|15)\b",
            r"terminated with signal SIG(?:TERM|INT|HUP)\b",
            r"CANCELLED AT \S+ DUE TO PREEMPTION",
            r"CANCELLED AT \S+ DUE TO JOB REQUEUE",
            r"(?<!if )\bthis job is preempted\b",
            r"^\W*job preempted\b",
            r"Simulating preemption by raising a SIGTERM",
            r"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT \S+ \*\*\*",
            r"Main process received SIG(?:INT|TERM|HUP), exiting",
            r"\b(?:received|caught|got) (?:signal )?SIG(?:TERM|INT|HUP)\b",
            r"Signal (?:15|2|1) \(SIG(?:TERM|INT|HUP)\) received by PID",
            r"forrtl: error \(200\): program aborting due to control-C event",
            # NVIDIA DIGITS: the user aborted the job from the UI.
            r"\] \[INFO \] Job aborted\.[ \t]*$",
        ),
        types=(r"(?:torch\.distributed\.elastic\.multiprocessing\.api\.)?SignalException",),
        hint=_INTERRUPT_HINT,
    ),
    # --- the signal the worker died of ------------------------------------------------------
    Rule(
        "signal-sigkill",
        FC.HOST_OOM,
        "killed by SIGKILL with no other evidence (most likely the kernel OOM killer)",
        P_SIGNAL,
        signals=("SIGKILL",),
        hint=_OOM_KILLER_HINT,
    ),
    Rule(
        "signal-crash",
        FC.SEGFAULT,
        "native crash ({code})",
        P_SIGNAL,
        signals=("SIGSEGV", "SIGBUS", "SIGABRT", "SIGILL", "SIGFPE", "SIGSYS", "SIGTRAP"),
        hint=_SEGV_HINT,
    ),
    Rule(
        "signal-interrupted",
        FC.INTERRUPTED,
        "stopped by {code}",
        P_SIGNAL,
        signals=("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"),
        hint=_INTERRUPT_HINT,
    ),
    Rule(
        "signal-cpu-limit",
        FC.TIMEOUT,
        "CPU time limit exceeded ({code})",
        P_SIGNAL,
        signals=("SIGXCPU",),
    ),
    # --- wrappers that only say a child failed -----------------------------------------------
    Rule(
        "child-failed",
        FC.WORKER_LOST,
        "a child process failed without an error report",
        P_WRAPPER,
        text=(
            r"ProcessExitedException: process \d+ terminated with exit code",
            r"process \d+ terminated with exit code [1-9]\d*",
            r"failed \(exitcode: [1-9]\d*\) local_rank:",
            r"exitcode\s*: [1-9]\d* \(pid:",
            r"returned non-zero exit status [1-9]\d*",
            r"exits with return code = [1-9]\d*",
            r"(?:mpiexec|mpirun|Horovod) detected that one or more processes exited with non-zero"
            r" status",
            r"Primary job\s+terminated normally, but \d+ process(?:es)? returned",
            r"sigkill_handler\] Killing subprocess",
            r"CHILD PROCESS FAILED WITH NO ERROR_FILE",
            # torchelastic's event log (torch < 1.9): a worker's FAILED status.
            r'"name": "torchelastic\.worker\.status\.FAILED"',
            r"^srun: error: \S+: tasks? [\d,-]+: Exited with exit code [1-9]\d*",
            r"Process exited with code: [1-9]\d*",
            r"Exception from container-launch\.[^\n]*\n(?:[^\n]*\n){0,2}\s*Exit code: [1-9]\d*",
            r"^Process \d+ exit with status code [1-9]\d*",
            # Quoted in prose the type's case is not kept (``childFailedError``).
            r"\bChildFailedError\b",
        ),
        types=(
            r"(?:torch\.distributed\.elastic\.multiprocessing\.errors\.)?ChildFailedError",
            r"(?:torch\.multiprocessing\.spawn\.)?ProcessExitedException",
        ),
        yields_to_plain_error=True,
    ),
    Rule(
        "slurm-step-killed-after-task",
        FC.WORKER_LOST,
        "srun ended the job step because one of its tasks exited",
        # Above the crash, kill and cancel lines that follow it (srun's "Killed" tasks and
        # slurmstepd's "STEP ... CANCELLED", which scancel also prints), and yielding to a plain
        # Python error from the task that exited.
        P_TEXT_SIGNAL + 1,
        text=(
            # (The three lines after its anchor hold the rest: every cue must fit the lines around
            # its anchor, tests/test_failures.py.)
            r"^srun: error: \S+: tasks? [\d,-]+: Exited with exit code [1-9]\d*\n(?:[^\n]*\n)??"
            r"[^\n]*\bTerminating StepId=\S+\n(?:[^\n]*\n)??[^\n]*\*\*\* STEP \S+ ON \S+ "
            r"CANCELLED AT ",
        ),
        yields_to_plain_error=True,
    ),
)


# --- CUDA and NCCL error codes (hpo.failures.codes) ------------------------------------------
# A code found in the evidence competes with the rules at the priority of its class; it wins
# ties, so a code beats the text rules of its own class but not stronger evidence of another.
CODE_PRIORITY: Mapping[FailureClass, int] = MappingProxyType(
    {
        FC.CUDA_CONTEXT_CORRUPTED: P_STICKY,
        FC.TIMEOUT: P_ROOT,
        FC.DEVICE_UNAVAILABLE: P_DEVICE,
        FC.OOM: P_MEMORY,
        FC.USER_ERROR: P_SPECIFIC,
        FC.NCCL: P_NCCL,
    }
)
P_CODE_HARDWARE = P_ROOT
P_CODE_NCCL_STICKY = P_STICKY + 1  # NCCL reporting a sticky CUDA failure, as the rule above
P_CODE_NCCL_TIMEOUT = P_NCCL_TIMEOUT
# cudaErrorInvalidValue says little; any specific evidence elsewhere in the text wins.
P_CODE_UNCERTAIN = P_CUDA_GENERIC + 1
UNCERTAIN_TOKENS = frozenset({"invalid_argument"})

_CODE_HINTS: Mapping[str, str] = MappingProxyType(
    {
        "device_side_assert": _DSA_HINT,
        "ecc_uncorrectable": _HARDWARE_HINT,
        "nvlink_uncorrectable": _HARDWARE_HINT,
        "contained": _HARDWARE_HINT,
        "launch_timeout": _LAUNCH_TIMEOUT_HINT,
        "initialization_error": _FORK_HINT,
        "not_supported": _PLATFORM_HINT,
        "not_permitted": _PLATFORM_HINT,
        "out_of_memory": OOM_HINT,
        "no_kernel_image": (
            "The torch build (or a CUDA extension) has no kernels for this GPU architecture: "
            "install a build whose CUDA version and arch list cover the GPU (`hpo doctor` "
            "shows both); every trial on this GPU will fail the same way."
        ),
    }
)


def code_hint(token: str, failure_class: FailureClass) -> str | None:
    """The hint for a diagnosis made from an error code (``None``: the class's default)."""
    if token in _CODE_HINTS:
        return _CODE_HINTS[token]
    if failure_class is FC.USER_ERROR:
        return _MISUSE_HINT
    if failure_class is FC.CUDA_CONTEXT_CORRUPTED:
        return _STICKY_HINT
    return None


@dataclass(frozen=True)
class Evidence:
    """What the engine looks at: capped text, exception type names and the signal name.

    ``folded`` is ``text.casefold()`` for the anchor prefilter; computed when not given.
    """

    text: str
    types: tuple[str, ...] = ()
    signal: str | None = None
    folded: str | None = None


@dataclass(frozen=True)
class Match:
    """The winning rule and the ``code`` its text cue captured, if any."""

    rule: Rule
    code: str | None = None


class _Part(NamedTuple):
    anchor: str | None
    word: str | None
    pattern: re.Pattern[str]
    # The cue treats every ASCII digit alike (see _digit_blind): windows that differ only in
    # their digits (a step counter on each line) give it the same result.
    digit_blind: bool = False


@dataclass(frozen=True)
class _CompiledRule:
    rule: Rule
    text: re.Pattern[str] | None
    code: re.Pattern[str] | None  # the text cues that capture ``code``, searched after a match
    types: re.Pattern[str] | None
    signals: frozenset[str]
    # Case-folded literals, one of which every text match contains; () = no prefilter.
    anchors: tuple[str, ...]
    # Each text cue on its own with its anchor (None: no anchor, always searched) and its
    # anchor's word (see _word_of): with a prefilter only the cues whose word and anchor occur
    # are searched, one short regex at a time.
    parts: tuple[_Part, ...] = ()


_FLAGS = re.IGNORECASE | re.MULTILINE
_CODE_GROUP = "(?P<code>"
_MIN_ANCHOR = 3
_RARE_CHARS = "^`~"
_SPECIAL = set(".^$*+?{}[]|()")
_QUANTIFIERS = set("*+?{")


def _skip_class(pattern: str, index: int) -> int:
    """Index after the character class that starts at ``pattern[index] == "["``."""
    index += 1
    if index < len(pattern) and pattern[index] == "^":
        index += 1
    if index < len(pattern) and pattern[index] == "]":
        index += 1
    while index < len(pattern) and pattern[index] != "]":
        index += 2 if pattern[index] == "\\" else 1
    return index + 1


def _group_end(pattern: str, index: int) -> tuple[int, bool]:
    """For the group opening at ``index``: the index of its ``)`` and whether it alternates."""
    depth, alternates = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            index = _skip_class(pattern, index)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index, alternates
        elif char == "|" and depth == 1:
            alternates = True
        index += 1
    return len(pattern), True


def _is_plain(pattern: str) -> bool:
    """True if ``pattern`` is only literal characters (plain or escaped punctuation)."""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            if index + 1 >= len(pattern) or pattern[index + 1].isalnum():
                return False
            index += 2
            continue
        if char in _SPECIAL:
            return False
        index += 1
    return True


def _mandatory_runs(pattern: str) -> list[str] | None:
    """Literal runs every match of ``pattern`` contains (``None``: top-level alternation)."""
    runs: list[str] = []
    run: list[str] = []

    def close() -> None:
        if run:
            runs.append("".join(run))
            run.clear()

    index = 0
    while index < len(pattern):
        char = pattern[index]
        literal: str | None = None
        if char == "\\" and index + 1 < len(pattern):
            escaped = pattern[index + 1]
            index += 2
            if escaped.isalnum():
                close()  # \d, \s, \b, \n...: not a literal character
                continue
            literal = escaped
        elif char == "[":
            close()
            index = _skip_class(pattern, index)
            continue
        elif char == "{":
            close()
            index = pattern.find("}", index) + 1 or len(pattern)
            continue
        elif char == "(":
            end, alternates = _group_end(pattern, index)
            body = pattern[index + 1 : end]
            quantified = end + 1 < len(pattern) and pattern[end + 1] in _QUANTIFIERS
            prefix = re.match(r"\?(?:P<\w+>|[:>]|-?[aiLmsux]*-?[imsx]*:)?", body)
            # A backreference ("(?P=name)") or a conditional group matches text unknown here.
            lookaround = body.startswith(("?=", "?!", "?<=", "?<!", "?#", "?P=", "?("))
            if alternates or quantified or lookaround or prefix is None:
                close()
            else:
                content = body[prefix.end() :]
                inner = _mandatory_runs(content)
                if inner is not None and _is_plain(content):
                    run.extend(inner[0] if inner else "")  # a literal group continues the run
                else:
                    close()
                    runs.extend(inner or [])
            index = end + 1
            if quantified:
                index += 1
            continue
        elif char == "|":
            return None
        elif char in _SPECIAL:
            close()
            index += 1
            continue
        else:
            literal = char
            index += 1
        if index < len(pattern) and pattern[index] in _QUANTIFIERS:
            close()  # the character before a quantifier is optional or repeated
            continue
        run.append(literal)
    close()
    return runs


def literal_anchor(pattern: str) -> str | None:
    """The longest literal every match of ``pattern`` contains (case-folded), or ``None``.

    Conservative: characters before a quantifier, character classes, lookarounds,
    quantified or alternating groups break literal runs; a top-level alternation gives
    ``None``. The engine uses anchors to skip regexes whose text cannot match (``in`` on the
    case-folded text is much faster than a case-insensitive regex scan).
    """
    runs = _mandatory_runs(pattern)
    best = max(runs or [], key=len, default="")
    # Two characters do when one is rare in tracebacks (the terminal's "^C").
    rare = len(best.strip()) == 2 and any(ch in best for ch in _RARE_CHARS)
    return best.casefold() if len(best.strip()) >= _MIN_ANCHOR or rare else None


def _word_of(anchor: str | None) -> str | None:
    """The longest whitespace-delimited word inside ``anchor`` (whitespace on both sides of it
    within the anchor), or ``None``.

    Wherever the anchor occurs, that word is one of the text's ``split()`` words, so a set
    lookup rejects most cues without scanning the text for the anchor (``str.find`` over 12 KB,
    hundreds of times per text, was most of ``classify``'s time).
    """
    if anchor is None:
        return None
    words = [
        m.group() for m in re.finditer(r"\S+", anchor) if m.start() > 0 and m.end() < len(anchor)
    ]
    return max(words, key=len) if words else None


def _join(patterns: tuple[str, ...]) -> str:
    # Several cues may capture ``code``; Python forbids repeated group names, so number them.
    parts = []
    for index, pattern in enumerate(patterns):
        parts.append("(?:" + pattern.replace(_CODE_GROUP, f"(?P<code{index}>") + ")")
    return "|".join(parts)


_DIGITS = range(ord("0"), ord("9") + 1)


def _digit_blind(pattern: str) -> bool:
    """Whether ``pattern`` matches the same spans in two texts that differ only in which ASCII
    digits they hold (digit for digit, so lengths are kept).

    True when nothing in it tells one digit from another: no digit literal (``1(?:30|43)``), no
    class holding some digits and not others (``[1-9]``), no back-reference (a number repeated,
    ``(?P=literal)``), and no ``code`` group, whose text is read. ``\\d``, ``\\w``, ``.``,
    ``[^\\n]``, ``\\b`` and quantifier bounds treat every digit alike. Anything the parser
    gives that is not known here counts as not blind, as does a pattern it cannot parse.
    """
    if _CODE_GROUP in pattern:
        return False
    try:
        return _blind(_sre_parser.parse(pattern, _FLAGS))
    except Exception:  # an internal parser that changed: fall back to exact windows
        return False


def _blind(items: Any) -> bool:
    c = _sre_constants
    for op, av in items:
        if op in (c.LITERAL, c.NOT_LITERAL):
            if av in _DIGITS:
                return False
        elif op is c.IN:
            for item_op, item_av in av:
                if item_op in (c.LITERAL, c.NOT_LITERAL) and item_av in _DIGITS:
                    return False
                if item_op is c.RANGE:
                    low, high = item_av
                    if (
                        low <= _DIGITS[-1]
                        and high >= _DIGITS[0]
                        and not (low <= _DIGITS[0] and high >= _DIGITS[-1])
                    ):
                        return False
                elif item_op not in (c.LITERAL, c.NOT_LITERAL, c.NEGATE, c.CATEGORY):
                    return False
        elif op is c.SUBPATTERN:
            if not _blind(av[-1]):
                return False
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) or op is getattr(c, "POSSESSIVE_REPEAT", None):
            if not _blind(av[2]):
                return False
        elif op is c.BRANCH:
            if not all(_blind(branch) for branch in av[1]):
                return False
        elif op in (c.ASSERT, c.ASSERT_NOT):
            if not _blind(av[1]):
                return False
        elif op is getattr(c, "ATOMIC_GROUP", None):
            if not _blind(av):
                return False
        elif op not in (c.ANY, c.AT, c.CATEGORY):
            return False  # back-references, conditionals, anything unknown
    return True


def _parser_reads_digits() -> bool:
    """Whether _digit_blind reads this Python's regex parser right (a parser whose shapes
    changed without raising would mark cues blind wrongly; then no cue is)."""
    try:
        return all(_digit_blind(p) for p in (r"\d+", "[0-9]", r"[^\n]{0,30}", r"\w\b")) and not any(
            _digit_blind(p) for p in ("1", "[1-9]", "[^5]", r"(a)\1", "(a)?(?(1)b|c)", "x{3}1")
        )
    except Exception:
        return False


def _compile(rule: Rule) -> _CompiledRule:
    text = re.compile(_join(rule.text), _FLAGS) if rule.text else None
    with_code = tuple(p for p in rule.text if _CODE_GROUP in p)
    code = re.compile(_join(with_code), _FLAGS) if with_code else None
    types = re.compile(_join(rule.types)) if rule.types else None
    anchors = tuple(literal_anchor(p) for p in rule.text)
    usable = tuple(a for a in anchors if a is not None)
    parts = tuple(
        _Part(a, _word_of(a), re.compile(p, _FLAGS), _PARSER_READS_DIGITS and _digit_blind(p))
        for a, p in zip(anchors, rule.text, strict=True)
    )
    return _CompiledRule(
        rule, text, code, types, frozenset(rule.signals), usable if usable else (), parts
    )


_PARSER_READS_DIGITS = _parser_reads_digits()
# Highest priority first; sorted() is stable, so the table order breaks ties.
_COMPILED: tuple[_CompiledRule, ...] = tuple(
    _compile(rule) for rule in sorted(RULES, key=lambda r: -r.priority)
)


def _code_of(match: re.Match[str]) -> str | None:
    for name, value in match.groupdict().items():
        if name.startswith("code") and value:
            return value
    return None


@dataclass
class _Windows:
    """What the cues' window searches share within one text; windows are (occurrence, low,
    high)."""

    # Per anchor: the windows of its first _MAX_WINDOWS + 1 occurrences (_first_windows).
    first: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)
    # Per (anchor, digit_blind), for an anchor on more than _MAX_WINDOWS lines: the windows
    # with distinct contents (_distinct_windows); for digit-blind cues, windows that differ
    # only in their digits count as one.
    distinct: dict[tuple[str, bool], list[tuple[int, int, int]]] = field(default_factory=dict)
    # Shared by every anchor: the newlines' positions, and each window's text as compared.
    newlines: list[int] | None = None
    texts: dict[tuple[int, int, bool], str] = field(default_factory=dict)


def _search_parts(
    parts: tuple[_Part, ...],
    text: str,
    folded: str,
    words: frozenset[str],
    windows: _Windows | None = None,
) -> re.Match[str] | None:
    """The match of the first cue (in table order) that occurs in ``text``; ``words`` is
    ``frozenset(folded.split())``."""
    aligned = len(folded) == len(text)
    for anchor, word, pattern, digit_blind in parts:
        if word is not None and word not in words:
            continue
        if anchor is None:
            found = pattern.search(text)
        elif aligned:
            found = _search_near(anchor, pattern, text, folded, windows, digit_blind)
        else:
            found = pattern.search(text) if anchor in folded else None
        if found is not None:
            return found
    return None


def _code_of_parts(
    parts: tuple[_Part, ...],
    text: str,
    folded: str,
    words: frozenset[str],
    windows: _Windows | None = None,
) -> str | None:
    """The ``code`` of the leftmost match among the cues that capture one."""
    best: re.Match[str] | None = None
    for part in parts:
        if _CODE_GROUP not in part.pattern.pattern:
            continue
        found = _search_parts((part,), text, folded, words, windows)
        if found is not None and (best is None or found.start() < best.start()):
            best = found
    return _code_of(best) if best is not None else None


_WINDOW_LINES = 3  # a cue's match lies within this many lines around its anchor
_MAX_WINDOWS = 8
_MAX_DISTINCT = 24  # distinct windows searched before one scan of the rest of the text
# Lookbehinds in the cues see at most this many characters before a window (the widest is 30;
# tests/test_failures.py checks the bound); two windows with the same text from here on give
# every cue the same result.
_LOOKBEHIND = 80


def _window(anchor: str, text: str, index: int) -> tuple[int, int]:
    """The lines around the occurrence of ``anchor`` at ``index``: (start, end)."""
    low = index
    for _ in range(_WINDOW_LINES + 1):
        low = text.rfind("\n", 0, low)
        if low < 0:
            break
    low = low + 1 if low >= 0 else 0
    high = index + len(anchor)
    for _ in range(_WINDOW_LINES + 1):
        high = text.find("\n", high + 1)
        if high < 0:
            high = len(text)
            break
    return low, high


_ZERO_DIGITS = str.maketrans("0123456789", "0000000000")
_NEWLINE = re.compile("\n")


def _first_windows(anchor: str, text: str, folded: str) -> list[tuple[int, int, int]]:
    """The windows around the first ``_MAX_WINDOWS`` + 1 occurrences of ``anchor`` (each
    occurrence after the previous window), as (occurrence, low, high)."""
    spans: list[tuple[int, int, int]] = []
    index = folded.find(anchor)
    while index >= 0 and len(spans) <= _MAX_WINDOWS:
        low, high = _window(anchor, text, index)
        spans.append((index, low, high))
        index = folded.find(anchor, max(high, index + 1))
    return spans


def _distinct_windows(
    anchor: str,
    text: str,
    folded: str,
    digit_blind: bool = False,
    windows: _Windows | None = None,
) -> list[tuple[int, int, int]]:
    """Every window around ``anchor`` as (occurrence, low, high), in order, skipping the
    windows whose text (with what a lookbehind can see before it) an earlier one had; with
    ``digit_blind``, whose text an earlier one had but for which digits it holds."""
    seen: set[tuple[int, str]] = set()
    spans: list[tuple[int, int, int]] = []
    # _window's bounds from the newlines' positions, found once (bisect instead of a scan per
    # occurrence): low is just after the (_WINDOW_LINES + 1)th newline before the occurrence,
    # high the (_WINDOW_LINES + 1)th newline after the anchor's end, not counting one right at
    # it (tests/test_failures.py checks both give the same windows).
    if windows is None:
        windows = _Windows()
    if windows.newlines is None:
        windows.newlines = [m.start() for m in _NEWLINE.finditer(text)]
    newlines, texts = windows.newlines, windows.texts
    reach = _WINDOW_LINES + 1
    index = folded.find(anchor)
    while index >= 0:
        before = bisect.bisect_left(newlines, index)
        low = newlines[before - reach] + 1 if before >= reach else 0
        after = bisect.bisect_right(newlines, index + len(anchor)) + reach - 1
        high = newlines[after] if after < len(newlines) else len(text)
        start = max(0, low - _LOOKBEHIND)
        seen_text = texts.get((low, high, digit_blind))
        if seen_text is None:
            seen_text = text[start:high]
            if digit_blind:
                seen_text = seen_text.translate(_ZERO_DIGITS)
            texts[low, high, digit_blind] = seen_text
        key = (low - start, seen_text)
        if key not in seen:
            seen.add(key)
            spans.append((index, low, high))
        index = folded.find(anchor, max(high, index + 1))
    return spans


def _search_near(
    anchor: str,
    pattern: re.Pattern[str],
    text: str,
    folded: str,
    windows: _Windows | None = None,
    digit_blind: bool = False,
) -> re.Match[str] | None:
    """The first match of ``pattern`` in the lines around an occurrence of its ``anchor``.

    Every match contains the anchor, so a match is found here iff the whole text has one
    (cues span at most a few lines); much cheaper than a case-insensitive scan of the whole
    text when the anchor is rare. ``text`` and ``folded`` must have the same length.

    Past ``_MAX_WINDOWS`` occurrences (a log that repeats a line), only the windows with text
    not seen before are searched: a repeated window gives the same result as its first copy.
    They are computed once per text and anchor (``windows``) for every cue that shares it.
    For a ``digit_blind`` cue (``_digit_blind``), windows that differ only in their digits (a
    step counter on each line) are the same window: the first of them is where a match would
    be. Past ``_MAX_DISTINCT`` distinct windows, the rest of the text is scanned once.
    """
    if windows is None:
        windows = _Windows()
    first = windows.first.get(anchor)
    if first is None:
        first = windows.first[anchor] = _first_windows(anchor, text, folded)
    for number, (_occurrence, low, high) in enumerate(first):
        if number == _MAX_WINDOWS:
            break
        found = pattern.search(text, low, high)
        if found is not None:
            return found
    else:
        return None
    index = first[_MAX_WINDOWS][0]
    spans = windows.distinct.get((anchor, digit_blind))
    if spans is None:
        spans = windows.distinct[anchor, digit_blind] = _distinct_windows(
            anchor, text, folded, digit_blind, windows
        )
    searched = 0
    for occurrence, low, high in spans:
        if occurrence < index:
            continue  # searched above, or the same text as a window searched above
        searched += 1
        if searched > _MAX_DISTINCT:
            # Windows that differ (a log whose lines carry a step counter): one scan of the
            # rest of the text costs less than a search per window.
            return pattern.search(text, low)
        found = pattern.search(text, low, high)
        if found is not None:
            return found
    return None


def _match_one(
    compiled: _CompiledRule,
    evidence: Evidence,
    folded: str,
    words: frozenset[str],
    windows: _Windows | None = None,
) -> Match | None:
    if evidence.signal is not None and evidence.signal in compiled.signals:
        return Match(compiled.rule, evidence.signal)
    matched = compiled.types is not None and any(
        compiled.types.fullmatch(name) for name in evidence.types
    )
    code: str | None = None
    if not matched and compiled.text is not None and evidence.text:
        if compiled.anchors:
            found_part = _search_parts(compiled.parts, evidence.text, folded, words, windows)
            if found_part is None:
                return None
            # The leftmost cue naming a code gives it, as with one combined regex.
            matched = True
            if compiled.code is not None:
                code = _code_of_parts(compiled.parts, evidence.text, folded, words, windows)
        else:
            found = compiled.text.search(evidence.text)
            if found is None:
                return None
            matched, code = True, _code_of(found)
    if not matched:
        return None
    if code is None and compiled.code is not None and evidence.text:
        # The cue that matched first (or the exception type) may not be the one naming the code.
        if compiled.anchors:
            code = _code_of_parts(compiled.parts, evidence.text, folded, words, windows)
        else:
            with_code = compiled.code.search(evidence.text)
            code = _code_of(with_code) if with_code is not None else None
    return Match(compiled.rule, code)


_COMPILED_BY_ID = {compiled.rule.id: compiled for compiled in _COMPILED}


def match_rule(rule_id: str, evidence: Evidence) -> Match | None:
    """The match of the one rule ``rule_id`` in ``evidence`` (with the code its cue captured),
    or ``None``."""
    folded = evidence.folded if evidence.folded is not None else evidence.text.casefold()
    return _match_one(_COMPILED_BY_ID[rule_id], evidence, folded, frozenset(folded.split()))


def match_rules(evidence: Evidence) -> Match | None:
    """The highest-priority rule whose cues appear in ``evidence``, or ``None``.

    Linear in the text length per rule; rules are tried strongest first and the first match
    wins, so typical failures stop after a few searches.
    """
    folded = evidence.folded if evidence.folded is not None else evidence.text.casefold()
    words = frozenset(folded.split())
    windows = _Windows()
    for compiled in _COMPILED:
        found = _match_one(compiled, evidence, folded, words, windows)
        if found is not None:
            return found
    return None


#: The first allocation under expandable segments on WSL2 fails in the driver API: pytorch#192330
#: (RTX A4000, ``cuMemSetAccess`` returns ``CUDA_ERROR_UNKNOWN``) and noonghunna/club-3090#84
#: (``cuMemMap``'s "device not ready", cured by ``expandable_segments:False``). Not a class of its
#: own: the same text elsewhere is a real failure, and only the context (WSL, expandable
#: segments in effect) makes it the platform's; :func:`hpo.failures.decide` weighs both.
EXPANDABLE_SEGMENTS_FAILURE = re.compile(r"CUDA driver error: (?:unknown error|device not ready)")


def expandable_segments_failure(text: str, *, wsl: bool, expandable: bool | None) -> bool:
    """Whether ``text`` is pytorch#192330: under WSL, with expandable segments in effect, the
    first allocation failed in the driver API (:data:`EXPANDABLE_SEGMENTS_FAILURE`)."""
    return bool(wsl and expandable) and EXPANDABLE_SEGMENTS_FAILURE.search(text) is not None
