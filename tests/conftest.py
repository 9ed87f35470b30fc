from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import optuna
import psutil
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]

# Hypothesis keeps no example database in the checkout.
try:
    from hypothesis import settings as _hyp_settings

    _hyp_settings.register_profile("hpo", database=None)
    _hyp_settings.load_profile("hpo")
except ImportError:  # pragma: no cover - hypothesis is in the dev extra
    pass


def write_config(path: Path, **cfg: Any) -> Path:
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


# Every process a test starts leads its own process group (session); the autouse fixture
# below kills each group at teardown, so a test that fails half-way (an assertion before its
# own clean-up) never leaves a supervisor, a forkserver or a worker behind.
_STARTED: list[subprocess.Popen[str]] = []


def run_hpo(
    *args: str, timeout: float = 180, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    proc = start_hpo(*args, env=env, cwd=cwd)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def start_hpo(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    wrap: list[str] | None = None,
    **kw: Any,
) -> subprocess.Popen[str]:
    """Start ``hpo ARGS`` in its own process group (killed at teardown); ``wrap`` is a command
    prefix such as ``["unshare", "-u", ...]``."""
    full_env = {**os.environ, **(env or {})}
    full_env.setdefault("PYTHONPATH", str(ROOT))
    proc = subprocess.Popen(
        [*(wrap or []), sys.executable, "-m", "hpo.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
        cwd=str(cwd or ROOT),
        start_new_session=True,
        **kw,
    )
    _STARTED.append(proc)
    return proc


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        pass


@pytest.fixture(autouse=True)
def _kill_started_processes() -> Any:
    yield
    while _STARTED:
        proc = _STARTED.pop()
        _kill_group(proc)  # even when the leader has exited: its group may outlive it
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _worker_pids(run_dir: Path) -> set[int]:
    pids: set[int] = set()
    events = Path(run_dir) / "events.jsonl"
    if events.exists():
        for line in events.read_text().splitlines():
            if '"worker_started"' in line:
                try:
                    pids.add(int(json.loads(line)["pid"]))
                except (ValueError, KeyError):
                    pass
    return pids


def run_processes(run_dir: Path) -> list[psutil.Process]:
    """Every live process of the run: the forkserver, workers and their descendants carry
    HPO_RUN_DIR in their environment; workers are also named in the run's event log."""
    want = str(Path(run_dir).resolve())
    workers = _worker_pids(run_dir)
    found = []
    for p in psutil.process_iter(["pid"]):
        if p.pid == os.getpid():
            continue
        try:
            if p.status() == psutil.STATUS_ZOMBIE:
                continue
            if p.pid in workers or p.environ().get("HPO_RUN_DIR") == want:
                found.append(p)
        except psutil.Error:
            continue
    return found


def assert_no_run_processes(run_dir: Path, within_s: float = 10.0) -> None:
    deadline = time.monotonic() + within_s
    left = run_processes(run_dir)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = run_processes(run_dir)
    assert not left, f"processes of the run still alive: {[(p.pid, p.cmdline()) for p in left]}"


def wait_for_events(run_dir: Path, what: str, at_least: int, timeout: float = 60) -> None:
    """Wait until the run's event log holds ``at_least`` events of kind ``what``."""
    events = Path(run_dir) / "events.jsonl"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if events.exists() and events.read_text().count(f'"{what}"') >= at_least:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {at_least} {what} events in {events} after {timeout}s")


def count_events(run_dir: Path, what: str) -> int:
    events = Path(run_dir) / "events.jsonl"
    return events.read_text().count(f'"{what}"') if events.exists() else 0


def load_study(run_dir: Path, name: str) -> optuna.Study:
    return optuna.load_study(study_name=name, storage=f"sqlite:///{run_dir / 'study.db'}")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    return d
