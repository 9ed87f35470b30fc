"""The live terminal display of ``hpo run`` (rich): slots, counts by state and class, best, rate, ETA."""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from hpo.supervisor import Supervisor


class LiveDisplay:
    def __init__(self, sup: Supervisor, stream: Any) -> None:
        self.sup = sup
        self.console = Console(file=stream)
        self.t0 = time.time()
        self.states: Counter[str] = Counter()
        self.classes: Counter[str] = Counter()
        self.recent: list[str] = []
        self.live = Live(
            self._render(),
            console=self.console,
            refresh_per_second=4,
            transient=False,
            get_renderable=self._render,
        )

    def start(self) -> None:
        self.live.start()

    def stop(self) -> None:
        self.live.stop()

    def on_event(self, rec: dict[str, Any]) -> None:
        ev = rec["event"]
        if ev == "trial_finished":
            self.states[rec["state"]] += 1
        elif ev == "trial_failed":
            self.states[rec["state"]] += 1
            self.classes[rec["failure_class"]] += 1
            self.recent = (
                [f"trial {rec['trial']}: {rec['failure_class']} -> {rec['action']}"] + self.recent
            )[:5]
        elif ev in ("device_quarantined", "gpu_reset"):
            self.recent = ([f"{ev}: device {rec.get('device')}"] + self.recent)[:5]

    def _render(self) -> Group:
        sup = self.sup
        now = time.monotonic()
        cfg = sup.cfg
        slots = Table(title=f"hpo · {cfg.study} · target {cfg.n_trials}", expand=False)
        for col in ("slot", "device", "worker", "trial", "params", "elapsed"):
            slots.add_column(col)
        for s in sup.slots:
            run = s.running
            params = ""
            if run is not None:
                params = ", ".join(
                    f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in list(run.spec.params.items())[:4]
                )
            slots.add_row(
                str(s.index),
                "cpu" if s.device is None else f"gpu{s.device}",
                str(s.worker.pid) if s.worker else "-",
                str(run.spec.number) if run else ("starting" if s.state == "booting" else "idle"),
                params,
                f"{now - run.started:.0f}s" if run else "",
            )
        done = self.states["COMPLETE"] + self.states["PRUNED"]
        elapsed = max(time.time() - self.t0, 1e-6)
        rate = done / elapsed * 3600
        remaining = max(0, cfg.n_trials - sup.done_at_start - done)
        eta = f"   ETA {_fmt_s(remaining / rate * 3600)}" if rate > 0 and remaining else ""
        line = Text(
            "  ".join(f"{k} {v}" for k, v in sorted(self.states.items()))
            + (f"   best {sup.stats.best:.6g}" if sup.stats.best is not None else "")
            + f"   {rate:.0f} trials/h this run   {remaining} to go{eta}"
        )
        parts: list[Any] = [slots, line]
        if self.classes:
            parts.append(
                Text("failures: " + "  ".join(f"{k} {v}" for k, v in self.classes.most_common()))
            )
        parts.extend(Text(r, style="dim") for r in self.recent)
        return Group(*parts)


def _fmt_s(seconds: float) -> str:
    seconds = int(seconds)
    h, rem = divmod(seconds, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{sec:02d}s"
