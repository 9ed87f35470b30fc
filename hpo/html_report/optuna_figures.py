"""The figures Optuna draws (``optuna.visualization.matplotlib``): timeline, optimisation
history, parameter importances, Pareto front; hpo adds what its tags and event log know (device
events on the timeline, failed trials on the history). Optuna draws with pyplot and sets the
global ggplot style: each figure is drawn in ``rc_context()`` and closed once rendered."""

from __future__ import annotations

import contextlib
import datetime as dt
import warnings
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import matplotlib
from matplotlib import pyplot as plt
from optuna.study import StudyDirection
from optuna.trial import TrialState

from hpo.html_report.data import Data, Drawn, Skip, counted, failed, mark_along, png

if TYPE_CHECKING:
    from matplotlib.axes import Axes

_EVENT_STYLE: dict[str, dict[str, Any]] = {  # event -> its vertical line on the timeline
    "device_quarantined": {"color": "black", "lw": 2.0, "ls": "-", "label": "GPU quarantined"},
    "gpu_reset": {"color": "#9467bd", "lw": 2.0, "ls": "-.", "label": "GPU reset"},
    "worker_lost": {"color": "#d62728", "lw": 1.0, "ls": "--", "label": "worker lost"},
    "worker_recycled": {"color": "#555555", "lw": 0.6, "ls": ":", "label": "worker recycled"},
}
_LEGEND_OUTSIDE = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0)}


@contextlib.contextmanager
def _pyplot() -> Iterator[Any]:
    """Optuna's plots (imported late: ``hpo report`` imports them without scikit-learn)."""
    from optuna.visualization import matplotlib as ovm

    before = set(plt.get_fignums())
    with warnings.catch_warnings(), matplotlib.rc_context():
        warnings.simplefilter("ignore")  # ExperimentalWarning, and the importance's own notes
        try:
            yield ovm
        finally:
            for num in set(plt.get_fignums()) - before:
                plt.close(num)


def _drawn(name: str, ax: Axes, alt: str, caption: str, size: tuple[float, float]) -> Drawn:
    fig: Any = ax.get_figure()
    fig.set_size_inches(*size)
    return Drawn(name, alt, caption, png(fig, tight=True))


def _complete(d: Data) -> list[Any]:
    done = [t for t in d.trials if t.state == TrialState.COMPLETE and t.values]
    if len(done) < 2:
        raise Skip(f"fewer than 2 complete trials ({len(done)})")
    return done


def timeline(d: Data) -> Drawn:
    """Optuna's timeline, with the run's device and worker events as vertical lines."""
    counts = Counter(e["event"] for e in d.events)
    with _pyplot() as ovm:
        ax = ovm.plot_timeline(d.study)
        for kind, style in _EVENT_STYLE.items():
            for i, e in enumerate(e for e in d.events if e["event"] == kind):
                at = dt.datetime.fromtimestamp(float(e["ts"]))  # naive local, as Optuna's trials
                label = f"{style['label']} ({counts[kind]})" if i == 0 else None
                ax.axvline(at, zorder=3, **{**style, "label": label})
                if kind in ("device_quarantined", "gpu_reset") and e.get("device") is not None:
                    ax.annotate(f"GPU {e['device']}", (at, 1.0), xycoords=("data", "axes fraction"))
        if d.events:
            ax.legend(**_LEGEND_OUTSIDE)
        states = counted(Counter(t.state.name for t in d.trials).most_common())
        alt = f"Timeline of {len(d.trials)} trials, one bar per trial from start to end, coloured by state: {states}; device and worker events: {counted(counts.most_common()) or 'none'}"
        caption = "optuna.visualization.matplotlib.plot_timeline: each trial's start and end, by state; vertical lines: the run's device and worker events (table below)."
        return _drawn("timeline", ax, alt, caption, (10.0, min(12.0, 0.02 * len(d.trials) + 3.5)))


def history(d: Data) -> Drawn:
    if not d.single_objective:
        n = len(d.study.directions)
        raise Skip(f"multi-objective study ({n} objectives): see the Pareto front instead")
    done = _complete(d)
    fails = [t.number for t in d.trials if failed(t)]
    direction = "maximize" if d.study.directions[0] == StudyDirection.MAXIMIZE else "minimize"
    with _pyplot() as ovm:
        ax = ovm.plot_optimization_history(d.study)
        # What Optuna's history leaves out: where trials failed.
        label = f"failed trial ({len(fails)})"
        mark_along(ax, fails, 0.02, marker="|", color="#d62728", s=60, label=label)
        ax.legend(**_LEGEND_OUTSIDE)
        ax.set_title(f"Optimization History Plot ({direction})")
        alt = f"Optimisation history: objective value by trial number for {len(done)} complete trials; best {d.study.best_value:.6g}; {len(fails)} failed trial(s) marked at the bottom"
        caption = "optuna.visualization.matplotlib.plot_optimization_history; red ticks at the bottom mark failed trials."
        return _drawn("history", ax, alt, caption, (10.0, 4.2))


def importance(d: Data) -> Drawn:
    _complete(d)
    with _pyplot() as ovm:
        try:
            ax = ovm.plot_param_importances(d.study)
        except Exception as exc:
            why = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
            raise Skip(f"optuna's parameter importances failed: {why}") from None
        if not (labels := [t.get_text() for t in ax.get_yticklabels()]):
            raise Skip("no parameter to rank")
        n = len(d.study.directions)
        each = f" for each of the {n} objectives" if n > 1 else ""
        alt = f"Horizontal bars of parameter importances{each}; most important {labels[-1]}"
        caption = "optuna.visualization.matplotlib.plot_param_importances (PED-ANOVA, Optuna's default) on the complete trials."
        return _drawn("importance", ax, alt, caption, (8.0, max(2.6, 1.4 + 0.4 * len(labels))))


def pareto_front(d: Data) -> Drawn:
    if (n := len(d.study.directions)) == 1:
        raise Skip("single-objective study: no Pareto front")
    if n > 3:
        raise Skip(f"{n} objectives: Optuna plots a Pareto front of 2 or 3; see the table")
    _complete(d)
    best = sorted(t.number for t in d.study.best_trials)
    with _pyplot() as ovm:
        ax = ovm.plot_pareto_front(d.study, target_names=d.study.metric_names)
        alt = f"Scatter of the objective values of the complete trials; the Pareto front is trial(s) {', '.join(map(str, best[:20]))}{'…' if len(best) > 20 else ''}"
        caption = "optuna.visualization.matplotlib.plot_pareto_front: every complete trial, the best (non-dominated) ones in red."
        return _drawn("pareto-front", ax, alt, caption, (7.0, 5.5) if n == 2 else (8.0, 7.0))
