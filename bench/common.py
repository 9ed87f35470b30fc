"""Shared helpers of the benchmark suite: running ``hpo run``, reading its event log, building
large studies quickly, summarising repeats.

Every section module (``bench/overhead.py``, ...) exposes ``run(quick: bool) -> dict`` and uses
these helpers; ``bench/run_all.py`` composes them. Nothing here asserts on time: numbers are
measured and reported, never checked in tests.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
VENV_BIN = Path(sys.executable).parent
HPO = str(VENV_BIN / "hpo")
PYTHON = sys.executable
STUDY = "bench"
NULL_OBJECTIVE = "hpo.testing.objectives:null_objective"

_WORKDIR: Path | None = None
_DEADLINE: float | None = None
#: Notes for the results, e.g. repeats cut short by the time budget.
NOTES: list[str] = []


def workdir() -> Path:
    """One scratch folder per ``run_all`` invocation (removed at the end unless ``--keep``)."""
    global _WORKDIR
    if _WORKDIR is None:
        _WORKDIR = Path(tempfile.mkdtemp(prefix="hpo-bench-"))
    return _WORKDIR


def scratch(name: str) -> Path:
    """A fresh, empty sub-folder of the work folder."""
    p = workdir() / name
    if p.exists():
        shutil.rmtree(p)
    p.mkdir(parents=True)
    return p


def cleanup() -> None:
    global _WORKDIR
    if _WORKDIR is not None:
        shutil.rmtree(_WORKDIR, ignore_errors=True)
        _WORKDIR = None


def set_deadline(seconds: float | None) -> None:
    """Repeats that would end after ``seconds`` from now are not started (see :func:`repeats`)."""
    global _DEADLINE
    _DEADLINE = None if seconds is None else time.monotonic() + seconds


def time_left() -> float:
    return float("inf") if _DEADLINE is None else _DEADLINE - time.monotonic()


def repeats(n: int, label: str) -> Iterable[int]:
    """``range(n)``, cut short when the next repeat (as long as the average one so far) would
    not end before the deadline; the first repeat always runs. A cut is noted in :data:`NOTES`."""
    start = time.monotonic()
    for i in range(n):
        if i > 0:
            per = (time.monotonic() - start) / i
            if time_left() < per:
                NOTES.append(f"{label}: {i} of {n} repeats (time budget)")
                return
        yield i


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path.resolve()}"


# ------------------------------------------------------------------------------------ numbers
def summary(values: Iterable[float | None], digits: int = 3) -> dict[str, Any]:
    """``{"min", "median", "max", "n"}`` of the values that are not None (all None: Nones)."""
    vals = [float(v) for v in values if v is not None]
    if not vals:
        return {"min": None, "median": None, "max": None, "n": 0}
    return {
        "min": round(min(vals), digits),
        "median": round(statistics.median(vals), digits),
        "max": round(max(vals), digits),
        "n": len(vals),
    }


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-quantile (0..1) by linear interpolation; None for no values."""
    if not values:
        return None
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def trimmed_mean(values: Sequence[float], cut: float = 0.1) -> float | None:
    """Mean without the lowest and highest ``cut`` share: robust to a few outliers (a worker
    recycle) and, unlike the median, finer than the event log's 1 ms resolution."""
    if not values:
        return None
    s = sorted(values)
    k = int(len(s) * cut)
    kept = s[k : len(s) - k] or s
    return sum(kept) / len(kept)


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


# ------------------------------------------------------------------------------------ hpo runs
@dataclass
class HpoRun:
    """One finished ``hpo run`` process and what its event log says."""

    rc: int
    launch_ts: float  # time.time() just before the process was started
    end_ts: float  # time.time() just after it exited
    events: list[dict[str, Any]]
    run_dir: Path
    stderr_tail: str = ""
    timed_out: bool = False
    started: dict[int, float] = field(default_factory=dict)  # trial -> first trial_started ts
    finished: list[dict[str, Any]] = field(default_factory=list)  # trial_finished events
    failed: list[dict[str, Any]] = field(default_factory=list)  # trial_failed events

    def __post_init__(self) -> None:
        for e in self.events:
            kind = e.get("event")
            if kind == "trial_started":
                self.started[int(e["trial"])] = float(e["ts"])
            elif kind == "trial_finished":
                self.finished.append(e)
            elif kind == "trial_failed":
                self.failed.append(e)

    @property
    def wall_s(self) -> float:
        return self.end_ts - self.launch_ts

    @property
    def completed(self) -> list[dict[str, Any]]:
        return [e for e in self.finished if e.get("state") == "COMPLETE"]

    @property
    def first_start_ts(self) -> float | None:
        return min(self.started.values()) if self.started else None

    @property
    def last_finish_ts(self) -> float | None:
        ends = [float(e["ts"]) for e in self.finished + self.failed]
        return max(ends) if ends else None

    @property
    def span_s(self) -> float | None:
        """First trial started to last trial finished: the run without its start-up."""
        a, b = self.first_start_ts, self.last_finish_ts
        return b - a if a is not None and b is not None and b > a else None

    @property
    def startup_s(self) -> float | None:
        """Process launch to the first trial started."""
        a = self.first_start_ts
        return a - self.launch_ts if a is not None else None

    def trials_per_s(self) -> float | None:
        """Completed trials per second over :attr:`span_s` (start-up excluded)."""
        span = self.span_s
        return len(self.completed) / span if span else None

    def overheads_s(self) -> list[float]:
        """Per completed trial: dispatch (``trial_started``) to result recorded
        (``trial_finished``) minus the objective's own ``duration_s``."""
        out = []
        for e in self.completed:
            n = int(e["trial"])
            if n in self.started and e.get("duration_s") is not None:
                out.append(float(e["ts"]) - self.started[n] - float(e["duration_s"]))
        return out

    def durations_s(self) -> list[float]:
        return [float(e["duration_s"]) for e in self.completed if e.get("duration_s") is not None]

    def cycles_s(self) -> list[float]:
        """Gaps between consecutive recorded results (with 1 worker: the whole per-trial cost)."""
        ts = sorted(float(e["ts"]) for e in self.finished + self.failed)
        return [b - a for a, b in zip(ts, ts[1:], strict=False)]

    def worker_boots_s(self) -> list[float]:
        return [float(e["boot_s"]) for e in self.events if e.get("event") == "worker_started"]

    def first_event(self, kind: str) -> dict[str, Any] | None:
        return next((e for e in self.events if e.get("event") == kind), None)

    def describe_failure(self) -> str:
        why = "timed out" if self.timed_out else f"exit code {self.rc}"
        tail = self.stderr_tail.strip().splitlines()[-1:] or [""]
        return f"hpo run {why}: {tail[0][:300]}"


def write_config(path: Path, cfg: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def run_hpo(
    cfg: dict[str, Any], where: Path, timeout_s: float, extra_args: Sequence[str] = ()
) -> HpoRun:
    """Write ``cfg`` as a YAML study config in ``where`` and run ``hpo run CONFIG -q`` on it.

    ``cfg`` gets ``run_dir`` (``where/run``) and ``study`` unless given. The process is killed
    (its whole group) after ``timeout_s``.
    """
    cfg = {"study": STUDY, "run_dir": str(where / "run"), **cfg}
    conf = write_config(where / "study.yaml", cfg)
    out_path, err_path = where / "stdout.txt", where / "stderr.txt"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        launch = time.time()
        proc = subprocess.Popen(
            [HPO, "run", str(conf), "-q", *extra_args],
            cwd=where,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        timed_out = False
        try:
            rc = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            rc = proc.wait()
        end = time.time()
    from hpo.events import read_events

    run_dir = Path(cfg["run_dir"])
    return HpoRun(
        rc=rc,
        launch_ts=launch,
        end_ts=end,
        events=read_events(run_dir / "events.jsonl"),
        run_dir=run_dir,
        stderr_tail=_tail(err_path),
        timed_out=timed_out,
    )


def run_python(
    args: Sequence[str], timeout_s: float, cwd: Path | None = None
) -> tuple[int, str, str]:
    """Run ``python ARGS`` (this venv) and return (rc, stdout, stderr); rc -9 on timeout."""
    try:
        p = subprocess.run(
            [PYTHON, *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
        )
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        return -9, _text(exc.stdout), _text(exc.stderr)


def last_json_line(text: str) -> dict[str, Any] | None:
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                return json.loads(line)
    return None


def _text(b: bytes | str | None) -> str:
    if b is None:
        return ""
    return b.decode(errors="replace") if isinstance(b, bytes) else b


def _tail(path: Path, n: int = 4000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-n:].decode(errors="replace")


def dead_pid() -> int:
    """The pid of a process that existed and has exited (as a dead supervisor's)."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


# ------------------------------------------------------------------------------------ studies
def _ns(tags: dict[str, Any]) -> dict[str, Any]:
    """Tags as the runner writes them: namespaced, plus the seed-compatible keys unprefixed."""
    from hpo import attrs

    out = {attrs.PREFIX + k: v for k, v in tags.items()}
    out.update({plain: out[key] for key, plain in attrs.COMPAT.items() if key in out})
    return out


FAIL_TAGS: tuple[dict[str, Any], ...] = (
    {
        "failure_class": "segfault",
        "failure_action": "retry",
        "failure_summary": "the worker died with SIGSEGV",
        "exception_type": None,
        "error_msg": "worker 4242 died with signal 11 (SIGSEGV) without reporting a result",
        "exit_code": None,
        "signal": "SIGSEGV",
        "cuda_error": False,
        "cuda_error_type": None,
        "cuda_error_msg": None,
        "sticky": False,
    },
    {
        "failure_class": "cuda_context_corrupted",
        "failure_action": "retry",
        "failure_summary": "CUDA kernel fault: the context is unusable",
        "exception_type": "torch.AcceleratorError",
        "error_msg": "CUDA error: an illegal memory access was encountered",
        "exit_code": None,
        "signal": None,
        "cuda_error": True,
        "cuda_error_type": "illegal_memory_access",
        "cuda_error_msg": "CUDA error: an illegal memory access was encountered",
        "sticky": True,
    },
    {
        "failure_class": "user_error",
        "failure_action": "fail",
        "failure_summary": "the objective raised",
        "exception_type": "ValueError",
        "error_msg": "bad config value: expected a positive learning rate",
        "exit_code": None,
        "signal": None,
        "cuda_error": False,
        "cuda_error_type": None,
        "cuda_error_msg": None,
        "sticky": False,
    },
)
OOM_TAGS: dict[str, Any] = {
    "failure_class": "oom",
    "failure_action": "prune",
    "failure_summary": "CUDA out of memory",
    "exception_type": "torch.OutOfMemoryError",
    "error_msg": "CUDA out of memory. Tried to allocate 2.00 GiB.",
    "exit_code": None,
    "signal": None,
    "cuda_error": True,
    "cuda_error_type": "out_of_memory",
    "cuda_error_msg": "CUDA out of memory. Tried to allocate 2.00 GiB.",
    "sticky": False,
}
TRACEBACK = (
    'Traceback (most recent call last):\n  File "objective.py", line 42, in objective\n'
    + "    loss = model(**batch).loss\n" * 60
    + "RuntimeError: CUDA error: an illegal memory access was encountered\n"
)[-4000:]


def study_trials(
    n: int, seed: int = 0, fail_share: float = 0.06, prune_share: float = 0.04
) -> list[Any]:
    """``n`` finished trials as ``hpo run`` of ``null_objective`` leaves them.

    Same distribution as the null objective (``x`` in [-10, 10]); every trial carries hpo's base
    tags (host, worker_pid, log_path, duration_s, attempt) and owner system attr; about
    ``fail_share`` are FAIL with full failure tags (segfault, CUDA illegal access, user error;
    a 4000-character traceback), ``prune_share`` PRUNED (half by the pruner with an intermediate
    value, half OOM-tagged), the rest COMPLETE. One trial per second, ending a minute ago.
    """
    import optuna
    from optuna.distributions import FloatDistribution
    from optuna.trial import TrialState

    rng = random.Random(seed)
    dist = {"x": FloatDistribution(-10.0, 10.0)}
    t0 = dt.datetime.now() - dt.timedelta(seconds=n + 60)
    out = []
    for i in range(n):
        x = rng.uniform(-10.0, 10.0)
        start = t0 + dt.timedelta(seconds=i)
        ua: dict[str, Any] = _ns(
            {
                "host": "bench-host",
                "worker_pid": 10000 + i % 4,
                "log_path": f"/runs/bench/logs/trial-{i:06d}.log",
                "duration_s": round(rng.uniform(0.5, 0.9), 3),
                "attempt": 1,
            }
        )
        sa = {
            "hpo:owner": {
                "host": "bench-host",
                "pid": 9999,
                "ctime": 0.0,
                "run_dir": "/runs/bench",
                "worker_pid": ua["hpo:worker_pid"],
                "device": i % 2,
            }
        }
        u = rng.random()
        kw: dict[str, Any] = {
            "params": {"x": x},
            "distributions": dist,
            "user_attrs": ua,
            "system_attrs": sa,
        }
        if u < fail_share:
            tags = dict(FAIL_TAGS[i % len(FAIL_TAGS)])
            tags["traceback"] = TRACEBACK
            tags["log_path"] = ua["hpo:log_path"]
            ua.update(_ns(tags))
            trial = optuna.trial.create_trial(state=TrialState.FAIL, **kw)
        elif u < fail_share + prune_share:
            if i % 2:
                ua.update(_ns(OOM_TAGS))
                kw["intermediate_values"] = {}
            else:
                kw["intermediate_values"] = {0: x}
            trial = optuna.trial.create_trial(state=TrialState.PRUNED, **kw)
        else:
            trial = optuna.trial.create_trial(value=x, **kw)
        trial.datetime_start = start
        trial.datetime_complete = start + dt.timedelta(seconds=0.9)
        out.append(trial)
    return out


def build_study(path: Path, n: int, seed: int = 0) -> dict[str, Any]:
    """Create ``path`` (SQLite, hpo's settings) holding study ``bench`` with ``n`` finished trials.

    Building 5000 trials through ``study.add_trials`` costs about 35 s on this machine (one ORM
    transaction per trial), so the rows are bulk-inserted in one transaction through Optuna's own
    table definitions, then read back through Optuna and checked against the same trials; if the
    check fails (a schema change), the study is rebuilt with ``study.add_trials``.
    """
    import optuna

    from hpo.storage import open_storage

    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(f"{path}{suffix}")
    trials = study_trials(n, seed)
    t0 = time.perf_counter()
    storage = open_storage(sqlite_url(path))
    study = optuna.create_study(storage=storage, study_name=STUDY)
    method = "bulk"
    try:
        _bulk_insert(storage, study._study_id, trials)
        _check_same(study, trials)
    except Exception as exc:
        method = f"add_trials (bulk insert failed: {type(exc).__name__}: {exc})"
        optuna.delete_study(study_name=STUDY, storage=storage)
        study = optuna.create_study(storage=storage, study_name=STUDY)
        study.add_trials(trials)
    storage.engine.dispose()
    return {"trials": n, "build_s": round(time.perf_counter() - t0, 2), "method": method}


def _bulk_insert(storage: Any, study_id: int, trials: Sequence[Any]) -> None:
    from optuna.distributions import distribution_to_json
    from optuna.storages._rdb import models

    def utc(d: dt.datetime | None) -> dt.datetime | None:
        return d.astimezone(dt.timezone.utc).replace(tzinfo=None) if d else None

    rows: dict[str, list[dict[str, Any]]] = {
        "trials": [],
        "params": [],
        "values": [],
        "inter": [],
        "user": [],
        "system": [],
    }
    for i, t in enumerate(trials):
        tid = i + 1
        rows["trials"].append(
            {
                "trial_id": tid,
                "number": i,
                "study_id": study_id,
                "state": t.state,
                "datetime_start": utc(t.datetime_start),
                "datetime_complete": utc(t.datetime_complete),
            }
        )
        for name, value in t.params.items():
            d = t.distributions[name]
            rows["params"].append(
                {
                    "trial_id": tid,
                    "param_name": name,
                    "param_value": d.to_internal_repr(value),
                    "distribution_json": distribution_to_json(d),
                }
            )
        for k, v in enumerate(t.values or []):
            stored, vtype = models.TrialValueModel.value_to_stored_repr(v)
            rows["values"].append(
                {"trial_id": tid, "objective": k, "value": stored, "value_type": vtype}
            )
        for step, v in t.intermediate_values.items():
            stored, itype = models.TrialIntermediateValueModel.intermediate_value_to_stored_repr(v)
            rows["inter"].append(
                {
                    "trial_id": tid,
                    "step": step,
                    "intermediate_value": stored,
                    "intermediate_value_type": itype,
                }
            )
        for key, v in t.user_attrs.items():
            rows["user"].append({"trial_id": tid, "key": key, "value_json": json.dumps(v)})
        for key, v in t.system_attrs.items():
            rows["system"].append({"trial_id": tid, "key": key, "value_json": json.dumps(v)})
    tables = {
        "trials": models.TrialModel.__table__,
        "params": models.TrialParamModel.__table__,
        "values": models.TrialValueModel.__table__,
        "inter": models.TrialIntermediateValueModel.__table__,
        "user": models.TrialUserAttributeModel.__table__,
        "system": models.TrialSystemAttributeModel.__table__,
    }
    with storage.engine.begin() as conn:
        for key, table in tables.items():
            if rows[key]:
                conn.execute(table.insert(), rows[key])


def _check_same(study: Any, trials: Sequence[Any]) -> None:
    got = study.get_trials(deepcopy=False)
    if len(got) != len(trials):
        raise ValueError(f"{len(got)} trials read back, {len(trials)} written")
    for i in sorted({0, 1, len(trials) // 2, len(trials) - 1} | set(range(0, len(trials), 97))):
        a, b = got[i], trials[i]
        for attr in ("number", "state", "params", "values", "user_attrs", "system_attrs"):
            want = i if attr == "number" else getattr(b, attr)
            if getattr(a, attr) != want:
                raise ValueError(f"trial {i}: {attr} differs after reading back")
        if a.intermediate_values != b.intermediate_values:
            raise ValueError(f"trial {i}: intermediate values differ after reading back")


_TEMPLATES: dict[int, Path] = {}


def template(n: int) -> tuple[Path, dict[str, Any]]:
    """A study of ``n`` finished trials (see :func:`build_study`), built once per invocation;
    copy it with :func:`copy_db` before writing to it."""
    path = workdir() / f"template-{n}.db"
    info: dict[str, Any] = {"trials": n, "build_s": 0.0, "method": "cached"}
    if n not in _TEMPLATES:
        info = build_study(path, n)
        _TEMPLATES[n] = path
    return _TEMPLATES[n], info


def copy_db(src: Path, dst: Path) -> Path:
    """Copy a SQLite database file, after moving anything still in its WAL into it."""
    import sqlite3

    con = sqlite3.connect(src)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    shutil.copyfile(src, dst)
    return dst


# ------------------------------------------------------------------------------------ machine
def machine() -> dict[str, Any]:
    import optuna
    import psutil
    import sqlalchemy

    try:
        import torch

        torch_v: str | None = torch.__version__
        torch_threads: int | None = torch.get_num_threads()
    except ImportError:
        torch_v, torch_threads = None, None
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cores": os.cpu_count(),
        "cpu": model or platform.processor(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "torch": torch_v,
        "torch_threads": torch_threads,
        "optuna": optuna.__version__,
        "sqlalchemy": sqlalchemy.__version__,
        "hpo_commit": _git_rev(),
    }


def load_average() -> list[float]:
    with contextlib.suppress(OSError):
        return [round(x, 2) for x in os.getloadavg()]
    return []


def _git_rev() -> str | None:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "hpo"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return f"{rev}{'+dirty' if dirty else ''}" if rev else None
    except (OSError, subprocess.SubprocessError):
        return None
