"""Read-only views of a study: the run summary, ``hpo status`` and ``hpo failures``.

Works on any Optuna storage, including studies written by plain Optuna without ``hpo`` tags
(the columns it lacks are left empty).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from optuna.trial import FrozenTrial, TrialState

from hpo import attrs
from hpo import storage as st
from hpo.errors import ConfigError, ExitCode
from hpo.paths import RunPaths

if TYPE_CHECKING:
    from hpo.supervisor import Supervisor


def _best(study: Any) -> tuple[float | None, dict[str, Any], int | None]:
    if len(study.directions) != 1:
        return None, {}, None
    try:
        b = study.best_trial
        return b.value, b.params, b.number
    except ValueError:
        return None, {}, None


def metric_names(study: Any) -> list[str]:
    """The study's metric names (``study.set_metric_names``, or ``metric_names`` in the YAML),
    else ``value`` / ``values[i]``."""
    n = len(study.directions)
    return list(study.metric_names or (["value"] if n == 1 else [f"values[{i}]" for i in range(n)]))


def _metrics_line(study: Any) -> str:
    """``val_f1 (maximize), latency_ms (minimize)``."""
    dirs = [d.name.lower() for d in study.directions]
    return ", ".join(f"{m} ({d})" for m, d in zip(metric_names(study), dirs, strict=False))


def pareto_front(study: Any) -> list[dict[str, Any]] | None:
    """``study.best_trials`` of a multi-objective study as ``{trial, values, params}``, by trial
    number (None for a single-objective study)."""
    if len(study.directions) < 2:
        return None
    front = sorted(study.best_trials, key=lambda t: t.number)
    return [{"trial": t.number, "values": t.values, "params": t.params} for t in front]


def _values(values: Sequence[float]) -> str:
    return "[" + ", ".join(f"{v:.6g}" for v in values) + "]"


def _front_lines(front: list[dict[str, Any]], prefix: str, limit: int = 10) -> list[str]:
    lines = [
        f"{prefix}trial {r['trial']}: values {_values(r['values'])} "
        f"params {json.dumps(r['params'], default=str)}"
        for r in front[:limit]
    ]
    if len(front) > limit:
        lines.append(f"{prefix}... and {len(front) - limit} more (hpo status --format json)")
    return lines


def run_summary(sup: Supervisor, code: int, address: str = "") -> str:
    """The end of ``hpo run``: exit code, counts, the best trial or the Pareto front named by its
    metric(s), and the commands to look further (``address`` names the study for them)."""
    lines = []
    try:
        all_trials = st.trials(sup.store.study)
    except Exception:
        all_trials = []
    by_state = Counter(t.state.name for t in all_trials)
    meaning = (sup.stop_message if code == 0 else None) or ExitCode.describe(code)
    lines.append(f"hpo: study {sup.cfg.study!r} finished with exit code {code} ({meaning})")
    lines.append(
        "hpo: trials in study: "
        + ", ".join(
            f"{k} {by_state.get(k, 0)}"
            for k in ("COMPLETE", "PRUNED", "FAIL", "RUNNING", "WAITING")
        )
        + f" (target {sup.cfg.n_trials} COMPLETE+PRUNED)"
    )
    if sup.recovered:
        lines.append(f"hpo: recovered {sup.recovered} trial(s) left running by a dead supervisor")
    if sup.stats.counts:
        lines.append("hpo: this run: " + sup.stats.tally())
    if hasattr(sup, "store"):
        study = sup.store.study
        value, params, number = _best(study)
        if value is not None:
            lines.append(
                f"hpo: best trial {number}: {_metrics_line(study)} {value:.6g} "
                f"params {json.dumps(params, default=str)}"
            )
        front = pareto_front(study)
        if front:
            lines.append(f"hpo: Pareto front, {len(front)} trial(s) of {_metrics_line(study)}:")
            lines += _front_lines(front, "hpo:   ")
    for k, v in sup.preflight_facts.items():
        if isinstance(v, float):
            lines.append(f"hpo: {k}: {v:.4f}")
        else:
            lines.append(f"hpo: {k}: {v}")
    lines.append(f"hpo: storage {st.redact(sup.cfg.storage_url)}; logs in {sup.run_dir}")
    if address and hasattr(sup, "store"):
        lines.append(f"hpo: next: hpo status {address}")
        lines.append(f"hpo:       hpo failures {address}")
        lines.append(f"hpo:       hpo report {address}")
    return "\n".join(lines)


def run_dir_of(url: str, name: str | None) -> Path | None:
    """The run folder of a study given by its storage: the folder of a SQLite file that holds a
    run (its ``events.jsonl``), else the folder recorded as a trial's owner on this host."""
    if url.startswith("sqlite:///"):
        folder = Path(url.removeprefix("sqlite:///")).parent
        if RunPaths(folder).events.is_file():
            return folder
    study = st.load_study(url, name)
    for t in reversed(st.trials(study)):
        owner = t.system_attrs.get(st.OWNER_KEY) or {}
        if owner.get("host") == st.HOST and owner.get("run_dir"):
            folder = Path(owner["run_dir"])
            if folder.is_dir():
                return folder
    return None


# ---------------------------------------------------------------- status
def _rate(done: Sequence[dt.datetime]) -> float | None:
    """Finished trials per hour over the last hour of finishes (or the whole span)."""
    if len(done) < 2:
        return None
    span = (max(done) - min(done)).total_seconds()
    recent = [d for d in done if (max(done) - d).total_seconds() <= 3600]
    span_recent = (max(recent) - min(recent)).total_seconds() if len(recent) > 1 else span
    if span_recent <= 0:
        return None
    return (len(recent) - 1) / span_recent * 3600


def status(url: str, name: str | None, fmt: str = "table", config: str | None = None) -> int:
    study = st.load_study(url, name)
    by_state = Counter(st.state_counts(study))
    trials = st.trials_uncached(study, (TrialState.FAIL, TrialState.PRUNED, TrialState.RUNNING))
    by_class = Counter(
        attrs.read(t.user_attrs, attrs.FAILURE_CLASS)
        for t in trials
        if attrs.read(t.user_attrs, attrs.FAILURE_CLASS)
    )
    now = dt.datetime.now()
    running = []
    for t in trials:
        if t.state != TrialState.RUNNING:
            continue
        owner = t.system_attrs.get(st.OWNER_KEY) or {}
        age = (now - t.datetime_start).total_seconds() if t.datetime_start else None
        device = owner.get("device")
        running.append(
            {
                "trial": t.number,
                "host": owner.get("host"),
                "pid": owner.get("worker_pid"),
                "device": "cpu" if owner and device is None else device,
                "age_s": round(age, 1) if age is not None else None,
                "params": t.params,
            }
        )
    value, params, number = _best(study)
    target = None
    if config:
        from hpo.config import load_config

        target = load_config(config, {}).n_trials
    done = by_state.get("COMPLETE", 0) + by_state.get("PRUNED", 0)
    rate = _rate(st.completion_times(study))
    eta_s = (target - done) / rate * 3600 if (rate and target and target > done) else None
    events = _recent_events(config)
    states = {k: by_state.get(k, 0) for k in ("COMPLETE", "PRUNED", "FAIL", "RUNNING", "WAITING")}
    data: dict[str, Any] = {
        "study": study.study_name,
        "storage": st.redact(url),
        "states": states,
        "failure_classes": dict(by_class),
        "running": running,
        "metrics": metric_names(study),
        "directions": [d.name.lower() for d in study.directions],
        "best": {"trial": number, "value": value, "params": params} if value is not None else None,
        "pareto_front": pareto_front(study),
        "trials_per_hour": round(rate, 1) if rate else None,
        "target": target,
        "eta_s": round(eta_s) if eta_s else None,
        "events": events,
        "quarantined": [
            {k: q.get(k) for k in ("host", "gpu", "uuid", "reason", "time")}
            for q in st.quarantines(study)
        ],
    }
    if fmt == "json":
        click.echo(json.dumps(data, default=str, indent=2))
        return 0
    click.echo(f"study {data['study']} ({data['storage']})")
    click.echo(
        "states: "
        + "  ".join(f"{k} {v}" for k, v in states.items())
        + (f"   target {target}" if target else "")
    )
    if by_class:
        click.echo("failure classes: " + "  ".join(f"{k} {v}" for k, v in by_class.most_common()))
    if data["best"]:
        click.echo(
            f"best: trial {number} {_metrics_line(study)} {value:.6g} "
            f"{json.dumps(params, default=str)}"
        )
    if data["pareto_front"]:
        front = data["pareto_front"]
        click.echo(f"Pareto front: {len(front)} trial(s) of {_metrics_line(study)}")
        for line in _front_lines(front, "  ", limit=20):
            click.echo(line)
    if rate:
        click.echo(
            f"rate: {rate:.1f} trials/hour"
            + (f", ETA {dt.timedelta(seconds=int(eta_s))}" if eta_s else "")
        )
    for q in data["quarantined"]:
        click.echo(f"quarantined: {_quarantine_line(q)}")
    if running:
        click.echo("running:")
        rows = [
            [
                str(r["trial"]),
                str(r["host"] or ""),
                str(r["pid"] or ""),
                "" if r["device"] is None else str(r["device"]),
                "" if r["age_s"] is None else f"{r['age_s']}s",
                json.dumps(r["params"], default=str),
            ]
            for r in running
        ]
        print_table(None, ["trial", "host", "pid", "device", "age", "params"], rows, indent=2)
    if events:
        click.echo("device and worker events:")
        for e in events:
            click.echo(
                f"  {dt.datetime.fromtimestamp(e['ts']).isoformat(timespec='seconds')} {e['event']} "
                + ", ".join(
                    f"{k}={v}"
                    for k, v in e.items()
                    if k not in ("ts", "event", "host", "supervisor_pid")
                )
            )
    return 0


def _recent_events(config: str | None, limit: int = 10) -> list[dict[str, Any]]:
    if not config:
        return []
    from hpo.config import load_config
    from hpo.events import read_events

    cfg = load_config(config, {})
    evs = [
        e
        for e in read_events(RunPaths(cfg.run_path).events)
        if e.get("event")
        in (
            "worker_recycled",
            "device_quarantined",
            "gpu_reset",
            "supervisor_started",
            "supervisor_stopped",
        )
    ]
    return evs[-limit:]


# ---------------------------------------------------------------- failures
FAILURE_FIELDS = [
    "number",
    "state",
    "failure_class",
    "failure_action",
    "attempt",
    "retry_of",
    "exception_type",
    "message",
    "params",
    "device",
    "duration_s",
    "log_path",
    "datetime_start",
    "chaos_fault",
]


def _parse_since(since: str | None) -> dt.datetime | None:
    if not since:
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd])", since.strip())
    if m:
        mult = {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
        return dt.datetime.now() - dt.timedelta(seconds=float(m.group(1)) * mult)
    try:
        return dt.datetime.fromisoformat(since)
    except ValueError:
        raise ConfigError(
            f"--since {since!r}: use an ISO date/time (2026-11-22T08:00) or a duration like 2h, 30m"
        ) from None


def failure_row(t: FrozenTrial) -> dict[str, Any]:
    ua = t.user_attrs
    msg = attrs.read(ua, attrs.ERROR_MSG) or ""
    duration = attrs.read(ua, attrs.DURATION_S)
    if duration is None and t.datetime_start and t.datetime_complete:
        duration = round((t.datetime_complete - t.datetime_start).total_seconds(), 3)
    return {
        "number": t.number,
        "state": t.state.name,
        "failure_class": attrs.read(ua, attrs.FAILURE_CLASS),
        "failure_action": attrs.read(ua, attrs.FAILURE_ACTION),
        "attempt": attrs.read(ua, attrs.ATTEMPT),
        "retry_of": attrs.read(ua, attrs.RETRY_OF),
        "exception_type": attrs.read(ua, attrs.EXCEPTION_TYPE),
        "message": msg.splitlines()[0] if msg else "",
        "params": t.params or t.system_attrs.get("fixed_params", {}),
        "device": attrs.read(ua, attrs.DEVICE),
        "duration_s": duration,
        "log_path": attrs.read(ua, attrs.LOG_PATH),
        "datetime_start": t.datetime_start.isoformat() if t.datetime_start else None,
        "chaos_fault": attrs.read(ua, attrs.CHAOS_FAULT),
    }


def failures(
    url: str,
    name: str | None,
    *,
    classes: Sequence[str] = (),
    states: Sequence[str] = (),
    since: str | None = None,
    trial: int | None = None,
    fmt: str = "table",
    unrecognised: bool = False,
) -> int:
    study = st.load_study(url, name)
    if trial is not None:
        return _show_trial(st.trial_by_number(study, trial), fmt)
    total = sum(st.state_counts(study).values())
    not_complete = [s for s in TrialState if s != TrialState.COMPLETE]
    after = _parse_since(since)
    want_states = {s.upper() for s in states}
    rows = []
    for t in st.trials_uncached(study, not_complete):
        if want_states and t.state.name not in want_states:
            continue
        if classes and attrs.read(t.user_attrs, attrs.FAILURE_CLASS) not in classes:
            continue
        if after and t.datetime_start and t.datetime_start < after:
            continue
        if unrecognised and attrs.read(t.user_attrs, attrs.RECOGNISED, True) is not False:
            continue
        rows.append(failure_row(t))
    if fmt == "json":
        click.echo(json.dumps(rows, default=str, indent=1))
    elif fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=FAILURE_FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({**r, "params": json.dumps(r["params"], default=str)})
        click.echo(buf.getvalue(), nl=False)
    else:
        _failure_table(rows, study.study_name, total)
    return 0


def _failure_table(rows: list[dict[str, Any]], name: str, total: int) -> None:
    if not rows:
        click.echo(f"study {name}: no failed, pruned or unfinished trials among {total}")
        return
    columns = ["#", "state", "class", "action", "try", "retry of", "exception", "message"]
    columns += ["params", "dev", "s", "log"]
    cells = [
        [
            str(r["number"]),
            r["state"],
            r["failure_class"] or "",
            r["failure_action"] or "",
            str(r["attempt"] or ""),
            "" if r["retry_of"] is None else str(r["retry_of"]),
            (r["exception_type"] or "").rsplit(".", 1)[-1],
            (r["message"] or "")[:60],
            ", ".join(f"{k}={_short(v)}" for k, v in r["params"].items())[:60],
            "" if r["device"] is None else str(r["device"]),
            "" if r["duration_s"] is None else f"{r['duration_s']:.1f}",
            Path(r["log_path"]).name if r["log_path"] else "",
        ]
        for r in rows
    ]
    print_table(f"{name}: {len(rows)} of {total} trials did not complete", columns, cells)


def print_table(
    title: str | None,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    indent: int = 0,
    markup: Sequence[Sequence[str]] | None = None,
) -> None:
    """A table on stdout. On a terminal, rich's boxed table (``markup``: the same cells with rich
    styles); piped, plain columns separated by two spaces, one line per row, never wrapped or cut,
    so ``grep``, ``sort`` and a log file see whole rows."""
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, show_lines=False)
        for col in columns:
            table.add_column(col, overflow="fold")
        for row in markup or rows:
            table.add_row(*row)
        Console(file=sys.stdout).print(table)
        return
    flat = [[" ".join(str(c).split()) for c in row] for row in [list(columns), *rows]]
    widths = [max(len(r[i]) for r in flat) for i in range(len(columns))]
    if title:
        click.echo(" " * indent + title)
    for row in flat:
        line = "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
        click.echo(" " * indent + line.rstrip())


def _short(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _show_trial(t: FrozenTrial, fmt: str) -> int:
    ua = dict(t.user_attrs)
    log_tail = ""
    if attrs.read(ua, attrs.LOG_PATH):
        try:
            text = Path(attrs.read(ua, attrs.LOG_PATH)).read_text(
                encoding="utf-8", errors="replace"
            )
            log_tail = "\n".join(text.splitlines()[-40:])
        except OSError as exc:
            log_tail = f"(log not readable here: {exc.strerror})"
    data = {
        "number": t.number,
        "state": t.state.name,
        "params": t.params,
        "values": t.values,
        "intermediate_values": t.intermediate_values,
        "user_attrs": ua,
        "datetime_start": t.datetime_start,
        "datetime_complete": t.datetime_complete,
        "retry_history": t.system_attrs.get("retry_history"),
        "log_tail": log_tail,
    }
    if fmt == "json":
        click.echo(json.dumps(data, default=str, indent=1))
        return 0
    click.echo(f"trial {t.number}: {t.state.name}")
    click.echo(f"  params: {json.dumps(t.params, default=str)}")
    if t.values:
        click.echo(f"  values: {t.values}")
    if t.intermediate_values:
        click.echo(f"  intermediate values: {t.intermediate_values}")
    tb = ua.pop(attrs.TRACEBACK, None) or ua.pop("traceback", None)
    for k in sorted(ua):
        click.echo(f"  {k}: {ua[k]}")
    if tb:
        click.echo("traceback:")
        click.echo(tb)
    if log_tail:
        click.echo(f"log tail ({data['user_attrs'].get('log_path')}):")
        click.echo(log_tail)
    return 0


def quarantine_main(url: str, name: str | None, lift: str | None, host: str | None) -> int:
    """``hpo quarantine``: list the active quarantines, or lift one (exit 2 if none matches)."""
    study = st.load_study(url, name)
    if lift is not None:
        for q in st.lift_quarantine(study, lift, host=host):
            click.echo(f"lifted: GPU {q.get('gpu')} on {q.get('host')} ({q.get('uuid')})")
        return 0
    active = st.quarantines(study, host=host)
    if not active:
        click.echo(f"no GPU is quarantined in study {study.study_name!r}")
    for q in active:
        click.echo(_quarantine_line(q))
    return 0


def _quarantine_line(q: dict[str, Any]) -> str:
    since = dt.datetime.fromtimestamp(float(q.get("time") or 0)).isoformat(timespec="seconds")
    return (
        f"GPU {q.get('gpu')} on {q.get('host')} ({q.get('uuid')}) since {since}: {q.get('reason')}"
    )
