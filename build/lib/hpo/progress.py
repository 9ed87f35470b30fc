"""What ``hpo run`` shows while it runs: a live rich display on a terminal, plain lines otherwise.

The display is fed by the run's events (``hpo.events``) and the supervisor's slots; it never
touches the storage, so it costs the run nothing measurable.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

import click

from hpo.errors import ExitCode

if TYPE_CHECKING:
    from hpo.config import StudyConfig
    from hpo.supervisor import Supervisor


class Progress:
    def __init__(self, cfg: StudyConfig, *, quiet: bool = False, stream: Any = None) -> None:
        self.cfg = cfg
        self.quiet = quiet
        self.stream = stream or sys.stdout
        self.live: Any = None
        self.sup: Supervisor | None = None
        self.t0 = time.time()
        self.done = 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def echo(self, text: str) -> None:
        if not self.quiet:
            click.echo(f"hpo: {text}", file=self.stream)

    def attach(self, sup: Supervisor) -> None:
        self.sup = sup
        sup.events.listeners.append(self.on_event)
        if self.quiet:
            return
        if self.tty:
            from hpo.live import LiveDisplay

            self.live = LiveDisplay(sup, self.stream)
            self.live.start()
        else:
            click.echo(
                f"hpo: study {self.cfg.study!r} -> {sup.run_dir} ({self.cfg.n_trials} trials, {self.cfg.workers} worker(s))",
                file=self.stream,
            )

    def on_event(self, rec: dict[str, Any]) -> None:
        if self.quiet:
            return
        if self.live is not None:
            self.live.on_event(rec)
            return
        ev = rec["event"]
        if ev == "trial_finished":
            self.done += 1
            value = rec.get("values")
            shown = (
                f" value={value[0]:.6g}"
                if value and len(value) == 1
                else (f" values={value}" if value else "")
            )
            best = self.sup.stats.best if self.sup else None
            click.echo(
                f"trial {rec['trial']:>5} {rec['state']:<8}{shown} ({rec.get('duration_s', 0):.1f}s)"
                + (f"  best={best:.6g}" if best is not None else ""),
                file=self.stream,
            )
        elif ev == "trial_failed":
            retry = " -> retry" if rec.get("retry") else ""
            fault = f" [chaos:{rec['fault']}]" if rec.get("fault") else ""
            click.echo(
                f"trial {rec['trial']:>5} {rec['state']:<8} {rec['failure_class']} ({rec['action']}){retry}{fault}",
                file=self.stream,
            )
        elif (
            ev in ("device_quarantined", "worker_recycled", "gpu_reset") and ev != "worker_recycled"
        ):
            click.echo(f"{ev}: {rec}", file=self.stream)

    def finish(self, sup: Supervisor, code: int) -> None:
        if self.live is not None:
            self.live.stop()
        from hpo.report import run_summary

        if code not in (ExitCode.OK, ExitCode.INTERRUPTED) and sup.stop_message:
            click.echo(f"hpo: error: {sup.stop_message}", err=True)
        if code in (2, 3) and not hasattr(sup, "study"):
            return  # nothing was opened: the one error line says it all
        click.echo(run_summary(sup, code), file=self.stream)
