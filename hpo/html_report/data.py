"""What the figures and the page read (the study, its trials, the run's device events), and the
helpers they share."""

from __future__ import annotations

import datetime as dt
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from optuna.trial import FrozenTrial, TrialState

from hpo import attrs
from hpo import storage as st
from hpo.errors import ConfigError
from hpo.paths import RunPaths

try:  # the [report] extra
    import jinja2  # noqa: F401
    import matplotlib
except ImportError as exc:
    raise ConfigError(f"hpo report needs {exc.name}: pip install 'hpo[report]'") from None
matplotlib.use("Agg")  # before pyplot, which Optuna's plots use; no display needed
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.transforms import blended_transform_factory  # noqa: E402

if TYPE_CHECKING:
    import optuna
    from matplotlib.axes import Axes

FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
STATE_COLORS = {"COMPLETE": "#2ca02c", "PRUNED": "#ff7f0e", "FAIL": "#d62728"}
STATE_COLORS |= {"RUNNING": "#1f77b4", "WAITING": "#7f7f7f"}
DEVICE_EVENTS = ("device_quarantined", "gpu_reset", "worker_recycled", "worker_lost")
DPI = 100


class Skip(Exception):
    """A figure does not apply to this study; the message says why (shown on the page)."""


@dataclass
class Drawn:
    name: str
    alt: str
    caption: str
    png: bytes


@dataclass
class Data:
    study: optuna.Study
    trials: list[FrozenTrial]  # by number
    events: list[dict[str, Any]]  # device and worker events, by time
    run_dir: Path | None

    @property
    def finished(self) -> list[FrozenTrial]:
        return [t for t in self.trials if t.state in FINISHED]

    @property
    def single_objective(self) -> bool:
        return len(self.study.directions) == 1


def load(study: optuna.Study, run_dir: Path | None) -> Data:
    trials = sorted(st.trials(study), key=lambda t: t.number)
    return Data(study, trials, device_events(study, run_dir), run_dir)


def failure_class(t: FrozenTrial) -> str | None:
    fc = attrs.read(t.user_attrs, attrs.FAILURE_CLASS)
    return str(fc) if fc else None


def failed(t: FrozenTrial) -> bool:
    """FAIL, or PRUNED by ``hpo`` because of a failure (an OOM is pruned, not failed)."""
    return t.state == TrialState.FAIL or (t.state == TrialState.PRUNED and bool(failure_class(t)))


def params(t: FrozenTrial) -> dict[str, Any]:
    return dict(t.params) if t.params else dict(t.system_attrs.get("fixed_params") or {})


def short(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def counted(pairs: Any) -> str:
    """``a 3, b 1`` from a Counter (most common first) or ``(key, count)`` pairs."""
    return ", ".join(f"{k} {v}" for k, v in getattr(pairs, "most_common", lambda: pairs)())


def when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).isoformat(sep=" ", timespec="seconds")


def new_figure(width: float = 10.0, height: float = 4.2) -> Figure:
    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def dress(ax: Axes, title: str, x: str, y: str, loc: Any = "best", grid: Any = "both") -> None:
    """Title, axis labels, a light grid and the legend: what every hpo figure has."""
    ax.set(title=title, xlabel=x, ylabel=y)
    ax.grid(axis=grid, alpha=0.3)
    ax.legend(loc=loc, fontsize="small")


def png(fig: Figure, tight: bool = False) -> bytes:
    buf = io.BytesIO()
    bbox = "tight" if tight else None
    fig.savefig(buf, format="png", dpi=DPI, facecolor="white", bbox_inches=bbox)
    return buf.getvalue()


def mark_along(ax: Axes, xs: list[Any], y: float, **style: Any) -> None:
    """Markers at data ``xs``, at height ``y`` of the axes: trials with no value to plot."""
    if xs:
        tr = blended_transform_factory(ax.transData, ax.transAxes)
        ax.scatter(xs, [y] * len(xs), transform=tr, **style)


def device_events(study: optuna.Study, run_dir: Path | None) -> list[dict[str, Any]]:
    """The run log's device and worker events, and the study's quarantines the log lacks."""
    events: list[dict[str, Any]] = []
    if run_dir is not None:
        from hpo.events import read_events

        for e in read_events(RunPaths(Path(run_dir)).events):
            if e.get("event") in DEVICE_EVENTS and isinstance(e.get("ts"), int | float):
                events.append({**e, "source": "events.jsonl"})
    logged = [(str(e.get("device")), e["ts"]) for e in events if e["event"] == DEVICE_EVENTS[0]]
    for q in st.quarantines(study, lifted=True):
        gpu, ts = q.get("gpu", q["key"].rsplit(":", 1)[-1]), q.get("time")
        if isinstance(ts, int | float) and all(
            abs(t - ts) >= 60 or d != str(gpu) for d, t in logged
        ):
            more = {"reason": q.get("reason"), "host": q.get("host"), "source": "study attrs"}
            events.append({"ts": ts, "event": DEVICE_EVENTS[0], "device": gpu, **more})
    return sorted(events, key=lambda e: float(e["ts"]))
