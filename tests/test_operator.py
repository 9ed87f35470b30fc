"""The operator's view: hpo failures / status on real studies, live display under tmux."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import time
from pathlib import Path

import optuna
import pytest

from tests.conftest import ROOT, run_hpo, start_hpo, write_config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def chaos_study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("chaos")
    run_dir = tmp / "run"
    cfg = write_config(
        tmp / "chaos.yaml",
        study="chaos",
        objective="hpo.testing.objectives:quadratic",
        run_dir=str(run_dir),
        n_trials=40,
        workers=3,
        chaos=0.3,
        chaos_seed=11,
        sampler={"name": "random", "seed": 2},
    )
    proc = run_hpo("run", str(cfg), "--quiet", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return cfg, f"sqlite:///{run_dir / 'study.db'}"


def test_failures_json_lists_every_non_complete_trial(chaos_study: tuple[Path, str]) -> None:
    cfg, url = chaos_study
    proc = run_hpo("failures", str(cfg), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    study = optuna.load_study(study_name="chaos", storage=url)
    expected = {t.number for t in study.trials if t.state != optuna.trial.TrialState.COMPLETE}
    assert {r["number"] for r in rows} == expected and rows
    for r in rows:
        for key in (
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
        ):
            assert key in r
        assert r["failure_class"]
    retried = [r for r in rows if r["failure_action"] == "retry"]
    assert retried, "the chaos study is seeded to have retried trials"
    retries = {t.user_attrs.get("hpo:retry_of") for t in study.trials}
    assert all(r["number"] in retries for r in retried)


def test_failures_filters_and_formats(chaos_study: tuple[Path, str]) -> None:
    cfg, url = chaos_study
    rows = json.loads(run_hpo("failures", str(cfg), "--format", "json").stdout)
    some_class = rows[0]["failure_class"]
    only = json.loads(
        run_hpo("failures", str(cfg), "--format", "json", "--class", some_class).stdout
    )
    assert only and all(r["failure_class"] == some_class for r in only)
    assert len(only) == sum(r["failure_class"] == some_class for r in rows)
    fails = json.loads(
        run_hpo(
            "failures", "--storage", url, "--study", "chaos", "--format", "json", "--state", "FAIL"
        ).stdout
    )
    assert all(r["state"] == "FAIL" for r in fails)
    text = run_hpo("failures", str(cfg), "--format", "csv").stdout
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert len(parsed) == len(rows)
    table = run_hpo("failures", str(cfg))
    assert table.returncode == 0 and some_class in table.stdout
    assert (
        json.loads(run_hpo("failures", str(cfg), "--format", "json", "--since", "1h").stdout)
        == rows
    )
    assert (
        json.loads(
            run_hpo("failures", str(cfg), "--format", "json", "--since", "2099-01-01").stdout
        )
        == []
    )


def test_failures_one_trial_in_full(chaos_study: tuple[Path, str]) -> None:
    cfg, url = chaos_study
    rows = json.loads(run_hpo("failures", str(cfg), "--format", "json").stdout)
    crashed = next(r for r in rows if r["exception_type"])
    proc = run_hpo("failures", str(cfg), "--trial", str(crashed["number"]))
    assert proc.returncode == 0
    assert "traceback:" in proc.stdout and "Traceback (most recent call last)" in proc.stdout
    assert "log tail" in proc.stdout and "[hpo chaos] injecting" in proc.stdout
    proc = run_hpo("failures", str(cfg), "--trial", "9999")
    assert proc.returncode == 2 and "out of range" in proc.stderr


def test_status(chaos_study: tuple[Path, str]) -> None:
    cfg, _ = chaos_study
    data = json.loads(run_hpo("status", str(cfg), "--format", "json").stdout)
    assert data["states"]["COMPLETE"] + data["states"]["PRUNED"] == 40
    assert data["states"]["RUNNING"] == 0
    assert data["failure_classes"] and data["best"]["value"] is not None
    assert data["target"] == 40
    text = run_hpo("status", str(cfg)).stdout
    assert "states:" in text and "best:" in text


def test_plain_optuna_study_and_bad_names(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'plain.db'}"
    s = optuna.create_study(study_name="plain", storage=url)
    s.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    s.enqueue_trial({"x": 0.5})
    proc = run_hpo("failures", "--storage", url, "--study", "plain", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["state"] for r in rows] == ["WAITING"] and rows[0]["failure_class"] is None
    assert run_hpo("status", "--storage", url, "--study", "plain").returncode == 0
    proc = run_hpo("failures", "--storage", url, "--study", "nope")
    assert proc.returncode == 3 and "no study 'nope'" in proc.stderr and "plain" in proc.stderr
    optuna.create_study(study_name="empty", storage=url)
    proc = run_hpo("failures", "--storage", url, "--study", "empty")
    assert proc.returncode == 0 and "no failed" in proc.stdout
    proc = run_hpo("status", "--storage", url, "--study", "empty")
    assert proc.returncode == 0


@pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
)
def test_live_display_under_tmux_and_plain_lines_when_piped(tmp_path: Path) -> None:
    run_dir = tmp_path / "live"
    cfg = write_config(
        tmp_path / "live.yaml",
        study="live",
        objective="hpo.testing.objectives:quadratic",
        objective_kwargs={"sleep_s": 0.6},
        run_dir=str(run_dir),
        n_trials=12,
        workers=2,
    )
    session = f"hpo-test-{int(time.time() * 1000) % 100000}"
    hpo = (
        str(Path(ROOT / ".venv" / "bin" / "hpo"))
        if (ROOT / ".venv" / "bin" / "hpo").exists()
        else "hpo"
    )
    subprocess.run(
        [
            "tmux",
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "160",
            "-y",
            "40",
            f"{hpo} run {cfg}; sleep 30",
        ],
        check=True,
    )
    try:
        screen = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.5)
            screen = subprocess.run(
                ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
            ).stdout
            if "elapsed" in screen and "cpu" in screen and "COMPLETE" in screen:
                break
        assert "slot" in screen and "elapsed" in screen, screen
        assert "cpu" in screen and "COMPLETE" in screen  # slot rows, then counts by state
        (tmp_path / "screen.txt").write_text(screen)  # kept with the test's other files
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    piped = run_hpo("run", str(cfg), "--n-trials", "14")
    assert piped.returncode == 0
    assert "\x1b[" not in piped.stdout  # plain lines, no terminal control codes
    assert "trial" in piped.stdout and "COMPLETE" in piped.stdout


def test_dashboard_serves_the_study_with_hpo_tags(chaos_study: tuple[Path, str]) -> None:
    import socket
    import urllib.request

    cfg, url = chaos_study
    if (
        not (ROOT / ".venv" / "bin" / "optuna-dashboard").exists()
        and shutil.which("optuna-dashboard") is None
    ):
        pytest.skip("optuna-dashboard is not installed (pip install 'hpo[dashboard]')")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Its own process group: the server it starts is killed with it at teardown (conftest).
    proc = start_hpo("dashboard", str(cfg), "--port", str(port))
    try:
        body = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/studies", timeout=2
                ) as resp:
                    body = resp.read().decode()
                    break
            except OSError:
                time.sleep(0.5)
        assert "chaos" in body, body[:500]
        studies = json.loads(body)["study_summaries"]
        study_id = next(s["study_id"] for s in studies if s["study_name"] == "chaos")
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/api/studies/{study_id}?after=0", timeout=10
        ) as resp:
            detail = resp.read().decode()
        assert "failure_class" in detail and "cuda_error" in detail
    finally:
        proc.terminate()
        proc.wait(10)
    # hpo dashboard became the server (exec): after its SIGTERM no server is left behind.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _dashboards(url):
        time.sleep(0.2)
    assert not _dashboards(url), "optuna-dashboard outlived `hpo dashboard`"


def _dashboards(url: str) -> list[int]:
    import psutil

    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(p.info.get("cmdline") or [])
        if "optuna-dashboard" in cmd and url in cmd:
            found.append(p.pid)
    return found
