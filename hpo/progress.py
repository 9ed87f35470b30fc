"""What ``hpo run`` shows while it runs: a live rich display on a terminal, plain lines otherwise.

The display is fed by the run's events (``hpo.events``) and the supervisor's slots; it never
touches the storage, so it costs the run nothing measurable. Piped output gets a status line at
least every :data:`EVERY_S` seconds (running trials with their last reported step and value,
counts, best, ETA), so a log of a long run never goes quiet.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from hpo.errors import ExitCode

if TYPE_CHECKING:
    from hpo.config import StudyConfig
    from hpo.supervisor import Supervisor


#: The longest a piped run stays silent: a status line is printed after this many seconds.
EVERY_S = 30.0


class Progress:
    """``hpo run``'s display (the supervisor's ``NullDisplay`` interface). ``address`` is how the
    operator's commands name the study (a config path, or ``--storage URL --study NAME``)."""

    def __init__(
        self,
        cfg: StudyConfig,
        *,
        quiet: bool = False,
        stream: Any = None,
        address: str = "",
        every_s: float = EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cfg = cfg
        self.quiet = quiet
        self.stream = stream or sys.stdout
        self.address = address
        self.every_s = every_s
        self.clock = clock
        self.live: Any = None
        self.sup: Supervisor | None = None
        self.t0 = clock()
        self.last_line = self.t0
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
        self.t0 = self.last_line = self.clock()

    def tick(self, sup: Supervisor) -> None:
        """Piped output: a status line every ``every_s`` seconds, between the trials' lines."""
        if self.quiet or self.live is not None:
            return
        now = self.clock()
        if now - self.last_line >= self.every_s:
            click.echo(self.status_line(sup, now), file=self.stream)
            self.last_line = now

    def status_line(self, sup: Supervisor, now: float) -> str:
        """``hpo: 2 running: trial 5 step 3 value=0.412 (1m02s), trial 6 (8s) | 4 done this run,
        16 to go, ETA 5m20s | best 0.12`` (the step and value are the last ``trial.report``)."""
        running = []
        for slot in sup.slots:
            run = slot.running
            if run is None:
                continue
            last = sup.store.last_reported(run.number) if hasattr(sup, "store") else None
            step = f" step {last[0]} value={last[1]:.6g}" if last else ""
            running.append(f"trial {run.number}{step} ({_fmt_s(now - run.started)})")
        remaining = max(0, self.cfg.n_trials - sup.done_at_start - self.done)
        elapsed = now - self.t0
        if self.done and remaining:
            eta = f"ETA {_fmt_s(elapsed / self.done * remaining)}"
        else:
            eta = "ETA after the first trial" if remaining else "finishing"
        best = sup.stats.best
        parts = [
            f"{len(running)} running" + (": " + ", ".join(running) if running else ""),
            f"{self.done} done this run, {remaining} to go, {eta}",
        ]
        if best is not None:
            parts.append(f"best {best:.6g}")
        return "hpo: " + " | ".join(parts)

    def on_event(self, rec: dict[str, Any]) -> None:
        if self.quiet:
            return
        if self.live is not None:
            self.live.on_event(rec)
            return
        ev = rec["event"]
        if ev == "trial_finished" or (ev == "trial_failed" and rec["state"] == "PRUNED"):
            self.done += 1
        if ev == "trial_finished":
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
        click.echo(run_summary(sup, code, self.address), file=self.stream)


def _fmt_s(seconds: float) -> str:
    seconds = int(max(0.0, seconds))
    h, rem = divmod(seconds, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m" if h else (f"{m}m{sec:02d}s" if m else f"{sec}s")
