"""``hpo report``: one self-contained HTML page (and PNG files) describing a study.

The page answers the morning-after questions: how many trials ended in which state and failure
class over time; which parameter regions fail (failure rate by parameter bucket); the best
trials; throughput; device events (quarantines, worker recycles, GPU resets) from the run's
event log; measured peak GPU memory against the parameters; Optuna's optimisation history and
parameter importances.

Contract:

- ``write_report`` writes ``<out_dir>/report.html`` (figures embedded as base64 PNG data URIs, no
  script, no network) and each figure as ``<out_dir>/<name>.png``. Each figure is an ``<img>``
  with ``id="fig-<name>"`` and ``alt`` text; a figure that does not apply is listed under
  "Skipped figures" with the reason, never silently dropped (``FIGURES`` names them all).
- Works on any Optuna storage, including studies made by plain Optuna without ``hpo`` tags,
  studies whose trials all failed, multi-objective studies (no history or importance) and empty
  studies (a page saying so; ``main`` then exits 1, as there is nothing to show).
- Drawn with matplotlib's Agg backend on ``Figure`` objects (no pyplot state, no plotly).
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import io
import json
import logging
import math
import os
import re
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from hpo import attrs
from hpo import storage as st
from hpo.errors import ConfigError
from hpo.paths import RunPaths

if TYPE_CHECKING:
    import optuna
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

log = logging.getLogger(__name__)

#: Every figure the page may hold, in page order: name -> title. ``<img id="fig-<name>">``.
FIGURES: dict[str, str] = {
    "states": "Trials by state over time",
    "failure-classes": "Failures by class over time",
    "failure-rate": "Failure rate by parameter",
    "trials-per-hour": "Finished trials per hour",
    "device-events": "Device timeline",
    "peak-memory": "Peak GPU memory against parameters",
    "history": "Optimisation history",
    "importance": "Parameter importances",
}

FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
STATE_COLORS = {
    "COMPLETE": "#2ca02c",
    "PRUNED": "#ff7f0e",
    "FAIL": "#d62728",
    "RUNNING": "#1f77b4",
    "WAITING": "#7f7f7f",
}
DEVICE_EVENTS = ("device_quarantined", "gpu_reset", "worker_recycled", "worker_lost")
MAX_BUCKETS = 12  # categorical/int values shown one per bucket up to this many
FLOAT_BUCKETS = 4  # quantile buckets for floats (and ints with many values)
MAX_EVENT_ROWS = 300
TOP_N = 10
DPI = 100


class _Skip(Exception):
    """A figure does not apply to this study; the message says why (shown on the page)."""


@dataclass
class _Figure:
    name: str
    alt: str
    caption: str
    png: bytes


@dataclass
class _Page:
    figures: list[_Figure] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class _Data:
    """What every figure reads: the study, its trials, and the run's device events."""

    study: optuna.Study
    trials: list[FrozenTrial]
    events: list[dict[str, Any]]
    run_dir: Path | None
    t0: float  # UNIX time of the first trial start (the origin of every time axis)
    pid_slot: dict[int, int] = field(default_factory=dict)  # worker pid -> slot (CPU lanes)

    @property
    def finished(self) -> list[FrozenTrial]:
        return [t for t in self.trials if t.state in FINISHED]

    @property
    def single_objective(self) -> bool:
        return len(self.study.directions) == 1


# ------------------------------------------------------------------ entry points
def write_report(
    storage_url: str, study_name: str | None, out_dir: Path, run_dir: Path | None
) -> Path:
    """Write ``<out_dir>/report.html`` and the figures as PNG files; return the HTML's path.

    ``run_dir`` is the run folder whose ``events.jsonl`` supplies device events (None: only the
    quarantines recorded in the study). Raises ``StorageError`` for a missing study or storage and
    ``ConfigError`` when matplotlib is missing or ``out_dir`` cannot be written.
    """
    return _build(storage_url, study_name, Path(out_dir), run_dir)[0]


def main(url: str, name: str | None, out: str | None, run_dir: Path | None) -> int:
    """The ``hpo report`` command: print the HTML path; 1 when the study has no trials."""
    if out is None:
        if name is None:
            name = st.load_study(url, None).study_name
        out_dir = Path(run_dir) / "report" if run_dir else Path(f"hpo-report-{_slug(name)}")
    else:
        out_dir = Path(out)
    path, n_trials, study = _build(url, name, out_dir, run_dir)
    click.echo(str(path.resolve()))
    if n_trials == 0:
        click.echo(f"hpo: study {study!r} has no trials: the report has nothing to show", err=True)
        return 1
    return 0


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "study"


def _build(
    storage_url: str, study_name: str | None, out_dir: Path, run_dir: Path | None
) -> tuple[Path, int, str]:
    _matplotlib()
    study = st.load_study(storage_url, study_name)
    trials = sorted(st.trials(study), key=lambda t: t.number)
    events, pid_slot = _device_events(study, run_dir)
    starts = [t.datetime_start.timestamp() for t in trials if t.datetime_start]
    t0 = min(starts) if starts else 0.0
    data = _Data(
        study=study, trials=trials, events=events, run_dir=run_dir, t0=t0, pid_slot=pid_slot
    )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"report folder {str(out_dir)!r} cannot be created: {exc.strerror}"
        ) from None

    page = _Page()
    if trials:
        for name in FIGURES:
            try:
                page.figures.append(_DRAW[name](data))
            except _Skip as skip:
                page.skipped.append((name, str(skip)))
            except Exception as exc:  # one broken figure must not cost the whole report
                log.warning("figure %s failed: %s", name, exc, exc_info=True)
                page.skipped.append((name, f"could not be drawn: {type(exc).__name__}: {exc}"))
    else:
        page.skipped = [(name, "the study has no trials") for name in FIGURES]

    drawn = {f.name for f in page.figures}
    for fig in page.figures:
        _write_atomic(out_dir / f"{fig.name}.png", fig.png)
    for name in FIGURES:  # a figure skipped now must not leave last run's PNG behind
        if name not in drawn:
            (out_dir / f"{name}.png").unlink(missing_ok=True)
    path = out_dir / "report.html"
    _write_atomic(path, _html(data, page, storage_url).encode("utf-8"))
    return path, len(trials), study.study_name


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"cannot write {str(path)!r}: {exc.strerror}") from None


def _matplotlib() -> None:
    try:
        import matplotlib
    except ImportError:
        raise ConfigError("hpo report needs matplotlib: pip install 'hpo[report]'") from None
    matplotlib.use("Agg")


def _new_figure(width: float = 10.0, height: float = 4.2) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, facecolor="white")
    return buf.getvalue()


# ------------------------------------------------------------------ trial helpers
def _end(t: FrozenTrial) -> float | None:
    d = t.datetime_complete or t.datetime_start
    return d.timestamp() if d else None


def _failure_class(t: FrozenTrial) -> str | None:
    fc = attrs.read(t.user_attrs, attrs.FAILURE_CLASS)
    return str(fc) if fc else None


def _failed(t: FrozenTrial) -> bool:
    """FAIL, or PRUNED by ``hpo`` because of a failure (an OOM is pruned, not failed)."""
    return t.state == TrialState.FAIL or (
        t.state == TrialState.PRUNED and _failure_class(t) is not None
    )


def _params(t: FrozenTrial) -> dict[str, Any]:
    return dict(t.params) if t.params else dict(t.system_attrs.get("fixed_params") or {})


def _short(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _time_unit(span_s: float) -> tuple[float, str]:
    if span_s < 180:
        return 1.0, "s"
    if span_s < 3 * 3600:
        return 60.0, "min"
    if span_s < 3 * 86400:
        return 3600.0, "h"
    return 86400.0, "days"


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).isoformat(sep=" ", timespec="seconds")


# ------------------------------------------------------------------ figures
def _fig_states(d: _Data) -> _Figure:
    rows = sorted((e, t.state.name) for t in d.finished if (e := _end(t)) is not None)
    if not rows:
        raise _Skip("no finished trial (all are running or waiting)")
    span = rows[-1][0] - d.t0
    div, unit = _time_unit(span)
    fig = _new_figure()
    ax = fig.add_subplot()
    for state in ("COMPLETE", "PRUNED", "FAIL"):
        xs = [(e - d.t0) / div for e, s in rows if s == state]
        if xs:
            end = (rows[-1][0] - d.t0) / div
            ax.step(
                [0.0, *xs, end],
                [*range(len(xs) + 1), len(xs)],
                where="post",
                color=STATE_COLORS[state],
                label=f"{state} ({len(xs)})",
                lw=2,
            )
    ax.set_xlabel(f"time since the first trial started ({unit})")
    ax.set_ylabel("trials (cumulative)")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    ax.set_title(FIGURES["states"])
    counts = Counter(s for _, s in rows)
    alt = "Cumulative trials by state over time: " + ", ".join(
        f"{k} {v}" for k, v in counts.most_common()
    )
    return _Figure(
        "states",
        alt,
        f"First trial started {_when(d.t0)}; time of finishing on the x axis.",
        _png(fig),
    )


def _fig_failure_classes(d: _Data) -> _Figure:
    rows = sorted(
        (e, c) for t in d.finished if (c := _failure_class(t)) and (e := _end(t)) is not None
    )
    if not rows:
        untagged = sum(t.state == TrialState.FAIL for t in d.trials)
        if untagged:
            raise _Skip(
                f"{untagged} failed trial(s) but none carries a failure_class tag (a study not run by hpo)"
            )
        raise _Skip("no trial failed")
    from matplotlib import colormaps

    # The same time axis as the states figure: up to the last finished trial.
    span = max(max(e for t in d.finished if (e := _end(t)) is not None) - d.t0, 0.0)
    div, unit = _time_unit(span)
    counts = Counter(c for _, c in rows)
    cmap = colormaps["tab10" if len(counts) <= 10 else "tab20"]
    fig = _new_figure()
    ax = fig.add_subplot()
    for i, (cls, n) in enumerate(counts.most_common()):
        xs = [(e - d.t0) / div for e, c in rows if c == cls]
        ax.step(
            [0.0, *xs, span / div],
            [*range(len(xs) + 1), len(xs)],
            where="post",
            color=cmap(i % cmap.N),
            label=f"{cls} ({n})",
            lw=2,
        )
    ax.set_xlabel(f"time since the first trial started ({unit})")
    ax.set_ylabel("failed trials (cumulative)")
    ax.legend(loc="upper left", fontsize="small")
    ax.grid(alpha=0.3)
    ax.set_title(FIGURES["failure-classes"])
    alt = "Cumulative failures by class over time: " + ", ".join(
        f"{k} {v}" for k, v in counts.most_common()
    )
    return _Figure(
        "failure-classes",
        alt,
        "Trials tagged with a failure_class (FAIL, or PRUNED after e.g. an OOM), by time of finishing.",
        _png(fig),
    )


@dataclass
class _Buckets:
    name: str
    labels: list[str]
    of: dict[int, int]  # trial number -> bucket index
    is_float: bool


def _distribution(trials: Sequence[FrozenTrial], name: str) -> BaseDistribution | None:
    for t in trials:
        if name in t.distributions:
            return t.distributions[name]
    return None


def _bucket(trials: Sequence[FrozenTrial], name: str) -> _Buckets:
    """Categorical and small-int params one value per bucket; others in quantile buckets."""
    have = [(t.number, _params(t)[name]) for t in trials if name in _params(t)]
    dist = _distribution(trials, name)
    values = [v for _, v in have]
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    distinct = (
        set(values)
        if all(_hashable(v) for v in values)
        else {json.dumps(v, default=str) for v in values}
    )
    integral = isinstance(dist, IntDistribution) or (
        numeric and all(isinstance(v, int) for v in values)
    )
    if (
        isinstance(dist, CategoricalDistribution)
        or not numeric
        or (integral and len(distinct) <= MAX_BUCKETS)
    ):
        keyed = [(n, v if _hashable(v) else json.dumps(v, default=str)) for n, v in have]
        freq = Counter(k for _, k in keyed)
        if isinstance(dist, CategoricalDistribution):
            order = [c for c in dist.choices if c in freq]
            order += sorted((k for k in freq if k not in order), key=str)
        elif numeric:
            order = sorted(freq)
        else:
            order = sorted(freq, key=str)
        if len(order) > MAX_BUCKETS:
            keep = {k for k, _ in freq.most_common(MAX_BUCKETS - 1)}
            order = [k for k in order if k in keep]
            labels = [_short(k) for k in order] + ["other"]
        else:
            labels = [_short(k) for k in order]
        index = {k: i for i, k in enumerate(order)}
        of = {n: index.get(k, len(order)) for n, k in keyed}
        return _Buckets(name, labels, of, is_float=False)
    arr = np.asarray(values, dtype=float)
    finite = arr[np.isfinite(arr)]
    if finite.size == 0:
        return _Buckets(name, [], {}, is_float=True)
    log_scale = (
        isinstance(dist, FloatDistribution | IntDistribution)
        and dist.log
        and bool((finite > 0).all())
    )
    qs = np.linspace(0.0, 1.0, FLOAT_BUCKETS + 1)
    edges = np.exp(np.quantile(np.log(finite), qs)) if log_scale else np.quantile(finite, qs)
    edges = np.unique(edges)
    if edges.size < 2:
        return _Buckets(
            name,
            [_short(float(edges[0]))],
            {n: 0 for n, v in have if math.isfinite(float(v))},
            is_float=True,
        )
    nb = edges.size - 1
    labels = [f"{edges[i]:.3g}–{edges[i + 1]:.3g}" for i in range(nb)]
    of = {}
    for n, v in have:
        x = float(v)
        if math.isfinite(x):
            of[n] = min(max(int(np.searchsorted(edges, x, side="right")) - 1, 0), nb - 1)
    return _Buckets(name, labels, of, is_float=True)


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def _dependence(b: _Buckets, failed: dict[int, bool]) -> float:
    """How much failing depends on this param: the chi-square statistic of failures across its
    buckets as a z-score, ``(chi2 - df) / sqrt(2 df)``, so that many small buckets do not win by
    noise alone."""
    n = np.zeros(len(b.labels))
    k = np.zeros(len(b.labels))
    for num, i in b.of.items():
        n[i] += 1
        k[i] += failed[num]
    total = n.sum()
    rate = k.sum() / total if total else 0.0
    if total == 0 or rate in (0.0, 1.0):
        return 0.0
    chi2 = float(((k - n * rate) ** 2 / np.maximum(n * rate * (1.0 - rate), 1e-12)).sum())
    df = max(1, int((n > 0).sum()) - 1)
    return (chi2 - df) / math.sqrt(2 * df)


def _fig_failure_rate(d: _Data) -> _Figure:
    trials = [t for t in d.finished if _params(t)]
    if not trials:
        raise _Skip("no finished trial has parameters")
    failed = {t.number: _failed(t) for t in trials}
    n_failed = sum(failed.values())
    if n_failed == 0:
        raise _Skip(f"no trial failed among {len(trials)} finished")
    names = sorted({k for t in trials for k in _params(t)})
    buckets = [b for name in names if len((b := _bucket(trials, name)).labels) >= 2]
    if not buckets:
        raise _Skip("every parameter has a single value")
    # Categorical and int params first (batch size, model, precision: what decides memory and
    # stability), then floats in quantile buckets; within each, by dependence of failing on them.
    buckets.sort(key=lambda b: (b.is_float, -round(_dependence(b, failed), 9), b.name))
    chosen = buckets[:2]
    classes = Counter(c for t in trials if failed[t.number] and (c := _failure_class(t)))
    focus = None
    if len(classes) >= 2:
        focus = "oom" if "oom" in classes else classes.most_common(1)[0][0]
    panels: list[tuple[str, Callable[[FrozenTrial], bool]]] = [
        ("any failure", lambda t: failed[t.number])
    ]
    if focus:
        focus_class: str = focus
        panels.append((focus_class, lambda t: _failure_class(t) == focus_class))
    if len(chosen) == 2:
        fig, alt = _failure_heatmap(trials, chosen, panels)
    else:
        fig, alt = _failure_bars(trials, chosen[0], panels)
    others = [b.name for b in buckets[2:]]
    caption = (
        f"Parameters: {', '.join(b.name for b in chosen)} (categorical and integer parameters first, then those the failures depend on most)"
        + (
            f" (also seen: {', '.join(others[:8])}{'…' if len(others) > 8 else ''})"
            if others
            else ""
        )
        + ". A failure is a FAIL, or a PRUNED trial tagged with a failure class (OOM). Floats are in quantile buckets; cells read rate and failed/total."
    )
    return _Figure("failure-rate", alt, caption, _png(fig))


def _rates(
    trials: Sequence[FrozenTrial],
    key: Callable[[FrozenTrial], tuple[int, ...] | None],
    shape: tuple[int, ...],
    hit: Callable[[FrozenTrial], bool],
) -> tuple[np.ndarray, np.ndarray]:
    n = np.zeros(shape)
    k = np.zeros(shape)
    for t in trials:
        idx = key(t)
        if idx is None:
            continue
        n[idx] += 1
        k[idx] += hit(t)
    return n, k


def _failure_heatmap(
    trials: Sequence[FrozenTrial],
    chosen: list[_Buckets],
    panels: list[tuple[str, Callable[[FrozenTrial], bool]]],
) -> tuple[Figure, str]:
    from matplotlib import colormaps

    ya, xa = sorted(chosen, key=lambda b: len(b.labels))  # the param with more buckets across
    shape = (len(ya.labels), len(xa.labels))

    def key(t: FrozenTrial) -> tuple[int, int] | None:
        if t.number in ya.of and t.number in xa.of:
            return ya.of[t.number], xa.of[t.number]
        return None

    width = min(6.5, 1.8 + 0.9 * len(xa.labels)) * len(panels) + 0.8
    height = min(9.0, 1.8 + 0.55 * len(ya.labels))
    fig = _new_figure(max(width, 7.0), max(height, 3.4))
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    cmap = colormaps["Reds"].with_extremes(bad="#eeeeee")
    worst = ""
    im = None
    for ax, (title, hit) in zip(axes, panels, strict=True):
        n, k = _rates(trials, key, shape, hit)
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(n > 0, k / np.maximum(n, 1), np.nan)
        im = ax.imshow(np.ma.masked_invalid(rate), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
        for i in range(shape[0]):
            for j in range(shape[1]):
                if n[i, j]:
                    ax.text(
                        j,
                        i,
                        f"{rate[i, j]:.0%}\n{int(k[i, j])}/{int(n[i, j])}",
                        ha="center",
                        va="center",
                        fontsize=8,
                        color="white" if rate[i, j] > 0.6 else "black",
                    )
                else:
                    ax.text(j, i, "–", ha="center", va="center", fontsize=8, color="#999999")
        ax.set_xticks(
            range(shape[1]),
            xa.labels,
            rotation=30 if max(len(s) for s in xa.labels) > 6 else 0,
            ha="right" if max(len(s) for s in xa.labels) > 6 else "center",
            fontsize=8,
        )
        ax.set_yticks(range(shape[0]), ya.labels, fontsize=8)
        ax.set_xlabel(xa.name)
        ax.set_ylabel(ya.name)
        ax.set_title(f"{title} rate")
        if not worst and n.any():
            flat = int(np.nanargmax(np.where(n > 0, rate, -1.0)))
            i, j = flat // shape[1], flat % shape[1]
            worst = f"highest failure rate {rate[i, j]:.0%} ({int(k[i, j])}/{int(n[i, j])}) at {ya.name}={ya.labels[i]}, {xa.name}={xa.labels[j]}"
    if im is not None:
        fig.colorbar(im, ax=list(axes), shrink=0.8, label="rate")
    fig.suptitle(f"Failure rate by {ya.name} × {xa.name}")
    alt = f"Heatmap of the failure rate by {ya.name} and {xa.name} ({', '.join(p for p, _ in panels)}); {worst}"
    return fig, alt


def _failure_bars(
    trials: Sequence[FrozenTrial],
    b: _Buckets,
    panels: list[tuple[str, Callable[[FrozenTrial], bool]]],
) -> tuple[Figure, str]:
    shape = (len(b.labels),)

    def key(t: FrozenTrial) -> tuple[int] | None:
        return (b.of[t.number],) if t.number in b.of else None

    fig = _new_figure(max(7.0, min(14.0, 2.0 + 0.8 * len(b.labels) * len(panels))), 4.2)
    ax = fig.add_subplot()
    width = 0.8 / len(panels)
    x = np.arange(len(b.labels))
    colors = ["#d62728", "#9467bd"]
    for p, (title, hit) in enumerate(panels):
        n, k = _rates(trials, key, shape, hit)
        rate = np.where(n > 0, k / np.maximum(n, 1), 0.0)
        pos = x + (p - (len(panels) - 1) / 2) * width
        ax.bar(pos, rate, width, label=f"{title} rate", color=colors[p % 2])
        for xi, ri, ki, ni in zip(pos, rate, k, n, strict=True):
            ax.text(xi, ri + 0.01, f"{int(ki)}/{int(ni)}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, b.labels, rotation=30 if max(len(s) for s in b.labels) > 6 else 0, fontsize=8)
    ax.set_ylim(0, 1.1)
    ax.set_xlabel(b.name)
    ax.set_ylabel("rate (failed/total above each bar)")
    fig.legend(loc="outside lower center", ncol=len(panels), fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"Failure rate by {b.name}")
    return (
        fig,
        f"Bar chart of the failure rate by {b.name} buckets ({', '.join(p for p, _ in panels)})",
    )


_NICE_BINS = (
    1,
    2,
    5,
    10,
    15,
    30,
    60,
    120,
    300,
    600,
    900,
    1800,
    3600,
    7200,
    10800,
    21600,
    43200,
    86400,
)


def _bin_label(w: float) -> str:
    if w < 60:
        return f"{w:g} s"
    if w < 3600:
        return f"{w / 60:g} min"
    if w < 86400:
        return f"{w / 3600:g} h"
    return f"{w / 86400:g} days"


def _fig_trials_per_hour(d: _Data) -> _Figure:
    rows = [(e, t.state.name) for t in d.finished if (e := _end(t)) is not None]
    if len(rows) < 2:
        raise _Skip("fewer than 2 finished trials")
    span = max(e for e, _ in rows) - d.t0
    width = next(
        (w for w in _NICE_BINS if span / w <= 40),
        _NICE_BINS[-1] * max(1, math.ceil(span / _NICE_BINS[-1] / 40)),
    )
    nbins = max(1, math.ceil(span / width + 1e-9))
    div, unit = _time_unit(span)
    fig = _new_figure()
    ax = fig.add_subplot()
    bottom = np.zeros(nbins)
    lefts = np.arange(nbins) * width / div
    for state in ("COMPLETE", "PRUNED", "FAIL"):
        counts = np.zeros(nbins)
        for e, s in rows:
            if s == state:
                counts[min(int((e - d.t0) // width), nbins - 1)] += 1
        if counts.any():
            rate = counts * 3600.0 / width
            ax.bar(
                lefts,
                rate,
                width=width / div,
                bottom=bottom,
                align="edge",
                color=STATE_COLORS[state],
                label=state,
                edgecolor="white",
                linewidth=0.3,
            )
            bottom += rate
    overall = len(rows) / max(span, 1e-9) * 3600.0
    ax.axhline(overall, color="black", lw=1, ls="--", label=f"mean {overall:,.0f}/h")
    ax.set_xlabel(f"time since the first trial started ({unit})")
    ax.set_ylabel("finished trials per hour")
    fig.legend(loc="outside lower center", ncol=4, fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"{FIGURES['trials-per-hour']} (bins of {_bin_label(width)})")
    alt = f"Stacked bars of finished trials per hour by state, in bins of {_bin_label(width)}; mean {overall:,.0f} per hour over {len(rows)} trials"
    return _Figure(
        "trials-per-hour",
        alt,
        f"{len(rows)} finished trials over {_bin_label(round(span, 1))}; each bar's height is its count scaled to an hour.",
        _png(fig),
    )


# ---- device events
def _device_events(
    study: optuna.Study, run_dir: Path | None
) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """Device and worker events from the run's log, plus quarantines recorded in the study;
    and the slot of each worker pid (from ``worker_started``)."""
    events: list[dict[str, Any]] = []
    pid_slot: dict[int, int] = {}
    if run_dir is not None:
        from hpo.events import read_events

        for e in read_events(RunPaths(Path(run_dir)).events):
            if (
                e.get("event") == "worker_started"
                and e.get("pid") is not None
                and e.get("slot") is not None
            ):
                pid_slot[int(e["pid"])] = int(e["slot"])
            if e.get("event") in DEVICE_EVENTS and isinstance(e.get("ts"), int | float):
                events.append({**e, "source": "events.jsonl"})
    try:
        study_attrs = study.user_attrs
    except Exception:
        study_attrs = {}
    for key, value in study_attrs.items():
        if not key.startswith("hpo:quarantine:") or not isinstance(value, dict):
            continue
        device = str(value.get("gpu", key.rsplit(":", 1)[-1]))
        ts = value.get("time")
        if not isinstance(ts, int | float):
            continue
        dup = any(
            e["event"] == "device_quarantined"
            and str(e.get("device")) == device
            and abs(float(e["ts"]) - ts) < 60
            for e in events
        )
        if not dup:
            events.append(
                {
                    "ts": ts,
                    "event": "device_quarantined",
                    "device": int(device) if device.isdigit() else device,
                    "reason": value.get("reason"),
                    "host": value.get("host"),
                    "source": "study attrs",
                }
            )
    events.sort(key=lambda e: float(e["ts"]))
    return events, pid_slot


def _event_lane(e: dict[str, Any]) -> str:
    if e.get("device") is not None:
        return f"GPU {e['device']}"
    if e.get("slot") is not None:
        return f"slot {e['slot']}"
    return "CPU"


def _trial_lane(t: FrozenTrial, pid_slot: dict[int, int]) -> str:
    dev = attrs.read(t.user_attrs, attrs.DEVICE)
    if dev is not None:
        return f"GPU {dev}"
    pid = attrs.read(t.user_attrs, attrs.WORKER_PID)
    if isinstance(pid, int) and pid in pid_slot:
        return f"slot {pid_slot[pid]}"
    return "CPU"


_EVENT_STYLE: dict[str, tuple[str, str, float, str]] = {
    # event -> (marker, color, size, legend label)
    "device_quarantined": ("X", "black", 140.0, "device quarantined"),
    "gpu_reset": ("*", "#9467bd", 140.0, "GPU reset"),
    "worker_lost": ("x", "#d62728", 60.0, "worker lost"),
    "worker_recycled": ("v", "#555555", 30.0, "worker recycled"),
}


def _fig_device_events(d: _Data) -> _Figure:
    if not d.events:
        if d.run_dir is None:
            raise _Skip(
                "no run folder given (pass the study's config) and the study records no quarantine"
            )
        raise _Skip(f"no device or worker events in {Path(d.run_dir) / 'events.jsonl'}")
    pid_slot = d.pid_slot
    spans: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    last = max(float(e["ts"]) for e in d.events)
    for t in d.finished:
        if t.datetime_start is None:
            continue
        s = t.datetime_start.timestamp()
        e = _end(t) or s
        spans[_trial_lane(t, pid_slot)][t.state.name].append((s, max(e - s, 0.0)))
        last = max(last, e)
    lanes = sorted({_event_lane(e) for e in d.events} | set(spans), key=_lane_order)
    span = max(last - d.t0, 1.0)
    div, unit = _time_unit(span)
    fig = _new_figure(10.0, max(2.6, 1.4 + 0.55 * len(lanes)))
    ax = fig.add_subplot()
    y = {lane: i for i, lane in enumerate(lanes)}
    for lane, by_state in spans.items():
        for state, bars in by_state.items():
            ax.broken_barh(
                [((s - d.t0) / div, max(w / div, span / div / 2000)) for s, w in bars],
                (y[lane] - 0.3, 0.6),
                facecolors=STATE_COLORS.get(state, "#999999"),
                alpha=0.45,
                linewidth=0,
            )
    for kind, (marker, color, size, label) in _EVENT_STYLE.items():
        pts = [
            ((float(e["ts"]) - d.t0) / div, y[_event_lane(e)])
            for e in d.events
            if e["event"] == kind
        ]
        if pts:
            xs, ys = zip(*pts, strict=True)
            ax.scatter(
                xs, ys, marker=marker, c=color, s=size, label=f"{label} ({len(pts)})", zorder=3
            )
    from matplotlib.patches import Patch

    handles, labels = ax.get_legend_handles_labels()
    for state in ("COMPLETE", "PRUNED", "FAIL"):
        if any(state in by for by in spans.values()):
            handles.append(Patch(color=STATE_COLORS[state], alpha=0.45))
            labels.append(f"{state} trial")
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    ax.set_yticks(range(len(lanes)), lanes)
    ax.set_ylim(-0.7, len(lanes) - 0.3)
    ax.invert_yaxis()
    ax.set_xlabel(f"time since the first trial started ({unit})")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(FIGURES["device-events"])
    counts = Counter(e["event"] for e in d.events)
    alt = "Timeline of trials and device events per device: " + ", ".join(
        f"{k} {v}" for k, v in counts.most_common()
    )
    return _Figure(
        "device-events",
        alt,
        "Bars are trials on each device (or worker slot on CPU), coloured by final state; markers are events.",
        _png(fig),
    )


def _lane_order(lane: str) -> tuple[int, int | str]:
    kind, _, rest = lane.partition(" ")
    rank = {"GPU": 0, "slot": 1}.get(kind, 2)
    return (rank, int(rest)) if rest.isdigit() else (rank, rest)


# ---- peak memory
def _fig_peak_memory(d: _Data) -> _Figure:
    measured = [
        t
        for t in d.trials
        if isinstance(p := attrs.read(t.user_attrs, attrs.PEAK_GPU_MEM_MB), int | float) and p > 0
    ]
    if not measured:
        raise _Skip("no trial has a measured peak_gpu_mem_mb (CPU run, or a study not run by hpo)")
    names = sorted({k for t in measured for k in _params(t)})
    if not names:
        raise _Skip("the trials with a measured peak have no parameters")
    info = []
    for name in names:
        b = _bucket(measured, name)
        info.append((b.is_float, len(b.labels), name))
    info.sort()
    chosen = [name for _, _, name in info[:4]]
    ooms = [t for t in d.trials if _failure_class(t) == "oom"]
    cols = min(2, len(chosen))
    rows = math.ceil(len(chosen) / cols)
    fig = _new_figure(10.0, 3.4 * rows + 0.4)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    rng = np.random.default_rng(0)
    for ax, name in zip(axes, chosen, strict=False):
        _peak_panel(ax, name, measured, ooms, d.trials, rng)
    for ax in axes[len(chosen) :]:
        ax.set_visible(False)
    fig.suptitle(FIGURES["peak-memory"])
    peaks = [float(attrs.read(t.user_attrs, attrs.PEAK_GPU_MEM_MB)) for t in measured]
    alt = (
        f"Scatter of measured peak GPU memory (MB) against {', '.join(chosen)} for {len(measured)} trials; "
        f"peaks from {min(peaks):,.0f} to {max(peaks):,.0f} MB; {len(ooms)} OOM trial(s) marked at the top"
    )
    return _Figure(
        "peak-memory",
        alt,
        "Peak memory as measured by the worker (max reserved by PyTorch's allocator, or the simulated backend); red × at the top: trials that ran out of memory, whose peak is not known.",
        _png(fig),
    )


def _peak_panel(
    ax: Axes,
    name: str,
    measured: Sequence[FrozenTrial],
    ooms: Sequence[FrozenTrial],
    every: Sequence[FrozenTrial],
    rng: np.random.Generator,
) -> None:
    from matplotlib.transforms import blended_transform_factory

    b = _bucket(every, name)
    dist = _distribution(every, name)
    categorical = not b.is_float
    if categorical:

        def xpos(t: FrozenTrial) -> float:
            return float(b.of[t.number]) + float(rng.uniform(-0.18, 0.18))
    else:

        def xpos(t: FrozenTrial) -> float:
            return float(_params(t)[name])

    all_x: list[float] = []
    for state in ("COMPLETE", "PRUNED", "FAIL"):
        pts = [
            (xpos(t), float(attrs.read(t.user_attrs, attrs.PEAK_GPU_MEM_MB)))
            for t in measured
            if t.state.name == state and t.number in b.of
        ]
        if pts:
            xs, ys = zip(*pts, strict=True)
            all_x += xs
            ax.scatter(xs, ys, s=18, alpha=0.7, color=STATE_COLORS[state], label=state)
    oom_x = [xpos(t) for t in ooms if t.number in b.of]
    if oom_x:
        all_x += oom_x
        tr = blended_transform_factory(ax.transData, ax.transAxes)
        ax.scatter(
            oom_x,
            [0.96] * len(oom_x),
            marker="x",
            color="#d62728",
            s=40,
            transform=tr,
            label=f"OOM ({len(oom_x)})",
        )
    # Limits set by hand: markers drawn in axes coordinates confuse autoscaling.
    if categorical:
        ax.set_xticks(range(len(b.labels)), b.labels, fontsize=8)
        ax.set_xlim(-0.5, len(b.labels) - 0.5)
    elif all_x:
        lo, hi = min(all_x), max(all_x)
        if isinstance(dist, FloatDistribution | IntDistribution) and dist.log and lo > 0:
            ax.set_xscale("log")
            ax.set_xlim(lo / 1.25, hi * 1.25)
        else:
            pad = (hi - lo) * 0.05 or max(abs(lo) * 0.05, 0.5)
            ax.set_xlim(lo - pad, hi + pad)
    ax.set_xlabel(name)
    ax.set_ylabel("peak GPU memory (MB)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="x-small", loc="lower right")


# ---- Optuna's own views
def _single_objective_complete(d: _Data, what: str) -> list[FrozenTrial]:
    if not d.single_objective:
        raise _Skip(
            f"multi-objective study ({len(d.study.directions)} objectives): {what} applies to one objective; see the Pareto-optimal trials table"
        )
    done = [t for t in d.trials if t.state == TrialState.COMPLETE and t.values]
    if len(done) < 2:
        raise _Skip(f"fewer than 2 complete trials ({len(done)})")
    return done


def _fig_history(d: _Data) -> _Figure:
    done = _single_objective_complete(d, "the optimisation history")
    maximize = d.study.directions[0] == StudyDirection.MAXIMIZE
    xs = [t.number for t in done]
    ys = [float(t.values[0]) for t in done]
    best: list[float] = []
    for v in ys:
        if not math.isfinite(v):
            best.append(best[-1] if best else math.nan)
            continue
        best.append(
            v
            if not best or math.isnan(best[-1])
            else (max(best[-1], v) if maximize else min(best[-1], v))
        )
    fig = _new_figure()
    ax = fig.add_subplot()
    ax.scatter(xs, ys, s=14, color="#1f77b4", alpha=0.7, label="objective value")
    ax.step(xs, best, where="post", color="#d62728", lw=2, label="best value")
    failed = [t.number for t in d.trials if _failed(t)]
    if failed:
        from matplotlib.transforms import blended_transform_factory

        tr = blended_transform_factory(ax.transData, ax.transAxes)
        ax.scatter(
            failed,
            [0.02] * len(failed),
            marker="|",
            color="#d62728",
            s=60,
            transform=tr,
            label=f"failed trial ({len(failed)})",
        )
    ax.set_xlabel("trial number")
    ax.set_ylabel("objective value")
    ax.legend(loc="best", fontsize="small")
    ax.grid(alpha=0.3)
    ax.set_title(FIGURES["history"] + (" (maximize)" if maximize else " (minimize)"))
    b = best[-1]
    alt = (
        f"Optimisation history: objective value by trial number for {len(done)} complete trials; best {b:.6g}"
        if math.isfinite(b)
        else f"Optimisation history of {len(done)} complete trials"
    )
    return _Figure(
        "history",
        alt,
        "As optuna.visualization.plot_optimization_history; ticks at the bottom mark failed trials.",
        _png(fig),
    )


def _fig_importance(d: _Data) -> _Figure:
    _single_objective_complete(d, "parameter importance")
    import optuna

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            imp = optuna.importance.get_param_importances(d.study)
    except Exception as exc:
        raise _Skip(
            f"optuna.importance.get_param_importances failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        ) from None
    if not imp:
        raise _Skip("no parameter to rank")
    items = sorted(imp.items(), key=lambda kv: kv[1])
    fig = _new_figure(8.0, max(2.4, 1.2 + 0.4 * len(items)))
    ax = fig.add_subplot()
    ax.barh([k for k, _ in items], [v for _, v in items], color="#1f77b4")
    for i, (_, v) in enumerate(items):
        ax.text(v, i, f" {v:.2f}", va="center", fontsize=8)
    ax.set_xlabel("importance (PED-ANOVA, Optuna's default)")
    ax.set_xlim(0, max(v for _, v in items) * 1.15 or 1.0)
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(FIGURES["importance"])
    top = items[-1]
    alt = f"Horizontal bars of parameter importances; most important {top[0]} ({top[1]:.2f})"
    return _Figure(
        "importance",
        alt,
        "optuna.importance.get_param_importances on the complete trials.",
        _png(fig),
    )


_DRAW: dict[str, Callable[[_Data], _Figure]] = {
    "states": _fig_states,
    "failure-classes": _fig_failure_classes,
    "failure-rate": _fig_failure_rate,
    "trials-per-hour": _fig_trials_per_hour,
    "device-events": _fig_device_events,
    "peak-memory": _fig_peak_memory,
    "history": _fig_history,
    "importance": _fig_importance,
}


# ------------------------------------------------------------------ HTML
_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:1.6em;margin-bottom:0}h2{border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}
.meta{color:#666;margin-top:4px}
table{border-collapse:collapse;margin:8px 0;font-size:0.9em}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:16px 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{color:#555;font-size:0.9em}
.note{background:#fff8e1;border-left:4px solid #f0b400;padding:8px 12px}
code{background:#f3f3f3;padding:0 3px}
"""


def _e(v: Any) -> str:
    return html.escape("" if v is None else str(v))


def _table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    id: str | None = None,
    numeric: Sequence[int] = (),
) -> str:
    out = [f"<table{f' id={chr(34)}{id}{chr(34)}' if id else ''}><thead><tr>"]
    out += [f"<th>{_e(h)}</th>" for h in headers]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append(
            "<tr>"
            + "".join(
                f'<td class="num">{_e(c)}</td>' if i in numeric else f"<td>{_e(c)}</td>"
                for i, c in enumerate(row)
            )
            + "</tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def _html(d: _Data, page: _Page, storage_url: str) -> str:
    from hpo import __version__ as hpo_version

    study = d.study
    name = study.study_name
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>hpo report: {_e(name)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Study <code>{_e(name)}</code></h1>",
        f'<p class="meta">storage {_e(st.redact(storage_url))} · '
        f"direction{'s' if len(study.directions) > 1 else ''} {_e(', '.join(x.name.lower() for x in study.directions))} · "
        f"report written {_e(dt.datetime.now().isoformat(sep=' ', timespec='seconds'))} by hpo {_e(hpo_version)}</p>",
    ]
    if not d.trials:
        parts.append(
            f'<p class="note" id="empty">Study <code>{_e(name)}</code> has no trials yet: nothing to show. Run it with <code>hpo run</code> first.</p>'
        )
    else:
        parts.append(_summary(d))
        parts.append(_best_section(d))
    parts.append(_figures_section(page))
    if d.trials or d.events:
        parts.append(_events_section(d))
    parts.append("</body></html>")
    return "\n".join(parts)


def _summary(d: _Data) -> str:
    trials = d.trials
    by_state = Counter(t.state.name for t in trials)
    ends = [e for t in d.finished if (e := _end(t)) is not None]
    parts = ["<h2>Summary</h2>"]
    rows = [[s, by_state.get(s, 0)] for s in ("COMPLETE", "PRUNED", "FAIL", "RUNNING", "WAITING")]
    rows.append(["total", len(trials)])
    parts.append(_table(["state", "trials"], rows, id="states", numeric=(1,)))
    if ends:
        span = max(ends) - d.t0
        parts.append(
            f"<p>First trial started {_e(_when(d.t0))}, last finished {_e(_when(max(ends)))} ({_e(_bin_label(round(span, 1)))}).</p>"
        )
    failed = [t for t in trials if _failed(t)]
    if failed:
        by_class: dict[str, list[FrozenTrial]] = defaultdict(list)
        for t in failed:
            by_class[_failure_class(t) or "(untagged)"].append(t)
        rows = []
        for cls, ts in sorted(by_class.items(), key=lambda kv: -len(kv[1])):
            states = Counter(t.state.name for t in ts)
            actions = Counter(
                str(attrs.read(t.user_attrs, attrs.FAILURE_ACTION))
                for t in ts
                if attrs.read(t.user_attrs, attrs.FAILURE_ACTION)
            )
            msg = next(
                (
                    str(attrs.read(t.user_attrs, attrs.ERROR_MSG) or "").strip().splitlines()[0]
                    for t in ts
                    if str(attrs.read(t.user_attrs, attrs.ERROR_MSG) or "").strip()
                ),
                "",
            )
            rows.append(
                [
                    cls,
                    len(ts),
                    ", ".join(f"{k} {v}" for k, v in states.most_common()),
                    ", ".join(f"{k} {v}" for k, v in actions.most_common()),
                    ", ".join(str(t.number) for t in ts[:8]) + ("…" if len(ts) > 8 else ""),
                    msg[:160],
                ]
            )
        parts.append("<h3>Failures by class</h3>")
        parts.append(
            _table(
                ["class", "trials", "states", "actions", "trials (first)", "example message"],
                rows,
                id="failure-classes",
                numeric=(1,),
            )
        )
        parts.append(
            "<p>Details of one trial: <code>hpo failures --trial N</code>; all of them: <code>hpo failures --format json</code>.</p>"
        )
    return "\n".join(parts)


def _best_section(d: _Data) -> str:
    study = d.study
    done = [t for t in d.trials if t.state == TrialState.COMPLETE and t.values]
    if d.single_objective:
        maximize = study.directions[0] == StudyDirection.MAXIMIZE
        finite = [t for t in done if math.isfinite(float(t.values[0]))]
        ranked = sorted(finite, key=lambda t: float(t.values[0]), reverse=maximize)[:TOP_N]
        title = (
            f"Best trials (top {len(ranked)} of {len(done)} complete)" if ranked else "Best trials"
        )
    else:
        try:
            front = list(study.best_trials)
        except Exception:
            front = []
        ranked = sorted(front, key=lambda t: t.number)[:TOP_N]
        title = (
            f"Pareto-optimal trials ({len(ranked)} of {len(front)} on the front, {len(done)} complete)"
            if ranked
            else "Pareto-optimal trials"
        )
    parts = [f"<h2>{_e(title)}</h2>"]
    if not ranked:
        parts.append('<p class="note" id="no-best">No complete trial: no best value yet.</p>')
        return "\n".join(parts)
    rows = []
    for t in ranked:
        value = ", ".join(f"{v:.6g}" for v in t.values)
        dur = attrs.read(t.user_attrs, attrs.DURATION_S)
        if dur is None and t.datetime_start and t.datetime_complete:
            dur = round((t.datetime_complete - t.datetime_start).total_seconds(), 2)
        rows.append(
            [
                t.number,
                value,
                ", ".join(f"{k}={_short(v)}" for k, v in t.params.items()),
                "" if dur is None else f"{float(dur):.1f}",
                _e_none(attrs.read(t.user_attrs, attrs.DEVICE)),
                _e_none(attrs.read(t.user_attrs, attrs.ATTEMPT)),
            ]
        )
    parts.append(
        _table(
            [
                "trial",
                "value" if d.single_objective else "values",
                "params",
                "duration (s)",
                "device",
                "attempt",
            ],
            rows,
            id="best-trials",
            numeric=(0, 1, 3),
        )
    )
    return "\n".join(parts)


def _e_none(v: Any) -> str:
    return "" if v is None else str(v)


def _figures_section(page: _Page) -> str:
    parts = ["<h2>Figures</h2>"]
    for f in page.figures:
        data = base64.b64encode(f.png).decode("ascii")
        parts.append(
            f'<figure id="figure-{f.name}"><img id="fig-{f.name}" alt="{_e(f.alt)}" '
            f'src="data:image/png;base64,{data}">'
            f'<figcaption>{_e(f.caption)} <a href="{_e(f.name)}.png">{_e(f.name)}.png</a></figcaption></figure>'
        )
    parts.append('<h2>Skipped figures</h2><ul id="skipped">')
    if not page.skipped:
        parts.append("<li>none</li>")
    for name, why in page.skipped:
        parts.append(
            f'<li data-figure="{_e(name)}"><b>{_e(FIGURES.get(name, name))}</b> (<code>{_e(name)}</code>): {_e(why)}</li>'
        )
    parts.append("</ul>")
    return "\n".join(parts)


def _events_section(d: _Data) -> str:
    parts = ["<h2>Device events</h2>"]
    if not d.events:
        where = (
            f"{Path(d.run_dir) / 'events.jsonl'}"
            if d.run_dir
            else "no run folder given (pass the study's config to read its events.jsonl)"
        )
        parts.append(
            f'<p id="no-device-events">No quarantines, GPU resets, worker recycles or lost workers ({_e(where)}).</p>'
        )
        return "\n".join(parts)
    counts = Counter(e["event"] for e in d.events)
    parts.append("<p>" + _e(", ".join(f"{k}: {v}" for k, v in counts.most_common())) + "</p>")
    shown = d.events[-MAX_EVENT_ROWS:]
    if len(shown) < len(d.events):
        parts.append(f"<p>Showing the last {len(shown)} of {len(d.events)} events.</p>")
    rows = []
    for e in shown:
        detail = e.get("reason") or e.get("message") or ""
        if e["event"] == "worker_lost":
            detail = f"exit code {e.get('exit_code')}, signal {e.get('signal')}"
        elif e["event"] == "gpu_reset":
            detail = f"{'done' if e.get('done') else 'not done'}: {e.get('message') or ''}"
        rows.append(
            [
                _when(float(e["ts"])),
                e["event"],
                _e_none(e.get("device")),
                _e_none(e.get("slot")),
                _e_none(e.get("pid")),
                detail,
                e.get("source", ""),
            ]
        )
    parts.append(
        _table(
            ["time", "event", "device", "slot", "pid", "detail", "source"], rows, id="device-events"
        )
    )
    return "\n".join(parts)
