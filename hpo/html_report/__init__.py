"""``hpo report``: ``<out>/report.html``, one self-contained page (figures as PNG data URIs, no
script, no network), and each figure as ``<out>/<name>.png``. Each figure is an ``<img
id="fig-<name>">`` with ``alt`` text; one that does not apply is listed under "Skipped figures"
with the reason (``FIGURES`` names them all). Optuna's figures are Optuna's
(:mod:`.optuna_figures`), hpo's own in :mod:`.figures`; the page is the autoescaped jinja2
template ``hpo/templates/report.html.j2``. Any Optuna storage and study works: plain Optuna,
all failed, multi-objective (the Pareto front), empty (a page saying so; ``main`` exits 1).
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import logging
import math
import os
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import jinja2
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from hpo import __version__, attrs
from hpo import storage as st
from hpo.errors import ConfigError
from hpo.html_report import data as hd
from hpo.html_report import figures as hf
from hpo.html_report import optuna_figures as of

__all__ = ["FIGURES", "main", "write_report"]

log = logging.getLogger(__name__)

#: Every figure the page may hold, in page order: name -> (title, how it is drawn).
_ALL: dict[str, tuple[str, Callable[[hd.Data], hd.Drawn]]] = {
    "timeline": ("Timeline of trials and device events", of.timeline),
    "failure-classes": ("Failures by class over time", hf.failure_classes),
    "failure-rate": ("Failure rate by parameter", hf.failure_rate),
    "retries": ("Retries by reason and outcome", hf.retries),
    "peak-memory": ("Peak GPU memory against parameters", hf.peak_memory),
    "history": ("Optimisation history", of.history),
    "importance": ("Parameter importances", of.importance),
    "pareto-front": ("Pareto front", of.pareto_front),
}
FIGURES: dict[str, str] = {name: title for name, (title, _) in _ALL.items()}
TOP_N = 10
MAX_EVENT_ROWS = 300
_TRIM: Any = {"trim_blocks": True, "lstrip_blocks": True}


def write_report(url: str, study_name: str | None, out_dir: Path, run_dir: Path | None) -> Path:
    """Write ``<out_dir>/report.html`` and the figures; return the HTML's path. ``run_dir``: the
    run folder whose ``events.jsonl`` has the device events (None: only the quarantines recorded
    in the study). ``StorageError`` for a missing study, ``ConfigError`` for an unwritable out."""
    return _build(hd.load(st.load_study(url, study_name), run_dir), Path(out_dir), url)


def main(url: str, name: str | None, out: str | None, run_dir: Path | None) -> int:
    """``hpo report``: print the HTML's path; 1 when the study has no trials. Without ``out``
    the report goes to ``<run folder>/report``: the config's, else the one the trials record
    (``hpo:owner``) on this host, else ``./hpo-report-<study>``, said on stderr."""
    study = st.load_study(url, name)
    d = hd.load(study, run_dir)
    if run_dir is None and (found := st.owner_run_dir(d.trials)) is not None:
        d = hd.load(study, found)  # its event log adds the device events
    if out is None and d.run_dir is None:
        out = f"hpo-report-{re.sub(r'[^A-Za-z0-9._-]+', '_', study.study_name).strip('_')}"
        say = f"study {study.study_name!r} has no run folder on this host: writing to ./{out} (choose with -o)"
        click.echo(f"hpo: {say}", err=True)
    with _without_sklearn():
        path = _build(d, Path(out) if out else Path(d.run_dir or ".") / "report", url)
    click.echo(str(path.resolve()))
    if not d.trials:
        say = f"study {study.study_name!r} has no trials: the report has nothing to show"
        click.echo(f"hpo: {say}", err=True)
    return 0 if d.trials else 1


@contextlib.contextmanager
def _without_sklearn() -> Iterator[None]:
    """Import ``optuna.importance`` without scikit-learn: its fANOVA evaluator, which the report
    does not use (PED-ANOVA needs neither), imports scikit-learn and SciPy when installed, about
    40 % of the report's time. ``None`` in ``sys.modules`` makes that import fail, as Optuna's
    ``try_import`` allows; only in the ``hpo report`` process (fANOVA unusable there after)."""
    blocked = "sklearn" not in sys.modules and "optuna.importance" not in sys.modules
    if blocked:
        sys.modules["sklearn"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if blocked and sys.modules.get("sklearn", 0) is None:
            del sys.modules["sklearn"]


def _build(d: hd.Data, out_dir: Path, url: str) -> Path:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = f"report folder {str(out_dir)!r} cannot be created: {exc.strerror}"
        raise ConfigError(why) from None
    drawn: list[hd.Drawn] = []
    skipped: list[tuple[str, str]] = []
    for name, (_, draw) in _ALL.items():
        try:
            if not d.trials:
                raise hd.Skip("the study has no trials")
            drawn.append(draw(d))
        except hd.Skip as skip:
            skipped.append((name, str(skip)))
        except Exception as exc:  # one broken figure must not cost the whole report
            log.warning("figure %s failed: %s", name, exc, exc_info=True)
            skipped.append((name, f"could not be drawn: {type(exc).__name__}: {exc}"))
    for fig in drawn:
        _write_atomic(out_dir / f"{fig.name}.png", fig.png)
    for name in set(FIGURES) - {f.name for f in drawn}:  # no stale PNG of an earlier report
        (out_dir / f"{name}.png").unlink(missing_ok=True)
    _write_atomic(out_dir / "report.html", _page(d, drawn, skipped, url).encode("utf-8"))
    return out_dir / "report.html"


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"cannot write {str(path)!r}: {exc.strerror}") from None


def _page(d: hd.Data, drawn: list[hd.Drawn], skipped: list[tuple[str, str]], url: str) -> str:
    """Render the template on ``d`` and what is computed here; the template formats."""
    loader = jinja2.PackageLoader("hpo", "templates")
    strict = jinja2.StrictUndefined  # autoescape: nothing from the study reaches it as markup
    env = jinja2.Environment(loader=loader, undefined=strict, autoescape=True, **_TRIM)
    env.filters.update(short=hd.short, when=hd.when, hpo_attr=_attr)
    env.filters.update(g6="{:.6g}".format, blank=lambda v: "" if v is None else v)
    env.globals.update(counted=hd.counted, Counter=Counter)
    names = d.study.metric_names or [f"objective {i}" for i in range(len(d.study.directions))]
    directions = [x.name.lower() for x in d.study.directions]
    return env.get_template("report.html.j2").render(
        d=d,
        storage=st.redact(url),
        directions=directions,
        objectives=[f"{n} {x}" for n, x in zip(names, directions, strict=True)],
        written=dt.datetime.now().isoformat(sep=" ", timespec="seconds"),
        version=__version__,
        failures=_failures(d),
        best=_best(d),
        figures=[(f, base64.b64encode(f.png).decode("ascii")) for f in drawn],
        skipped=[(name, FIGURES[name], why) for name, why in skipped],
        events=d.events[-MAX_EVENT_ROWS:],
    )


def _attr(t: FrozenTrial, name: str) -> Any:
    v = attrs.read(t.user_attrs, getattr(attrs, name))
    return "" if v is None else v


def _failures(d: hd.Data) -> list[tuple[str, list[FrozenTrial], Counter[str], Counter[str], str]]:
    """Per failure class, most frequent first: trials, states, actions, a first message line."""
    by_class: dict[str, list[FrozenTrial]] = defaultdict(list)
    for t in filter(hd.failed, d.trials):
        by_class[hd.failure_class(t) or "(untagged)"].append(t)
    rows = []
    for cls, ts in sorted(by_class.items(), key=lambda kv: -len(kv[1])):
        actions = Counter(str(a) for t in ts if (a := _attr(t, "FAILURE_ACTION")))
        msg = next((m.splitlines()[0] for t in ts if (m := str(_attr(t, "ERROR_MSG")).strip())), "")
        rows.append((cls, ts, Counter(t.state.name for t in ts), actions, msg[:160]))
    return rows


def _best(d: hd.Data) -> list[FrozenTrial]:
    """The best ``TOP_N`` trials of one objective, or the whole Pareto front by number."""
    if not d.single_objective:
        with contextlib.suppress(Exception):
            return sorted(d.study.best_trials, key=lambda t: t.number)
        return []
    done = [t for t in d.trials if t.state == TrialState.COMPLETE and t.values]
    finite = [t for t in done if math.isfinite(float(t.values[0]))]
    maximize = d.study.directions[0] == StudyDirection.MAXIMIZE
    return sorted(finite, key=lambda t: float(t.values[0]), reverse=maximize)[:TOP_N]
