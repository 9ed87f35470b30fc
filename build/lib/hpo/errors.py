"""Errors for users (one line naming the culprit) and the one table of exit codes.

:class:`ExitCode` is the contract between ``hpo`` and whatever runs it (a shell loop, systemd,
Slurm): every command exits with one of these, and docs/cli.md lists the same table.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Exit codes of every ``hpo`` command. ``meaning`` is the phrase shown in summaries."""

    OK = 0
    ERROR = 1
    CONFIG = 2
    STORAGE = 3
    FAILURES = 4
    NO_DEVICE = 5
    NOTHING_LEARNED = 6
    INTERRUPTED = 130

    @property
    def meaning(self) -> str:
        return _MEANING[self]

    @classmethod
    def describe(cls, code: int) -> str:
        """The meaning of ``code``, or an empty string for a code not in the table."""
        try:
            return cls(code).meaning
        except ValueError:
            return ""


_MEANING = {
    ExitCode.OK: "reached n_trials",
    ExitCode.ERROR: "internal error",
    ExitCode.CONFIG: "configuration error",
    ExitCode.STORAGE: "storage error",
    ExitCode.FAILURES: "stopped by the circuit breaker",
    ExitCode.NO_DEVICE: "no usable device left",
    ExitCode.NOTHING_LEARNED: "reached n_trials without a single COMPLETE trial",
    ExitCode.INTERRUPTED: "interrupted",
}


class HpoError(Exception):
    """Base of errors shown to users as one line (no traceback unless ``--debug``)."""

    exit_code: int = ExitCode.ERROR


class ConfigError(HpoError):
    """The study config, a flag, the objective reference or the run folder is wrong."""

    exit_code = ExitCode.CONFIG


class StorageError(HpoError):
    """The storage cannot be reached, is read-only, or holds an incompatible study."""

    exit_code = ExitCode.STORAGE


class ObjectiveLoadError(ConfigError):
    """The objective file/module/function cannot be found or fails at import."""


class StopRun(HpoError):
    """Ends a run at once with ``code``: how the supervisor's loop leaves on an error it found
    mid-run (a boot loop, a storage that failed, an objective that cannot be imported)."""

    def __init__(self, code: ExitCode, message: str) -> None:
        super().__init__(message)
        self.exit_code = code
