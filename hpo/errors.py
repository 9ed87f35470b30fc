"""Errors for users: one line naming the culprit, mapped to documented exit codes by the CLI."""

from __future__ import annotations


class HpoError(Exception):
    """Base of errors shown to users as one line (no traceback unless ``--debug``)."""

    exit_code = 1


class ConfigError(HpoError):
    """The study config, a flag, the objective reference or the run folder is wrong."""

    exit_code = 2


class StorageError(HpoError):
    """The storage cannot be reached, is read-only, or holds an incompatible study."""

    exit_code = 3


class ObjectiveLoadError(ConfigError):
    """The objective file/module/function cannot be found or fails at import."""
