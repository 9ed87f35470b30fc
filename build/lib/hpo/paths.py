"""Every path inside a run folder, in one place.

A run folder (``runs/<study>`` by default) holds what a run leaves besides the study itself::

    study.db              the default SQLite storage
    supervisor.log        the supervisor's log
    events.jsonl          the event log (hpo.events)
    logs/trial-NNNNNN.log one per trial: the objective's stdout and stderr
    logs/worker-S-G.log   one per worker process (slot S, generation G)
    outcomes/trial-NNNNNN.json  the outcome a worker recorded (read on resume)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hpo.errors import ConfigError


@dataclass(frozen=True)
class RunPaths:
    """The paths of one run folder; ``root`` is made absolute."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).resolve())

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def outcomes(self) -> Path:
        return self.root / "outcomes"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def supervisor_log(self) -> Path:
        return self.root / "supervisor.log"

    @property
    def default_storage(self) -> Path:
        return self.root / "study.db"

    def trial_log(self, number: int) -> Path:
        return self.logs / f"trial-{number:06d}.log"

    def outcome(self, number: int) -> Path:
        return self.outcomes / f"trial-{number:06d}.json"

    def worker_log(self, slot: int, generation: int) -> Path:
        return self.logs / f"worker-{slot}-{generation}.log"

    def make(self) -> None:
        """Create the folder and its subfolders; a ConfigError if it cannot be written."""
        try:
            for sub in (self.logs, self.outcomes):
                sub.mkdir(parents=True, exist_ok=True)
            probe = self.root / ".write-test"
            probe.write_text("ok")
            probe.unlink()
        except OSError as exc:
            raise ConfigError(
                f"run folder {str(self.root)!r} cannot be written: {exc.strerror or exc}"
            ) from None


def log_tail(path: str | Path, max_bytes: int = 8192) -> str:
    """The last ``max_bytes`` of a log file (empty when it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - max_bytes))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
