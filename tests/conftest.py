from __future__ import annotations

import json
import os
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


def write_config(path: Path, **cfg: Any) -> Path:
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def run_hpo(
    *args: str, timeout: float = 180, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    full_env.setdefault("PYTHONPATH", str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "hpo.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=str(cwd or ROOT),
    )


def start_hpo(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.Popen[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "hpo.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
        cwd=str(ROOT),
        **kw,
    )


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


def load_study(run_dir: Path, name: str) -> optuna.Study:
    return optuna.load_study(study_name=name, storage=f"sqlite:///{run_dir / 'study.db'}")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    return d
