from __future__ import annotations

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


def run_hpo(*args: str, timeout: float = 180, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    full_env.setdefault("PYTHONPATH", str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "hpo.cli", *args],
        capture_output=True, text=True, timeout=timeout, env=full_env, cwd=str(cwd or ROOT),
    )


def start_hpo(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.Popen[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "hpo.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=full_env, cwd=str(ROOT), **kw,
    )


def run_processes(run_dir: Path) -> list[psutil.Process]:
    """Every live process that belongs to the run (workers and their descendants carry HPO_RUN_DIR)."""
    want = str(Path(run_dir).resolve())
    found = []
    for p in psutil.process_iter(["pid"]):
        if p.pid == os.getpid():
            continue
        try:
            if p.status() == psutil.STATUS_ZOMBIE:
                continue
            if p.environ().get("HPO_RUN_DIR") == want:
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
