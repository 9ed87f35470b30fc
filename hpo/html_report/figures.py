"""The figures only ``hpo``'s tags allow: failure classes over time, failure rate by parameter
bucket, retries, peak GPU memory (matplotlib ``Figure`` objects, no pyplot state)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
from matplotlib import colormaps
from optuna.distributions import CategoricalDistribution, IntDistribution
from optuna.trial import FrozenTrial, TrialState

from hpo import attrs
from hpo.html_report import data as hd
from hpo.html_report.data import Data, Drawn, Skip

MAX_BUCKETS = 12  # categorical/int values shown one per bucket up to this many
FLOAT_BUCKETS = 4  # quantile buckets for floats (and ints with many values)
Panel = tuple[str, Callable[[FrozenTrial], bool]]


def failure_classes(d: Data) -> Drawn:
    rows = sorted((t.datetime_complete, c) for t in d.finished if (c := hd.failure_class(t)))
    if not rows:
        n = sum(t.state == TrialState.FAIL for t in d.trials)
        why = f"{n} failed trial(s) but none carries a failure_class tag (a study not run by hpo)"
        raise Skip(why if n else "no trial failed")
    start = min(t.datetime_start for t in d.trials if t.datetime_start)
    last = max(t.datetime_complete for t in d.finished if t.datetime_complete)
    counts = Counter(c for _, c in rows).most_common()
    cmap = colormaps["tab10" if len(counts) <= 10 else "tab20"]
    fig = hd.new_figure()
    ax: Any = fig.add_subplot()
    for i, (cls, n) in enumerate(counts):
        xs = [start, *(when for when, c in rows if c == cls), last]
        style = {"color": cmap(i % cmap.N), "label": f"{cls} ({n})", "lw": 2}
        ax.step(xs, [*range(n + 1), n], where="post", **style)
    labels = ("Failures by class over time", "time of finishing", "failed trials (cumulative)")
    hd.dress(ax, *labels, loc="upper left")
    fig.autofmt_xdate()
    alt = f"Cumulative failures by class over time: {hd.counted(counts)}"
    caption = "Trials tagged with a failure_class (FAIL, or PRUNED after e.g. an OOM), by time of finishing; the time axis of the timeline."
    return Drawn("failure-classes", alt, caption, hd.png(fig))


# ---- failure rate by parameter bucket
@dataclass
class Buckets:
    name: str
    labels: list[str]
    of: dict[int, int]  # trial number -> bucket index
    is_float: bool


def bucket(trials: Sequence[FrozenTrial], name: str) -> Buckets:
    """Categorical and small-int params one value per bucket (the most common ``MAX_BUCKETS -
    1`` and "other" beyond that); floats and many-valued ints in quantile buckets."""
    have = [(t.number, hd.params(t)[name]) for t in trials if name in hd.params(t)]
    dist = next((t.distributions[name] for t in trials if name in t.distributions), None)
    values = [v for _, v in have]  # Optuna's param values: None, bool, int, float or str
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    ints = isinstance(dist, IntDistribution) or all(isinstance(v, int) for v in values)
    choices = dist.choices if isinstance(dist, CategoricalDistribution) else None
    if choices or not numeric or (ints and len(set(values)) <= MAX_BUCKETS):
        freq = Counter(values)
        order = sorted(freq) if numeric else sorted(freq, key=str)
        if choices:  # the choices' order, then any value outside them (fixed params)
            order = [c for c in choices if c in freq] + [k for k in order if k not in choices]
        if len(order) > MAX_BUCKETS:
            keep = {k for k, _ in freq.most_common(MAX_BUCKETS - 1)}
            order = [k for k in order if k in keep] + ["other"]
        index = {k: i for i, k in enumerate(order)}
        of = {n: index.get(v, len(order) - 1) for n, v in have}
        return Buckets(name, [hd.short(k) for k in order], of, False)
    finite = np.asarray([v for v in values if math.isfinite(v)], dtype=float)
    if finite.size == 0:
        return Buckets(name, [], {}, True)
    log = getattr(dist, "log", False) and bool((finite > 0).all())
    qs = np.quantile(np.log(finite) if log else finite, np.linspace(0.0, 1.0, FLOAT_BUCKETS + 1))
    edges = np.unique(np.exp(qs) if log else qs)
    labels = [f"{lo:.3g}–{hi:.3g}" for lo, hi in pairwise(edges)] or [hd.short(float(edges[0]))]
    at = {n: int(np.searchsorted(edges, v, side="right")) - 1 for n, v in have if math.isfinite(v)}
    return Buckets(name, labels, {n: min(max(i, 0), len(labels) - 1) for n, i in at.items()}, True)


def _counts(cells: Any, hit: Callable[[Any], bool], shape: tuple[int, ...]) -> tuple[Any, Any]:
    """``cells`` yields ``(item, index)``; returns (trials, hits) per index."""
    n, k = np.zeros(shape), np.zeros(shape)
    for item, idx in cells:
        n[idx] += 1
        k[idx] += hit(item)
    return n, k


def _dependence(b: Buckets, fails: dict[int, bool]) -> float:
    """How much failing depends on this param: the chi-square statistic of failures across its
    buckets as a z-score, ``(chi2 - df) / sqrt(2 df)``: many small buckets do not win by noise."""
    n, k = _counts(b.of.items(), fails.__getitem__, (len(b.labels),))
    rate = k.sum() / n.sum() if n.sum() else 0.0
    if rate in (0.0, 1.0):
        return 0.0
    chi2 = float(((k - n * rate) ** 2 / np.maximum(n * rate * (1.0 - rate), 1e-12)).sum())
    df = max(1, int((n > 0).sum()) - 1)
    return (chi2 - df) / math.sqrt(2 * df)


def failure_rate(d: Data) -> Drawn:
    trials = [t for t in d.finished if hd.params(t)]
    if not trials:
        raise Skip("no finished trial has parameters")
    fails = {t.number: hd.failed(t) for t in trials}
    if not any(fails.values()):
        raise Skip(f"no trial failed among {len(trials)} finished")
    names = sorted({k for t in trials for k in hd.params(t)})
    buckets = [b for name in names if len((b := bucket(trials, name)).labels) >= 2]
    if not buckets:
        raise Skip("every parameter has a single value")
    # Categorical and int params first (batch size, model, precision: what decides memory and
    # stability), then floats in quantile buckets; within each, by dependence of failing on them.
    buckets.sort(key=lambda b: (b.is_float, -round(_dependence(b, fails), 9), b.name))
    chosen, others = buckets[:2], [b.name for b in buckets[2:]]
    classes = Counter(c for t in trials if fails[t.number] and (c := hd.failure_class(t)))
    panels: list[Panel] = [("any failure", lambda t: fails[t.number])]
    if len(classes) >= 2:
        focus = "oom" if "oom" in classes else classes.most_common(1)[0][0]
        panels.append((focus, lambda t: hd.failure_class(t) == focus))
    fig, alt = _heatmap(trials, chosen, panels)
    more = f"{', '.join(others[:8])}{'…' if len(others) > 8 else ''}"
    also = f" (also seen: {more})" if others else ""
    caption = f"Parameters: {', '.join(b.name for b in chosen)} (categorical and integer parameters first, then those the failures depend on most){also}. A failure is a FAIL, or a PRUNED trial tagged with a failure class (OOM). Floats are in quantile buckets; cells read rate and failed/total."
    return Drawn("failure-rate", alt, caption, hd.png(fig))


def _heatmap(trials: Sequence[FrozenTrial], chosen: list[Buckets], panels: list[Panel]) -> Any:
    """One panel per failure kind: rate and failed/total per cell (one row with one param)."""
    by = " and ".join(b.name for b in chosen)
    if len(chosen) == 1:
        chosen = [Buckets("", ["all"], dict.fromkeys(chosen[0].of, 0), False), *chosen]
    ya, xa = sorted(chosen, key=lambda b: len(b.labels))  # the param with more buckets across
    shape = (len(ya.labels), len(xa.labels))
    both = [t for t in trials if t.number in xa.of and t.number in ya.of]
    cells = [(t, (ya.of[t.number], xa.of[t.number])) for t in both]
    width = min(6.5, 1.8 + 0.9 * len(xa.labels)) * len(panels) + 0.8
    fig = hd.new_figure(max(width, 7.0), max(min(9.0, 1.8 + 0.55 * len(ya.labels)), 3.4))
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    cmap = colormaps["Reds"].with_extremes(bad="#eeeeee")
    rotate = {"rotation": 30, "ha": "right"} if max(map(len, xa.labels)) > 6 else {}
    for p, (ax, (title, hit)) in enumerate(zip(axes, panels, strict=True)):
        n, k = _counts(cells, hit, shape)
        rate = np.where(n > 0, k / np.maximum(n, 1), np.nan)
        im = ax.imshow(np.ma.masked_invalid(rate), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
        for (i, j), nij in np.ndenumerate(n):
            text = f"{rate[i, j]:.0%}\n{int(k[i, j])}/{int(nij)}" if nij else "–"
            color = ("white" if rate[i, j] > 0.6 else "black") if nij else "#999999"
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color=color)
        ax.set_xticks(range(shape[1]), xa.labels, fontsize=8, **rotate)
        ax.set_yticks(range(shape[0]), ya.labels, fontsize=8)
        ax.set(xlabel=xa.name, ylabel=ya.name, title=f"{title} rate")
        if p == 0:
            i, j = np.unravel_index(int(np.nanargmax(np.where(n > 0, rate, -1.0))), shape)
            at = ", ".join(f"{b.name}={b.labels[x]}" for b, x in ((ya, i), (xa, j)) if b.name)
            worst = f"highest failure rate {rate[i, j]:.0%} ({int(k[i, j])}/{int(n[i, j])}) at {at}"
    fig.colorbar(im, ax=list(axes), shrink=0.8, label="rate")
    fig.suptitle(f"Failure rate by {by.replace(' and ', ' × ')}")
    return fig, f"Heatmap of the failure rate by {by} ({', '.join(p for p, _ in panels)}); {worst}"


def retries(d: Data) -> Drawn:
    rs = [t for t in d.trials if attrs.read(t.user_attrs, attrs.RETRY_OF) is not None]
    rows = [(str(attrs.read(t.user_attrs, attrs.RETRY_REASON) or "?"), t.state.name) for t in rs]
    if not rows:
        raise Skip("no trial was retried")
    reasons = Counter(r for r, _ in rows).most_common()
    fig = hd.new_figure(10.0, max(2.6, 1.4 + 0.45 * len(reasons)))
    ax: Any = fig.add_subplot()
    left = np.zeros(len(reasons))
    for state, color in hd.STATE_COLORS.items():
        if (n := np.array([rows.count((r, state)) for r, _ in reasons], dtype=float)).any():
            label = f"retry {state} ({int(n.sum())})"
            ax.barh([r for r, _ in reasons], n, left=left, color=color, label=label)
            left += n
    ax.invert_yaxis()
    ax.xaxis.get_major_locator().set_params(integer=True)
    labels = ("Retries by reason and outcome", "retries, by how each ended", "failure class")
    hd.dress(ax, *labels, loc="lower right", grid="x")
    outcome = hd.counted(Counter(s for _, s in rows))
    alt = f"Horizontal bars of {len(rows)} retries by reason: {hd.counted(reasons)}; outcome: {outcome}"
    caption = "Trials hpo re-ran with the same parameters (hpo:retry_of), by the failure class that caused the retry, coloured by how the retry ended."
    return Drawn("retries", alt, caption, hd.png(fig))


def _peak(t: FrozenTrial) -> float:
    p = attrs.read(t.user_attrs, attrs.PEAK_GPU_MEM_MB)
    return float(p) if isinstance(p, int | float) else 0.0


def peak_memory(d: Data) -> Drawn:
    measured = [t for t in d.trials if _peak(t) > 0]
    if not measured:
        raise Skip("no trial has a measured peak_gpu_mem_mb (CPU run, or a study not run by hpo)")
    names = sorted({k for t in measured for k in hd.params(t)})
    if not names:
        raise Skip("the trials with a measured peak have no parameters")
    # The few-valued params first (model, batch size: what decides memory), four at most.
    buckets = [bucket(measured, n) for n in names]
    chosen = [n for *_, n in sorted((b.is_float, len(b.labels), b.name) for b in buckets)[:4]]
    ooms = [t for t in d.trials if hd.failure_class(t) == "oom"]
    peaks = [(t.number, t.state.name, _peak(t)) for t in measured]
    rows, cols = math.ceil(len(chosen) / 2), min(2, len(chosen))
    fig = hd.new_figure(10.0, 3.4 * rows + 0.4)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    rng = np.random.default_rng(0)
    for ax, name in zip(axes, chosen, strict=False):  # peaks by bucket, jittered within each
        b = bucket(d.trials, name)
        x = {n: i + rng.uniform(-0.18, 0.18) for n, i in b.of.items()}
        for state in ("COMPLETE", "PRUNED", "FAIL"):
            if pts := [(x[n], p) for n, s, p in peaks if s == state and n in x]:
                style = {"s": 18, "alpha": 0.7, "color": hd.STATE_COLORS[state], "label": state}
                ax.scatter(*zip(*pts, strict=True), **style)
        oom_x = [x[t.number] for t in ooms if t.number in x]
        style = {"marker": "x", "color": "#d62728", "s": 40, "label": f"OOM ({len(oom_x)})"}
        hd.mark_along(ax, oom_x, 0.96, **style)
        # Limits set by hand: markers drawn in axes coordinates confuse autoscaling.
        ax.set_xticks(range(len(b.labels)), b.labels, fontsize=8, rotation=20 if b.is_float else 0)
        ax.set_xlim(-0.5, len(b.labels) - 0.5)
        hd.dress(ax, "", name, "peak GPU memory (MB)", "lower right")
    for ax in axes[len(chosen) :]:
        ax.set_visible(False)
    fig.suptitle("Peak GPU memory against parameters")
    lo, hi = min(p for *_, p in peaks), max(p for *_, p in peaks)
    alt = f"Scatter of measured peak GPU memory (MB) against {', '.join(chosen)} for {len(measured)} trials; peaks from {lo:,.0f} to {hi:,.0f} MB; {len(ooms)} OOM trial(s) marked at the top"
    caption = "Peak memory as measured by the worker (max reserved by PyTorch's allocator, or the simulated backend); red × at the top: trials that ran out of memory, whose peak is not known."
    return Drawn("peak-memory", alt, caption, hd.png(fig))
