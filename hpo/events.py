"""The run's event log: one JSON object per line in ``<run_dir>/events.jsonl``, for machines.

Events: supervisor_started/stopped, worker_started/recycled/lost, trial_started/finished/failed/
retried/recovered, device_quarantined, gpu_reset. Every event has ``ts`` (UNIX time), ``event``,
``host`` and ``supervisor_pid``; other keys depend on the event (see docs/cli.md).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


class EventLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - lives as long as the run
        self._base = {"host": socket.gethostname(), "supervisor_pid": os.getpid()}
        self.listeners: list[Callable[[dict[str, Any]], None]] = []

    def emit(self, event: str, **fields: Any) -> None:
        rec = {"ts": round(time.time(), 3), "event": event, **self._base, **fields}
        try:
            self._fh.write(json.dumps(rec, default=str) + "\n")
        except (OSError, ValueError):
            pass
        for listener in self.listeners:
            listener(rec)

    def close(self) -> None:
        try:
            self._fh.close()
        except (OSError, ValueError):
            pass


def read_events(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue  # a line cut by a crash
    except OSError:
        pass
    return out


class QuietFileHandler(logging.FileHandler):
    """A log file that degrades quietly: when its disk is full or it cannot be written, it says
    so once (one line on stderr) and stops, instead of a traceback per record."""

    broken = False

    def _give_up(self) -> None:
        if not self.broken:
            self.broken = True
            import sys

            print(
                f"hpo: warning: cannot write {self.baseFilename} (disk full or unwritable): "
                "the run goes on without its log file",
                file=sys.stderr,
            )

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        self._give_up()

    def emit(self, record: logging.LogRecord) -> None:
        if not self.broken:
            super().emit(record)

    def flush(self) -> None:
        try:
            super().flush()
        except OSError:
            self._give_up()

    def close(self) -> None:
        try:
            super().close()
        except OSError:
            pass


def log_to_file(path: Path) -> logging.Handler:
    """Send the ``hpo`` loggers to ``path`` (INFO and up); remove the handler when done."""
    handler = QuietFileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger("hpo").addHandler(handler)
    logging.getLogger("hpo").setLevel(logging.INFO)
    return handler


def close_log(handler: logging.Handler) -> None:
    logging.getLogger("hpo").removeHandler(handler)
    handler.close()


def _printed_below(record: logging.LogRecord) -> bool:
    """False when a handler of a logger between ``record``'s and the root already printed it.

    Lightning, for one, gives its top logger (``lightning``) its own stream handler and leaves it
    propagating: a root handler would print each of its lines a second time."""
    logger: logging.Logger | None = logging.getLogger(record.name)
    while logger is not None and logger.parent is not None:  # the root has no parent
        for h in logger.handlers:
            if not isinstance(h, logging.NullHandler) and record.levelno >= h.level:
                return False
        if not logger.propagate:
            break
        logger = logger.parent
    return True


def log_unprinted_to(stream: Any) -> None:
    """In a worker: INFO and up of loggers nobody configured go to ``stream`` (the trial's log),
    as a terminal would show an objective's own logging; a line a library prints through its
    own handler is not printed twice. Nothing is done when the root logger has handlers."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_printed_below)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
