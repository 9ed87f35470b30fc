"""Turn what a failed worker left behind into a :class:`~hpo.failures.classes.Diagnosis`.

:func:`classify` reads the exception type, message and traceback (or only a log tail), the
chain of causes, the CUDA error code, the exit status and the signal. CUDA and NCCL error
codes come first: a code (``error_code``, a ``cudaErrorX``/``CUDA_ERROR_X``/``ncclX`` name,
a number in a CUDA error line, or a ``cudaGetErrorString`` text) is looked up in
:mod:`hpo.failures.codes`; then the rules table (:mod:`hpo.failures.rules`) is asked, and the
stronger evidence wins (a code wins ties with the rules of its class). It never raises:
whatever it is given, it returns a diagnosis.

Wrapped errors: the chain of ``__cause__``/``__context__`` (from :func:`exception_chain` in
the worker) and the exception names inside wrappers (``RayTaskError(OutOfMemoryError)``,
``ProcessRaisedException``, a ``_RemoteTraceback``) are evidence like the outer exception, so
what a wrapper wraps is classified, not the wrapper.

How signals and exit codes are read (see also docs/failures.md):

- ``signal`` may be an int (``11``, also negative or a ``signal.Signals``) or a name
  (``"SIGSEGV"``, ``"SEGV"``, ``"Signals.SIGSEGV"``, ``"SIGIOT"`` = ``SIGABRT``); numbers use
  the Linux numbering.
- Without a signal, a negative ``exit_code`` ``-N`` means "killed by signal N" (the
  :mod:`subprocess` convention) and ``128 + N`` (N <= 64) the shell's convention.
- Text evidence beats the bare signal: a SIGABRT whose log says ``NCCL error`` is an NCCL
  failure; a SIGKILL with nothing else is most likely the kernel OOM killer (``host_oom``).
- With no rule matching: an exception type means ``user_error``; an exit without a result
  (``exit_code`` given, or nothing at all) means ``worker_lost``. Unless the exception is a
  plain Python error (``KeyError``, ``TypeError``...), such a diagnosis has
  ``recognised=False`` and its summary starts with ``not recognised:``; so has a diagnosis
  from a catch-all rule (a CUDA error whose code is unknown).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from hpo.failures.classes import (
    CLASS_INFO,
    DEFAULT_POLICY,
    Diagnosis,
    FailureClass,
)
from hpo.failures.codes import (
    CUDA_RUNTIME_ERRORS,
    GENERIC_MESSAGES,
    LIBRARY_STATUSES,
    SPECIFIC_MESSAGES,
    CodeInfo,
    code_by_message,
    code_by_name,
)
from hpo.failures.rules import (
    CODE_PRIORITY,
    HOST_BUFFER_PREFIX,
    NCCL_ERROR_FIRST,
    P_CODE_HARDWARE,
    P_CODE_NCCL_STICKY,
    P_CODE_NCCL_TIMEOUT,
    P_CODE_UNCERTAIN,
    UNCERTAIN_TOKENS,
    Evidence,
    Match,
    code_hint,
    literal_anchor,
    match_rule,
    match_rules,
)

__all__ = [
    "NOT_RECOGNISED",
    "classify",
    "diagnosis_for",
    "exception_chain",
    "exception_error_code",
]

NOT_RECOGNISED = "not recognised"
"""How a summary starts when the evidence was not recognised (``Diagnosis.recognised``)."""

# Only the head and the tail of a huge log are scanned, so classify stays fast on a 10 MB
# tail: the exception message is at the head of what the worker reports, the final error at
# the end of a log.
HEAD_CHARS = 16 * 1024
TAIL_CHARS = 64 * 1024
MAX_SUMMARY = 200

# Linux signal numbers (signal.Signals differs on other platforms; workers run on Linux).
_SIGNAL_NAMES = {
    1: "SIGHUP",
    2: "SIGINT",
    3: "SIGQUIT",
    4: "SIGILL",
    5: "SIGTRAP",
    6: "SIGABRT",
    7: "SIGBUS",
    8: "SIGFPE",
    9: "SIGKILL",
    10: "SIGUSR1",
    11: "SIGSEGV",
    12: "SIGUSR2",
    13: "SIGPIPE",
    14: "SIGALRM",
    15: "SIGTERM",
    16: "SIGSTKFLT",
    17: "SIGCHLD",
    18: "SIGCONT",
    19: "SIGSTOP",
    20: "SIGTSTP",
    21: "SIGTTIN",
    22: "SIGTTOU",
    23: "SIGURG",
    24: "SIGXCPU",
    25: "SIGXFSZ",
    26: "SIGVTALRM",
    27: "SIGPROF",
    28: "SIGWINCH",
    29: "SIGIO",
    30: "SIGPWR",
    31: "SIGSYS",
}
_SIGNAL_NUMBERS = {name: number for number, name in _SIGNAL_NAMES.items()}
_SIGNAL_ALIASES = {"SIGIOT": "SIGABRT", "SIGPOLL": "SIGIO", "SIGCLD": "SIGCHLD"}

# Exception names in a log: find the suffix (a fast literal search), then walk back over the
# dotted name. ``Name:``, ``Name(`` and a bare ``Name`` at the end of a line count.
_TYPE_SUFFIX = re.compile(r"(?:Error|Exception|Interrupt|Exit|Failure)(?=:|\(|[ \t]*$)", re.M)
_TYPE_NAME = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*")
_NAME_BEFORE = re.compile(r"[A-Za-z0-9_.]*")  # matched on the reversed text
_QUALIFIED_NAME = re.compile(r"[A-Za-z_][\w.]*")
# ``RayTaskError(OutOfMemoryError)``, ``TrialError(ValueError)``: the wrapped type counts too.
_WRAPPED_TYPE = re.compile(
    r"(?:Error|Exception)\((?P<inner>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*"
    r"(?:Error|Exception|Interrupt|Exit|Failure))\)"
)
_MAX_TYPES = 32
_MAX_NAME = 200
_MAX_CHAIN = 16
_MAX_CHAIN_MESSAGE = 8 * 1024

# Wrappers that only say something else failed: the fallback summary names what they wrap.
_WRAPPER_TYPE = re.compile(
    r"(?:[\w.]*\.)?(?:ProcessRaisedException|RayTaskError|ChildFailedError|_?RemoteTraceback"
    r"|ExceptionWrapper|CalledProcessError|TrialError)"
)
# Plain Python errors are recognised as bugs in the objective even when no rule names them.
_PLAIN_PYTHON_ERRORS = frozenset(
    {
        "ArithmeticError",
        "AssertionError",
        "AttributeError",
        "EOFError",
        "FileExistsError",
        "FileNotFoundError",
        "FloatingPointError",
        "ImportError",
        "IndexError",
        "IsADirectoryError",
        "KeyError",
        "LookupError",
        "ModuleNotFoundError",
        "NameError",
        "NotADirectoryError",
        "NotImplementedError",
        "OSError",
        "OverflowError",
        "PermissionError",
        "RecursionError",
        "StopIteration",
        "SyntaxError",
        "TypeError",
        "UnboundLocalError",
        "UnicodeDecodeError",
        "UnicodeEncodeError",
        "UnicodeError",
        "ValueError",
        "ZeroDivisionError",
    }
)


# Errors that launchers, pools, torch.distributed and connections raise when a child, a peer or
# a link failed: consequences that say nothing of what the objective did (torch's
# ``RuntimeError`` is also how Horovod and SageMaker report a child's exit status). Matched by
# pattern, case-insensitively (prose writes ``childFailedError``): ``RendezvousConnectionError``,
# ``CommClosedError``, ``ConnectionResetError``, ``RaySystemError`` and their kin.
_CONSEQUENCE_ERROR = re.compile(
    r"(?:Runtime|Load|CalledProcess|ChildFailed|TerminatedWorker|WorkerCrashed|ActorDied"
    r"|Connection\w*|BrokenPipe|\w*Closed|Rendezvous\w*|Ray\w*|Dist\w*|Horovod\w*|\w*Died|\w*Dead"
    r"|\w*Lost|\w*Crashed)Error",
    re.IGNORECASE,
)


def _as_text(value: object, head: int = HEAD_CHARS, tail: int = TAIL_CHARS) -> str:
    """Any value as text, capped to its first ``head`` and last ``tail`` characters.

    Never raises. Bytes are decoded leniently after slicing, so a 10 MB log is never
    decoded whole; ``None`` is empty; other objects use ``str()``.
    """
    try:
        if value is None:
            return ""
        if isinstance(value, (bytes, bytearray, memoryview)):
            raw = bytes(value)
            if len(raw) > head + tail:
                raw = raw[:head] + b"\n...\n" + (raw[-tail:] if tail else b"")
            return raw.decode("utf-8", errors="replace")
        text = value if isinstance(value, str) else str(value)
    except Exception:
        return ""
    if len(text) <= head + tail:
        return text
    return text[:head] + "\n...\n" + (text[-tail:] if tail else "")


def _type_name(value: object) -> str | None:
    """A qualified exception type name from a string, a class or an exception instance."""
    if value is None:
        return None
    if isinstance(value, BaseException):
        value = type(value)
    if isinstance(value, type):
        module = getattr(value, "__module__", "") or ""
        qualname = getattr(value, "__qualname__", "") or getattr(value, "__name__", "")
        return f"{module}.{qualname}" if module and module != "builtins" else str(qualname)
    text = _as_text(value, 1000, 0).strip()
    if text.startswith("<class '") and text.endswith("'>"):
        text = text[8:-2]
    found = _QUALIFIED_NAME.search(text)
    if found is None:
        return None
    return found.group(0).strip(".") or None


def _types_in_text(text: str) -> list[str]:
    """Exception type names that appear as ``Name: message`` (or similar) in a log."""
    names: list[str] = []
    reverse: str | None = None
    for found in _TYPE_SUFFIX.finditer(text):
        start = found.start()
        # The name's characters before the suffix, at most _MAX_NAME: one match on the reversed
        # text instead of a step per character (a log with an error on every line).
        if reverse is None:
            reverse = text[::-1]
        back = len(text) - start
        before = _NAME_BEFORE.match(reverse, back, back + _MAX_NAME)
        if before is not None:
            start -= before.end() - back
        name = text[start : found.end()].lstrip(".")
        # Source lines in a traceback (``raise TimeoutError``, ``except KeyError:``) name types
        # the code handles, not the error it raised.
        if text.endswith(("raise ", "except "), max(0, start - 7), start):
            continue
        if _TYPE_NAME.fullmatch(name) and name not in names:
            names.append(name)
            if len(names) >= _MAX_TYPES:
                return names
    if "(" in text:
        for found in _WRAPPED_TYPE.finditer(text):
            name = found.group("inner")
            if name not in names:
                names.append(name)
                if len(names) >= _MAX_TYPES:
                    break
    return names


def _signal_from_number(number: int) -> str | None:
    number = abs(number)
    if number == 0:
        return None
    return _SIGNAL_NAMES.get(number, f"SIG{number}")


def _signal_name(value: object) -> str | None:
    """Canonical signal name (``SIGSEGV``) from an int, a name or junk (then ``None``)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return _signal_from_number(int(value))
    if isinstance(value, float):
        return _signal_from_number(int(value)) if value.is_integer() else None
    text = _as_text(value, 100, 0).strip().upper()
    if not text:
        return None
    number = re.fullmatch(r"[+-]?\d{1,4}", text)
    if number:
        return _signal_from_number(int(text))
    found = re.search(r"\b(?:SIG)?([A-Z]{2,10})\b", text.rsplit(".", 1)[-1])
    if not found:
        return None
    name = "SIG" + found.group(1) if not found.group(1).startswith("SIG") else found.group(1)
    name = _SIGNAL_ALIASES.get(name, name)
    return name if name in _SIGNAL_NUMBERS else None


def _signal_from_exit_code(exit_code: object) -> str | None:
    if exit_code is None or isinstance(exit_code, bool):
        return None
    try:
        code = exit_code if isinstance(exit_code, int) else int(_as_text(exit_code, 100, 0))
    except (TypeError, ValueError, OverflowError):
        return None
    if code < 0:
        return _signal_from_number(code)
    if 128 < code <= 128 + 64:
        return _signal_from_number(code - 128)
    return None


def _fill(template: str, code: str | None) -> str:
    if "{code}" not in template:
        return template
    if code:
        return template.replace("{code}", " ".join(code.split())[:80])
    return re.sub(r"\s*\(\{code\}\)|:?\s*\{code\}", "", template)


def _slug(code: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", code.lower()).strip("_")
    return slug.replace("_status_", "_")[:48] or "error"


def _diagnosis_from_match(match: Match, error_code: int | None) -> Diagnosis:
    rule = match.rule
    info = CLASS_INFO[rule.failure_class]
    cuda_error_type = rule.cuda_error_type
    if rule.code_type and match.code:
        cuda_error_type = _slug(match.code)
    summary = _fill(rule.summary, match.code)
    if not rule.confident:
        summary = _shorten(f"{NOT_RECOGNISED}: {summary}")
    return Diagnosis(
        failure_class=rule.failure_class,
        action=DEFAULT_POLICY[rule.failure_class],
        sticky=rule.sticky,
        cuda=rule.cuda,
        summary=summary,
        hint=rule.hint or info.hint,
        cuda_error_type=cuda_error_type,
        rule=rule.id,
        error_code=error_code,
        recognised=rule.confident,
    )


# --- error codes ----------------------------------------------------------------------------

# ``cudaErrorIllegalAddress``, ``CUDA_ERROR_LAUNCH_FAILED``, ``hipErrorNoBinaryForGpu``,
# ``ncclRemoteError``: names are exact evidence wherever they appear.
_CODE_NAME = re.compile(
    r"\b(?:cudaError[A-Z][A-Za-z]*|CUDA_ERROR_[A-Z_]+|hipError[A-Z][A-Za-z]*"
    r"|nccl(?:UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage"
    r"|RemoteError|InProgress|Timeout))\b"
)
# A CUDA error line that may carry a number: "CUDA error: ", "CUDA driver error: ",
# "cuda runtime error (801) : ", "Cuda failure 710 '", "CUDA error (3): ", "error=74 : ",
# TensorRT samples' "Cuda failure: 700".
# Searched only in the few characters before a known message (see _code_hits).
_CODE_PREFIX_BEFORE = re.compile(
    r"(?:\b(?:CUDA|HIP|Cuda|cuda)(?: (?:driver|runtime|Runtime))? (?:error|failure|Error)"
    r"(?: ?\(?\d{1,5}\)?)?\s*:?\s*'?|\berror=\d{1,5} : |\bfailed with error )\Z"
)
_CODE_NUMBER = re.compile(
    r"\b(?:CUDA|HIP|Cuda|cuda)(?: (?:driver|runtime|Runtime))? (?:error|failure|Error):? ?\(?"
    r"(?P<num>\d{3,5})\b|\berror=(?P<num2>\d{3,5})\b"
    # OptiX naming the driver call and its result ("Encountered a CUDA error:
    # cudaDriver().CuMemcpyDtoHAsync( ... ) returned (702): Launch timeout").
    r"|\bCUDA error: [^\n]{0,300}?\) returned \((?P<num3>\d{3,5})\)"
)
_CODE_NAME_ANCHORS = (
    "cudaerror",
    "cuda_error_",
    "hiperror",
    "ncclunhandledcudaerror",
    "ncclsystemerror",
    "ncclinternalerror",
    "ncclinvalid",
    "ncclremoteerror",
    "ncclinprogress",
    "nccltimeout",
)
_CODE_NUMBER_ANCHORS = (
    "cuda error",
    "cuda failure",
    "cuda runtime error",
    "cuda driver error",
    "hip error",
    "error=",
    # OptiX's "returned (702)": its own anchor, so that many "CUDA error" lines before it (each
    # anchor is followed a bounded number of times) do not hide it.
    ") returned (",
)
_PREFIX_WINDOW = 48
_MAX_CODES = 32
_MAX_OCCURRENCES = 16
# Short messages that begin longer ones: the longer one is the code when it is there.
_LONGER_MESSAGES = {
    short: tuple(
        m for m in SPECIFIC_MESSAGES + GENERIC_MESSAGES if m != short and m.startswith(short)
    )
    for short in GENERIC_MESSAGES
}


# A CUDA library's status printed by number, spelling by spelling: glog CHECKs (Caffe, MXNet),
# Julia (CUDA.jl's CUBLASError, Knet's "cublas.cublasSgemm_v2 error 13"), DyNet's CUBLAS_CHECK
# (the status on the line below the call, glued to the line before it), Marian, Paddle, DeepSpeed.
_NUMBERED_STATUSES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    # Each pattern is searched only in texts that hold its literal anchor, as the rules are.
    (library, literal_anchor(pattern) or "", re.compile(pattern, re.IGNORECASE | re.MULTILINE))
    for library, pattern in (
        ("cublas", r"== CUBLAS_STATUS_SUCCESS \((\d+) vs\. 0\)"),
        ("cublas", r"\bCUBLASError\(code (\d+)"),
        ("cublas", r"\bcublas\.cublas\w* error (\d+)"),
        ("cublas", r"(?<![a-z])CUBLAS failure in cublas\w*\([^\n]{0,600}\n(\d+)[ \t]*$"),
        ("cublas", r"\bCUBLAS Error(?:: |\()(\d+)\b"),
        ("cudnn", r"\bcudnn\.cudnn\w+ error (\d+)"),
        ("cudnn", r"\bCUDNN error\((\d+)\)"),
        # TensorRT's checks ("Cudnn Error in execute: 8", "cuBLAS Error in
        # initializeCommonContext: 3"); Lua torch's cudnn.torch ("cudnnFind...Algorithm failed: 2").
        ("cudnn", r"\bCudnn Error in [\w:]+: (\d+)\b"),
        ("cublas", r"\bcuBLAS Error in [\w:]+: (\d+)\b"),
        ("cudnn", r"\bcudnn\w+ failed:[ \t]+(\d+)\b"),
        ("curand", r"\bcurand\.curand\w* error (\d+)"),
        # DeepSpeed's transformer kernels (csrc/transformer/cublas_wrappers.cu).
        ("cublas", r"!!!! kernel execution error\. \(m: \d+, n: \d+, k: \d+, error: (\d+)\)"),
    )
)


def _status_names(text: str, folded: str) -> list[str]:
    """The names of the library statuses ``text`` gives by number (``CUBLAS_STATUS_...``), so
    that the rules, which know the names, classify them."""
    names: list[str] = []
    for library, anchor, pattern in _NUMBERED_STATUSES:
        if anchor not in folded:
            continue
        for found in pattern.finditer(text):
            name = LIBRARY_STATUSES[library].get(int(found.group(1)))
            if name is not None and name not in names:
                names.append(name)
            if len(names) >= _MAX_CODES:
                return names
    return names


#: PBS Pro's resource report ("Walltime requested: 15:00:00   Walltime Used: 15:01:13"); with
#: the job killed by a signal, a used time at or past the request is PBS's wall-time kill.
_PBS_WALLTIME = re.compile(
    r"Walltime requested:\s*(\d{1,4}):(\d\d):(\d\d)\s+Walltime Used:\s*(\d{1,4}):(\d\d):(\d\d)"
)
_PBS_SIGNAL_EXIT = re.compile(r"Exit Status:\s*(?:2\d\d|-\d+)\b")


def _pbs_walltime(text: str, folded: str) -> list[str]:
    """PBS's own kill line (``PBS: job killed: walltime N exceeded limit M``, which the rules
    read) for a resource report that shows the time ran out, as the seconds it gives."""
    if "walltime used" not in folded:
        return []
    found = _PBS_WALLTIME.search(text)
    if found is None or _PBS_SIGNAL_EXIT.search(text) is None:
        return []
    hours, minutes, seconds, used_h, used_m, used_s = (int(part) for part in found.groups())
    limit = hours * 3600 + minutes * 60 + seconds
    used = used_h * 3600 + used_m * 60 + used_s
    return [f"PBS: job killed: walltime {used} exceeded limit {limit}"] if used >= limit else []


# An NCCL error raised before a rank's watchdog timed out ("RuntimeError: NCCL Error 3: internal
# error" then "Watchdog caught collective operation timeout"): the first failure named, which the
# peers waited on. Lines apart, so the order is derived here, not by a cue.
_NCCL_RESULT_ERROR = re.compile(
    r"\b(?i:NCCL error) (?:\d+|in): "
    r"|\bnccl(?:Internal|System|UnhandledCuda|Remote|InvalidUsage)Error\b"
    r"|\bHCCL (?:error in|function error): "
)
_WATCHDOG_TIMEOUT = re.compile(
    r"Watchdog caught coll|Exception raised from checkTimeout\b|ran for \d+ mil"
    r"|The wait execution of the Notify register times out|\[TaskExecStage\]\[Timeout\]",
    re.IGNORECASE,
)
# A CUDA fault or an out-of-memory named before the NCCL error: that is the first failure (the
# NCCL error reports it), and its own rule decides.
_EARLIER_CAUSE = re.compile(
    r"CUDA error|out of memory|illegal memory access|device-side assert"
    r"|unspecified launch failure|misaligned address|illegal instruction",
    re.IGNORECASE,
)


def _nccl_error_first(text: str, folded: str) -> list[str]:
    """:data:`NCCL_ERROR_FIRST` when an NCCL error comes before the watchdog's timeout."""
    if "ccl" not in folded or (
        "watchdog caught" not in folded
        and "checktimeout" not in folded
        and "notify register times out" not in folded
        and "[taskexecstage][timeout]" not in folded
    ):
        return []
    error = _NCCL_RESULT_ERROR.search(text)
    if error is None or _EARLIER_CAUSE.search(text, 0, error.start()) is not None:
        return []
    watchdog = _WATCHDOG_TIMEOUT.search(text)
    return [NCCL_ERROR_FIRST] if watchdog is not None and error.start() < watchdog.start() else []


#: A process pool's report that its worker died, as the last error in the text
#: (``joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by
#: the executor was unexpectedly terminated``, ``BrokenProcessPool: ...``).
_ERROR_LINE = re.compile(
    r"^[ \t]{0,40}(?:[A-Za-z_][\w.]{0,200}\.)?"
    r"(\w{0,100}(?:Error|Exception)|BrokenProcessPool)(?::|$)",
    re.M,
)
# What a pool's worker prints about its own process before it dies: not the trial's failure.
# (Hardware faults concern the GPU whoever saw them; they keep their verdict.)
_WORKER_FAILURES = frozenset(
    {
        FailureClass.OOM,
        FailureClass.CUDA_CONTEXT_CORRUPTED,
        FailureClass.CUDNN,
        FailureClass.CUBLAS,
        FailureClass.NCCL,
        FailureClass.NUMERICAL,
    }
)


# Rules of other classes whose failure kills the process that printed it (a C++ terminate):
# printed by a pool's worker, the worker's death.
_WORKER_RULES = frozenset({"user-cpp-argument-error"})

_POOL_DEATHS = ("TerminatedWorkerError", "BrokenProcessPool")


def _pool_death_last(given: str | None, log: str) -> bool:
    """Whether a loky or concurrent.futures pool's worker death is the trial's last error: the
    exception the worker reported (``given``), or, with only a log tail, its last error line
    (``log``: the message and traceback, not the chain, which lists causes after it)."""
    if given:
        return given.rsplit(".", 1)[-1] in _POOL_DEATHS
    if "TerminatedWorkerError" not in log and "BrokenProcessPool" not in log:
        return False
    last = deque(_ERROR_LINE.finditer(log), maxlen=1)
    return bool(last) and last[0].group(1) in _POOL_DEATHS


def _worker_printed(diagnosis: Diagnosis, priority: int, given: str | None, log: str) -> Diagnosis:
    """A pool's worker death for a failure the worker printed before it died (labelling
    conventions: a pool's worker death is worker_lost whatever the worker printed; loky's
    ``TerminatedWorkerError`` after ``unspecified launch failure`` from the worker's own CUDA
    context). Only when the pool's report is the last error: a failure of the trial's own
    process after it keeps its verdict."""
    if (
        (diagnosis.failure_class not in _WORKER_FAILURES and diagnosis.rule not in _WORKER_RULES)
        or priority >= P_CODE_HARDWARE
        or not _pool_death_last(given, log)
    ):
        return diagnosis
    # The pool rule itself reads the death (and the exit codes it lists) from the same evidence.
    pool = match_rule("pool-worker-lost", Evidence(text=log, types=(given,) if given else ()))
    return diagnosis if pool is None else _diagnosis_from_match(pool, None)


@dataclass(frozen=True)
class _CodeHit:
    info: CodeInfo
    nccl: bool  # NCCL's own report of a CUDA call it made ("NCCL WARN Cuda failure ...")
    nccl_result: bool = False  # an ncclResult_t, not a CUDA code


def _matches_near(
    anchors: tuple[str, ...], pattern: re.Pattern[str], text: str, folded: str
) -> Iterator[re.Match[str]]:
    """``pattern``'s matches on the lines where one of ``anchors`` occurs (case-folded)."""
    if len(folded) != len(text):  # case folding changed the length: no index arithmetic
        if any(anchor in folded for anchor in anchors):
            yield from pattern.finditer(text)
        return
    done: set[int] = set()
    for anchor in anchors:
        index = folded.find(anchor)
        count = 0
        while index >= 0 and count < _MAX_OCCURRENCES:
            count += 1
            low = text.rfind("\n", 0, index) + 1
            high = text.find("\n", index)
            high = len(text) if high < 0 else high
            if low not in done:
                done.add(low)
                yield from pattern.finditer(text, low, high)
            index = folded.find(anchor, high)


def _line_at(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start : end if end >= 0 else len(text)]


# NCCL's own wording of a failed CUDA call: "Cuda failure 'out of memory'", "Cuda failure 700
# 'an illegal memory access was encountered'". TensorRT's samples print "Cuda failure: 700".
_NCCL_CUDA_FAILURE = re.compile(r"Cuda failure (?:\d{1,5} )?'")


def _nccl_context(text: str, index: int) -> bool:
    line = _line_at(text, index)
    return "NCCL WARN" in line or "NCCL INFO" in line or _NCCL_CUDA_FAILURE.search(line) is not None


def _host_allocation(text: str, index: int) -> bool:
    """Whether the code name at ``text[index]`` reports a failed pinned host allocation
    (:data:`HOST_BUFFER_PREFIX` before it): host memory, not the GPU's out-of-memory code."""
    return text.endswith(HOST_BUFFER_PREFIX, max(0, index - len(HOST_BUFFER_PREFIX)), index)


def _code_hits(text: str, folded: str, error_code: int | None) -> list[_CodeHit]:
    """Every CUDA/NCCL error code the evidence names, most direct evidence first."""
    hits: list[_CodeHit] = []
    if error_code is not None and error_code in CUDA_RUNTIME_ERRORS:
        hits.append(_CodeHit(CUDA_RUNTIME_ERRORS[error_code], nccl=False))
    if not text:
        return hits
    for found in _matches_near(_CODE_NAME_ANCHORS, _CODE_NAME, text, folded):
        info = code_by_name(found.group(0))
        if info is not None and not _host_allocation(text, found.start()):
            is_nccl = found.group(0).startswith("nccl")
            hits.append(
                _CodeHit(
                    info,
                    nccl=not is_nccl and _nccl_context(text, found.start()),
                    nccl_result=is_nccl,
                )
            )
        if len(hits) >= _MAX_CODES:
            return hits
    for message in SPECIFIC_MESSAGES:
        index = folded.find(message)
        if index >= 0:
            info = code_by_message(message)
            if info is not None:
                hits.append(_CodeHit(info, nccl=_nccl_context(text, index)))
    for message in GENERIC_MESSAGES:
        index = folded.find(message)
        seen = 0
        while index >= 0 and seen < _MAX_OCCURRENCES:
            seen += 1
            end = index + len(message)
            tail_ok = end >= len(folded) or not (folded[end].isalnum() or folded[end] in "_/")
            before = text[max(0, index - _PREFIX_WINDOW) : index]
            longer = _LONGER_MESSAGES.get(message, ())
            if (
                tail_ok
                and _CODE_PREFIX_BEFORE.search(before)
                and not any(folded.startswith(other, index) for other in longer)
            ):
                info = code_by_message(message)
                if info is not None:
                    hits.append(_CodeHit(info, nccl=_nccl_context(text, index)))
                break
            index = folded.find(message, end)
        if len(hits) >= _MAX_CODES:
            return hits
    for found in _matches_near(_CODE_NUMBER_ANCHORS, _CODE_NUMBER, text, folded):
        number = int(found.group("num") or found.group("num2") or found.group("num3"))
        if number in CUDA_RUNTIME_ERRORS and number >= 100:
            hits.append(
                _CodeHit(CUDA_RUNTIME_ERRORS[number], nccl=_nccl_context(text, found.start()))
            )
        if len(hits) >= _MAX_CODES:
            break
    return hits


@dataclass(frozen=True)
class _CodeVerdict:
    priority: int
    diagnosis: Diagnosis


def _code_verdict(hit: _CodeHit) -> _CodeVerdict:
    info = hit.info
    if hit.nccl_result:
        failure_class, sticky = info.failure_class, info.sticky
        priority = (
            P_CODE_NCCL_TIMEOUT
            if failure_class is FailureClass.TIMEOUT
            else CODE_PRIORITY[FailureClass.NCCL]
        )
        summary = f"NCCL error: {info.message} ({info.name})"
        token = info.token
    elif hit.nccl:
        # NCCL's own CUDA call failed: an NCCL failure, sticky when the CUDA fault is.
        failure_class = FailureClass.NCCL
        sticky = (
            info.sticky
            and info.failure_class is FailureClass.CUDA_CONTEXT_CORRUPTED
            and (info.token not in UNCERTAIN_TOKENS and info.token != "unknown")
        )
        priority = P_CODE_NCCL_STICKY if sticky else CODE_PRIORITY[FailureClass.NCCL]
        what = info.message or info.name
        summary = f"NCCL error: CUDA failure {info.number} '{what}' ({info.name})"
        if sticky:
            summary += ", sticky: context unusable"
        token = "nccl_unhandled_cuda_error"
    else:
        failure_class, sticky, token = info.failure_class, info.sticky, info.token
        if info.hardware:
            priority = P_CODE_HARDWARE
        elif token in UNCERTAIN_TOKENS:
            priority = P_CODE_UNCERTAIN
        else:
            priority = CODE_PRIORITY.get(failure_class, CODE_PRIORITY[FailureClass.USER_ERROR])
        what = info.message or info.name
        summary = f"CUDA error: {what} ({info.name}, {info.number})"
        if sticky:
            summary += ", sticky: context unusable"
    cls_info = CLASS_INFO[failure_class]
    hint = code_hint(token, failure_class) if not hit.nccl else None
    diagnosis = Diagnosis(
        failure_class=failure_class,
        action=DEFAULT_POLICY[failure_class],
        sticky=sticky,
        cuda=True,
        summary=_shorten(summary),
        hint=hint or cls_info.hint,
        cuda_error_type=token,
        rule=f"code:{info.name}",
        error_code=info.number,
        recognised=True,
    )
    return _CodeVerdict(priority, diagnosis)


def _best_code(hits: list[_CodeHit]) -> _CodeVerdict | None:
    best: _CodeVerdict | None = None
    for hit in hits:
        verdict = _code_verdict(hit)
        if best is None or verdict.priority > best.priority:
            best = verdict
    return best


# --- fallbacks ------------------------------------------------------------------------------


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line
    return ""


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 3] + "..."


def diagnosis_for(failure_class: FailureClass, summary: str = "", hint: str = "") -> Diagnosis:
    """The diagnosis for a failure the supervisor observed itself.

    For a timeout it enforced, a host-memory limit it enforced, an interruption, a lost
    worker or a lost supervisor: the class's default action, stickiness, ``cuda`` flag and
    hint; ``summary`` and ``hint`` replace the defaults when given.
    """
    failure_class = FailureClass(failure_class)
    info = CLASS_INFO[failure_class]
    return Diagnosis(
        failure_class=failure_class,
        action=DEFAULT_POLICY[failure_class],
        sticky=info.sticky,
        cuda=info.cuda,
        summary=_shorten(_as_text(summary)) or info.summary,
        hint=_as_text(hint).strip() or info.hint,
    )


def _exception_line(name: str, message: str, text: str) -> str:
    """The last ``Name: message`` line of the text, else ``Name: <first message line>``."""
    short = name.rsplit(".", 1)[-1]
    pattern = re.compile(rf"^[ \t]*(?:[\w.]*\.)?{re.escape(short)}[ \t]*:.*$", re.MULTILINE)
    lines = pattern.findall(text[-TAIL_CHARS:])
    if lines:
        return lines[-1].strip()
    line = _first_line(message) or _first_line(text)
    return f"{name}: {line}" if line and not line.startswith(short) else line or name


def _unrecognised(failure_class: FailureClass, summary: str) -> Diagnosis:
    diagnosis = diagnosis_for(failure_class, _shorten(f"{NOT_RECOGNISED}: {summary}"))
    return Diagnosis(
        diagnosis.failure_class,
        diagnosis.action,
        diagnosis.sticky,
        diagnosis.cuda,
        diagnosis.summary,
        diagnosis.hint,
        recognised=False,
    )


def _fallback(
    types: Iterable[str], message: str, text: str, signal: str | None, exit_code: object
) -> Diagnosis:
    type_list = [name for name in types if not _WRAPPER_TYPE.fullmatch(name)] or list(types)
    if type_list:
        # The innermost exception the evidence names is what the wrappers wrap.
        name = (
            type_list[-1]
            if len(type_list) > 1 and _WRAPPER_TYPE.fullmatch(next(iter(types), ""))
            else type_list[0]
        )
        summary = _shorten(_exception_line(name, message, text))
        if name.rsplit(".", 1)[-1] in _PLAIN_PYTHON_ERRORS:
            return diagnosis_for(FailureClass.USER_ERROR, summary)
        return _unrecognised(FailureClass.USER_ERROR, summary)
    if text.strip():
        failure_class = (
            FailureClass.WORKER_LOST
            if signal is not None or (exit_code is not None and not isinstance(exit_code, bool))
            else FailureClass.USER_ERROR
        )
        return _unrecognised(failure_class, _first_line(text))
    if signal is not None:
        return diagnosis_for(FailureClass.WORKER_LOST, f"worker killed by {signal}")
    if exit_code is not None and not isinstance(exit_code, bool):
        summary = f"worker exited with status {_shorten(_as_text(exit_code))} without a result"
        return diagnosis_for(FailureClass.WORKER_LOST, summary)
    return diagnosis_for(FailureClass.WORKER_LOST, "worker failed without any evidence")


# --- the chain of causes --------------------------------------------------------------------


def _safe_str(value: object) -> str:
    try:
        return _as_text(str(value), _MAX_CHAIN_MESSAGE, 0)
    except Exception:
        return ""


def exception_chain(exc: BaseException) -> list[tuple[str, str]]:
    """``(qualified type name, message)`` for ``exc`` and each exception behind it.

    Outermost first, following ``__cause__`` (``raise ... from``), else ``__context__``
    (unless suppressed); cycles are cut and at most 16 links are returned. Pure and
    never-raising: for the worker to send with its result, so that :func:`classify` sees
    what a wrapper wraps.
    """
    chain: list[tuple[str, str]] = []
    seen: set[int] = set()
    current: object = exc
    try:
        while isinstance(current, BaseException) and id(current) not in seen:
            if len(chain) >= _MAX_CHAIN:
                break
            seen.add(id(current))
            chain.append((_type_name(current) or "", _safe_str(current)))
            cause = getattr(current, "__cause__", None)
            if cause is None and not getattr(current, "__suppress_context__", False):
                cause = getattr(current, "__context__", None)
            current = cause
    except Exception:
        pass
    return chain


def exception_error_code(exc: BaseException) -> int | None:
    """The CUDA error number an exception in ``exc``'s chain carries, or ``None``.

    ``torch.AcceleratorError.error_code`` (PyTorch 2.8+) and the ``error_code``/``status`` of
    other CUDA error types; found by attribute, so torch is never imported. Never raises.
    """
    seen: set[int] = set()
    current: object = exc
    try:
        while isinstance(current, BaseException) and id(current) not in seen and len(seen) < 16:
            seen.add(id(current))
            name = type(current).__name__
            if "Accelerator" in name or "Cuda" in name or "CUDA" in name:
                for attribute in ("error_code", "status"):
                    value = getattr(current, attribute, None)
                    if isinstance(value, int) and not isinstance(value, bool):
                        return int(value)
            cause = getattr(current, "__cause__", None)
            if cause is None and not getattr(current, "__suppress_context__", False):
                cause = getattr(current, "__context__", None)
            current = cause
    except Exception:
        return None
    return None


def _chain_links(chain: object) -> list[tuple[str, str]]:
    """The usable ``(type, message)`` pairs of a chain given by the caller; junk is skipped."""
    links: list[tuple[str, str]] = []
    if chain is None or isinstance(chain, (str, bytes, bytearray, memoryview)):
        return links
    try:
        for link in list(chain)[:_MAX_CHAIN]:  # type: ignore[call-overload]
            if isinstance(link, BaseException):
                links.append((_type_name(link) or "", _safe_str(link)))
                continue
            if not isinstance(link, (tuple, list)) or not link:
                continue
            name = _type_name(link[0]) or ""
            message = _as_text(link[1], _MAX_CHAIN_MESSAGE, 0) if len(link) > 1 else ""
            links.append((name, message))
    except Exception:
        return links
    return links


def _error_code(value: object) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return int(value)
    try:
        text = _as_text(value, 32, 0).strip()
        return int(text) if re.fullmatch(r"[+-]?\d{1,9}", text) else None
    except Exception:
        return None


# --- classify -------------------------------------------------------------------------------


def _classify(
    exception_type: object,
    message: object,
    traceback: object,
    exit_code: object,
    signal: object,
    error_code: object,
    chain: object,
) -> Diagnosis:
    message_text = _as_text(message, HEAD_CHARS, HEAD_CHARS)
    links = _chain_links(chain)
    parts = [message_text, _as_text(traceback)]
    log = "\n".join(parts)
    parts.extend(f"{name}: {text}" if name else text for name, text in links[1:] or links)
    text = "\n".join(parts).replace("\r\n", "\n")
    types: list[str] = []
    given = _type_name(exception_type)
    if given:
        types.append(given)
    for name, _ in links:
        if name and name not in types:
            types.append(name)
    for name in _types_in_text(text):
        if name not in types:
            types.append(name)
    signal_name = _signal_name(signal) or _signal_from_exit_code(exit_code)
    folded = text.casefold()
    code = _error_code(error_code)
    best_code = _best_code(_code_hits(text, folded, code))
    # A library status given by number is evidence of its name, which the rules know.
    names = _status_names(text, folded) + _pbs_walltime(text, folded)
    names += _nccl_error_first(text, folded)
    evidence = "\n".join([text, *names]) if names else text
    match = match_rules(
        Evidence(
            text=evidence,
            types=tuple(types),
            signal=signal_name,
            folded=evidence.casefold() if names else folded,
        )
    )
    decided = _decide(best_code, match, code, types, text)
    if decided is None:
        return _fallback(types, message_text, text, signal_name, exit_code)
    diagnosis, priority = decided
    return _worker_printed(diagnosis, priority, given, log)


def _decide(
    best_code: _CodeVerdict | None,
    match: Match | None,
    code: int | None,
    types: list[str],
    text: str,
) -> tuple[Diagnosis, int] | None:
    """The code's or the rule's verdict, with the priority it won at; ``None`` for the fallback."""
    if best_code is not None and match is not None:
        agree = (
            best_code.diagnosis.failure_class is match.rule.failure_class
            and best_code.diagnosis.sticky == match.rule.sticky
            and match.rule.confident
        )
        if agree or best_code.priority < match.rule.priority:
            # The rule says the same with a more specific summary and hint (or wins outright).
            number = best_code.diagnosis.error_code if agree else code
            return _diagnosis_from_match(match, number), match.rule.priority
        return best_code.diagnosis, best_code.priority
    if best_code is not None:
        return best_code.diagnosis, best_code.priority
    if match is not None and not _yields(match, types, text):
        return _diagnosis_from_match(match, code), match.rule.priority
    return None


#: torch.multiprocessing's own bare ``Exception`` for a child that died (torch < 1.9: "process 0
#: terminated with exit code 1", "-- Process 0 terminated with the following error:"): a
#: launcher's line, not the objective's error.
_SPAWN_EXCEPTION = re.compile(
    r"^Exception: (?:process \d+ terminated|\s*$)|^-- Process \d+ terminated with the following",
    re.MULTILINE | re.IGNORECASE,
)


def _yields(match: Match, types: list[str], text: str = "") -> bool:
    """A rule that names no failure, next to a plain Python error in the same text: a launcher
    saying only that a child failed (``AssertionError: Check batch related parameters`` then
    ``failed (exitcode: 1)``), faulthandler's access-violation report, or a start-up warning
    that no GPU was found (``Unable to initialize backend 'cuda'`` then ``TypeError: ...``).
    The error is the evidence. A library's own ``...Error`` counts as well
    (``wandb.errors.UsageError`` before torchrun's ``ChildFailedError``), except the errors
    launchers, pools, torch.distributed and connections raise for a failed child, peer or link
    (``_CONSEQUENCE_ERROR``)."""
    if not match.rule.yields_to_plain_error:
        return False
    names = {name.rsplit(".", 1)[-1] for name in types}
    # A plain Python error, or a library's own (``wandb.errors.UsageError``) raised in the
    # objective; not a launcher's, a pool's or a connection's report of a failure elsewhere.
    if any(
        name in _PLAIN_PYTHON_ERRORS
        or (name.endswith("Error") and not _CONSEQUENCE_ERROR.fullmatch(name))
        for name in names
    ):
        return True
    # A bare ``raise Exception("...")`` in the objective is its own error too, unless it is
    # torch.multiprocessing's report of a dead child.
    return "Exception" in names and _SPAWN_EXCEPTION.search(text) is None


def classify(
    exception_type: str | None = None,
    message: str = "",
    traceback: str = "",
    exit_code: int | None = None,
    signal: int | str | None = None,
    *,
    error_code: int | None = None,
    chain: Sequence[tuple[str, str]] | None = None,
) -> Diagnosis:
    """Classify one failed trial. Never raises.

    ``exception_type`` is the qualified name the worker reported (``"torch.OutOfMemoryError"``,
    ``"RuntimeError"``, ``"hpo.guards.DataError"``...) or ``None`` when only a log tail is
    known. ``message`` and ``traceback`` may be a full chained traceback or a log tail cut
    mid-line; bytes and other types are accepted. ``exit_code`` is the worker's exit status
    when it exited without a result; ``signal`` the signal it died of (int or name).

    ``error_code`` is the CUDA runtime error number the exception carried
    (``torch.AcceleratorError.error_code``, see :func:`exception_error_code`); ``chain`` the
    ``(type, message)`` of each exception behind it, outermost first (see
    :func:`exception_chain`). Both are optional evidence.
    """
    try:
        return _classify(exception_type, message, traceback, exit_code, signal, error_code, chain)
    except Exception:  # the classifier must never take the supervisor down
        try:
            return diagnosis_for(
                FailureClass.WORKER_LOST, "failure could not be classified (classifier error)"
            )
        except Exception:
            info = CLASS_INFO[FailureClass.WORKER_LOST]
            return Diagnosis(
                FailureClass.WORKER_LOST,
                DEFAULT_POLICY[FailureClass.WORKER_LOST],
                False,
                False,
                info.summary,
                info.hint,
            )
