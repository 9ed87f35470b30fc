"""Turn what a failed worker left behind into a :class:`~hpo.failures.classes.Diagnosis`.

:func:`classify` reads the exception type, message and traceback (or only a log tail), the
exit status and the signal, builds an :class:`~hpo.failures.rules.Evidence` and asks the
rules table. It never raises: whatever it is given, it returns a diagnosis.

How signals and exit codes are read (see also docs/failures.md):

- ``signal`` may be an int (``11``, also negative or a ``signal.Signals``) or a name
  (``"SIGSEGV"``, ``"SEGV"``, ``"Signals.SIGSEGV"``, ``"SIGIOT"`` = ``SIGABRT``); numbers use
  the Linux numbering.
- Without a signal, a negative ``exit_code`` ``-N`` means "killed by signal N" (the
  :mod:`subprocess` convention) and ``128 + N`` (N <= 64) the shell's convention.
- Text evidence beats the bare signal: a SIGABRT whose log says ``NCCL error`` is an NCCL
  failure; a SIGKILL with nothing else is most likely the kernel OOM killer (``host_oom``).
- With no rule matching: an exception type means ``user_error``; an exit without a result
  (``exit_code`` given, or nothing at all) means ``worker_lost``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hpo.failures.classes import (
    CLASS_INFO,
    DEFAULT_POLICY,
    Diagnosis,
    FailureClass,
)
from hpo.failures.rules import Evidence, Match, match_rules

__all__ = ["classify", "diagnosis_for"]

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
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")
_QUALIFIED_NAME = re.compile(r"[A-Za-z_][\w.]*")
_MAX_TYPES = 32
_MAX_NAME = 200


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
    for found in _TYPE_SUFFIX.finditer(text):
        start = found.start()
        limit = max(0, start - _MAX_NAME)
        while start > limit and text[start - 1] in _NAME_CHARS:
            start -= 1
        name = text[start : found.end()].lstrip(".")
        if _TYPE_NAME.fullmatch(name) and name not in names:
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


def _diagnosis_from_match(match: Match) -> Diagnosis:
    rule = match.rule
    info = CLASS_INFO[rule.failure_class]
    cuda_error_type = rule.cuda_error_type
    if rule.code_type and match.code:
        cuda_error_type = _slug(match.code)
    return Diagnosis(
        failure_class=rule.failure_class,
        action=DEFAULT_POLICY[rule.failure_class],
        sticky=rule.sticky,
        cuda=rule.cuda,
        summary=_fill(rule.summary, match.code),
        hint=rule.hint or info.hint,
        cuda_error_type=cuda_error_type,
        rule=rule.id,
    )


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


def _fallback(
    types: Iterable[str], message: str, text: str, signal: str | None, exit_code: object
) -> Diagnosis:
    type_list = list(types)
    if type_list:
        summary = _exception_line(type_list[0], message, text)
        return diagnosis_for(FailureClass.USER_ERROR, _shorten(summary))
    if signal is not None:
        return diagnosis_for(FailureClass.WORKER_LOST, f"worker killed by {signal}")
    if exit_code is not None and not isinstance(exit_code, bool):
        summary = f"worker exited with status {_shorten(_as_text(exit_code))} without a result"
        return diagnosis_for(FailureClass.WORKER_LOST, summary)
    if text.strip():
        return diagnosis_for(
            FailureClass.USER_ERROR, "unrecognised error: " + _shorten(_first_line(text))
        )
    return diagnosis_for(FailureClass.WORKER_LOST, "worker failed without any evidence")


def _classify(
    exception_type: object,
    message: object,
    traceback: object,
    exit_code: object,
    signal: object,
) -> Diagnosis:
    message_text = _as_text(message, HEAD_CHARS, HEAD_CHARS)
    text = (message_text + "\n" + _as_text(traceback)).replace("\r\n", "\n")
    types: list[str] = []
    given = _type_name(exception_type)
    if given:
        types.append(given)
    for name in _types_in_text(text):
        if name not in types:
            types.append(name)
    signal_name = _signal_name(signal) or _signal_from_exit_code(exit_code)
    match = match_rules(Evidence(text=text, types=tuple(types), signal=signal_name))
    if match is not None:
        return _diagnosis_from_match(match)
    return _fallback(types, message_text, text, signal_name, exit_code)


def classify(
    exception_type: str | None = None,
    message: str = "",
    traceback: str = "",
    exit_code: int | None = None,
    signal: int | str | None = None,
) -> Diagnosis:
    """Classify one failed trial. Never raises.

    ``exception_type`` is the qualified name the worker reported (``"torch.OutOfMemoryError"``,
    ``"RuntimeError"``, ``"hpo.guards.DataError"``...) or ``None`` when only a log tail is
    known. ``message`` and ``traceback`` may be a full chained traceback or a log tail cut
    mid-line; bytes and other types are accepted. ``exit_code`` is the worker's exit status
    when it exited without a result; ``signal`` the signal it died of (int or name).
    """
    try:
        return _classify(exception_type, message, traceback, exit_code, signal)
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
