"""Honest verdicts (issue 13), end to end: real supervisors on real SQLite (and PostgreSQL)
storages, asserting on what plain Optuna reads back.

A systematic crash stops the run within the breaker's window; a trial is never pruned for a
failure that was not its own; a supervisor killed mid-trial or mid-call is the supervisor's
fault; a sequence returned to a single-objective study stops at once with a hint; a signal
during start-up exits 130; an OOM caused by packing is retried alone.
"""

from __future__ import annotations

import json
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.trial import TrialState

from tests.conftest import (
    assert_no_run_processes,
    count_events,
    load_study,
    run_hpo,
    start_hpo,
    wait_for_events,
    write_config,
)

pytestmark = pytest.mark.slow


def _attempts(run_dir: Path) -> int:
    events = (run_dir / "events.jsonl").read_text().splitlines()
    return sum(json.loads(e)["event"] == "trial_started" for e in events)


@pytest.mark.parametrize(
    ("objective", "kwargs", "cls", "hint"),
    [
        ("always_crashes", {"how": "sigsegv"}, "segfault", "hpo replay"),
        ("always_cuda_error", {}, "cuda_context_corrupted", "hpo doctor"),
    ],
    ids=["segfault", "illegal-instruction"],
)
def test_a_systematic_crash_stops_within_the_breaker_window(
    tmp_path: Path, run_dir: Path, objective: str, kwargs: dict[str, str], cls: str, hint: str
) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="sys",
        objective=f"hpo.testing.objectives:{objective}",
        objective_kwargs=kwargs,
        run_dir=str(run_dir),
        n_trials=200,
        workers=2,
        max_consecutive_failures=1000,  # the window, not the streak, must catch it
    )
    proc = run_hpo("run", str(cfg), "--quiet", timeout=240)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 4, out
    assert f"failed as {cls}" in out and hint in out and "log:" in out
    assert _attempts(run_dir) < 30
    trials = load_study(run_dir, "sys").get_trials(deepcopy=False)
    assert not [t for t in trials if t.state == TrialState.RUNNING]
    assert_no_run_processes(run_dir)


def test_a_sequence_returned_to_a_single_objective_study_stops_at_once(
    tmp_path: Path, run_dir: Path
) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="pair",
        objective="hpo.testing.objectives:returns_a_pair",
        run_dir=str(run_dir),
        n_trials=20,
    )
    proc = run_hpo("run", str(cfg), "--quiet")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "directions" in proc.stderr and "2 values" in proc.stderr
    assert _attempts(run_dir) == 1


def test_a_one_trial_study_killed_once_then_rerun_exits_0(tmp_path: Path, run_dir: Path) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="one",
        objective="hpo.testing.objectives:quadratic",
        objective_kwargs={"sleep_s": 3.0},
        run_dir=str(run_dir),
        n_trials=1,
        pruner={"name": "nop"},
    )
    proc = start_hpo("run", str(cfg), "--quiet")
    wait_for_events(run_dir, "trial_started", 1)
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert_no_run_processes(run_dir)
    again = run_hpo("run", str(cfg), "--quiet")
    assert again.returncode == 0, again.stdout + again.stderr
    trials = load_study(run_dir, "one").get_trials(deepcopy=False)
    lost, retry = trials
    assert lost.state == TrialState.FAIL and lost.user_attrs["failure_class"] == "supervisor_lost"
    assert lost.user_attrs["hpo:retried_as"] == retry.number
    assert retry.state == TrialState.COMPLETE and retry.params == lost.params
    assert retry.user_attrs["hpo:infra_retries"] == 1 and retry.user_attrs["hpo:retry_of"] == 0


def test_eight_supervisor_kills_in_a_forty_trial_study(tmp_path: Path, run_dir: Path) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="kills",
        objective="hpo.testing.objectives:quadratic",
        objective_kwargs={"sleep_s": 0.6},
        run_dir=str(run_dir),
        n_trials=40,
        workers=4,
        pruner={"name": "nop"},
        heartbeat_interval=1,
        heartbeat_grace=3,
        max_infra_retries=20,
    )
    kills = 0
    for k in range(8):
        proc = start_hpo("run", str(cfg), "--quiet")
        wait_for_events(run_dir, "trial_started", count_events(run_dir, "trial_started") + 1)
        time.sleep(0.2 + 0.15 * k)
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        kills += 1
        assert_no_run_processes(run_dir, within_s=5)
    assert kills == 8
    final = run_hpo("run", str(cfg), "--quiet", timeout=300)
    assert final.returncode == 0, final.stdout + final.stderr
    trials = load_study(run_dir, "kills").get_trials(deepcopy=False)
    states = Counter(t.state for t in trials)
    assert states[TrialState.COMPLETE] == 40
    assert not states[TrialState.RUNNING] and not states[TrialState.PRUNED]
    failed = [t for t in trials if t.state == TrialState.FAIL]
    assert failed and all(t.user_attrs["failure_class"] == "supervisor_lost" for t in failed)
    assert all(t.user_attrs["hpo:blameless"] for t in failed)
    assert_no_run_processes(run_dir)


def test_sigterm_during_start_up_exits_130_with_one_line(tmp_path: Path, run_dir: Path) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="early",
        objective="hpo.testing.objectives:quadratic",
        run_dir=str(run_dir),
        n_trials=5,
    )
    proc = start_hpo("run", str(cfg), "--quiet")
    time.sleep(0.4)  # importing, reading the config: long before the first trial
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err
    # The signal came during start-up: no trial ever started.
    assert count_events(run_dir, "trial_started") == 0
    db = run_dir / "study.db"
    if db.exists():
        study = optuna.load_study(study_name="early", storage=f"sqlite:///{db}")
        assert not [t for t in study.get_trials() if t.state == TrialState.RUNNING]
    assert_no_run_processes(run_dir)


def test_an_oom_caused_by_packing_is_retried_alone_and_never_pruned(
    tmp_path: Path, run_dir: Path
) -> None:
    cfg = write_config(
        tmp_path / "s.yaml",
        study="pack",
        objective="hpo.testing.sim_objectives:packing_objective",
        objective_kwargs={"seconds": 0.3},
        run_dir=str(run_dir),
        n_trials=30,
        workers=8,
        device_backend="simulated",
        simulated_gpus={"count": 2, "memory_mb": 24576},
        trials_per_gpu=4,
        sampler={"name": "random", "seed": 0},
    )
    proc = run_hpo("run", str(cfg), "--quiet", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    trials = load_study(run_dir, "pack").get_trials(deepcopy=False)
    ooms = [t for t in trials if t.user_attrs.get("failure_class") == "oom"]
    assert ooms, "four trials per 24 GB GPU must co-locate into OOMs"
    by_number = {t.number: t for t in trials}
    for t in ooms:
        assert t.state == TrialState.FAIL and t.user_attrs["hpo:blameless"], t.user_attrs
        retry = by_number[t.user_attrs["hpo:retried_as"]]
        assert retry.params == t.params and retry.user_attrs["hpo:run_alone"] is True
    alone = [t for t in trials if t.user_attrs.get("hpo:run_alone")]
    assert alone and all(t.state == TrialState.COMPLETE for t in alone)
    assert not [t for t in trials if t.state == TrialState.PRUNED]
    assert_no_run_processes(run_dir)


# -- PostgreSQL: supervisors killed mid-call, and a second host taking over --------------------
def _pg_study(tmp_path: Path, name: str, **cfg: object) -> tuple[Path, str]:
    from tests.test_resume import PG_URL, require_postgres

    require_postgres()
    study = f"{name}-{int(time.time() * 1000)}"
    return write_config(tmp_path / f"{name}.yaml", study=study, storage=PG_URL, **cfg), study


def _pg_trials(study: str) -> list[optuna.trial.FrozenTrial]:
    from tests.test_resume import PG_URL

    return optuna.load_study(study_name=study, storage=PG_URL).get_trials(deepcopy=False)


def test_supervisor_killed_inside_suggest_calls_is_never_the_users_error(
    tmp_path: Path, run_dir: Path
) -> None:
    cfg, study = _pg_study(
        tmp_path,
        "midcall",
        objective="hpo.testing.objectives:suggests_slowly",
        objective_kwargs={"n": 30, "sleep_s": 0.05},
        run_dir=str(run_dir),
        n_trials=8,
        workers=2,
        heartbeat_interval=1,
        heartbeat_grace=3,
        max_infra_retries=10,
    )
    for k in range(5):
        proc = start_hpo("run", str(cfg), "--quiet")
        wait_for_events(run_dir, "trial_started", count_events(run_dir, "trial_started") + 1)
        time.sleep(0.4 + 0.2 * k)  # the trials are inside suggest_float round trips
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert_no_run_processes(run_dir, within_s=5)
    final = run_hpo("run", str(cfg), "--quiet", timeout=300)
    assert final.returncode == 0, final.stdout + final.stderr
    trials = _pg_trials(study)
    assert not [t for t in trials if t.user_attrs.get("failure_class") == "user_error"]
    failed = [t for t in trials if t.state == TrialState.FAIL]
    assert failed and all(t.user_attrs["failure_class"] == "supervisor_lost" for t in failed)
    by_number = {t.number: t for t in trials}
    for t in failed:  # every interrupted trial is retried with the parameters it had
        retry = by_number[t.user_attrs["hpo:retried_as"]]
        assert all(retry.params.get(k) == v for k, v in t.params.items())
    assert sum(t.state == TrialState.COMPLETE for t in trials) == 8


def test_a_second_host_takes_over_a_dead_hosts_trials(tmp_path: Path) -> None:
    import shutil

    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    grace = 3
    common = {
        "objective": "hpo.testing.objectives:quadratic",
        "objective_kwargs": {"sleep_s": 1.5},
        "n_trials": 16,
        "workers": 2,
        "pruner": {"name": "nop"},
        "heartbeat_interval": 1,
        "heartbeat_grace": grace,
    }
    cfg_a, study = _pg_study(tmp_path, "host-a", run_dir=str(tmp_path / "a"), **common)
    cfg_b = write_config(
        tmp_path / "host-b.yaml", **{**_yaml(cfg_a), "run_dir": str(tmp_path / "b")}
    )
    a = start_hpo("run", str(cfg_a), "--quiet")
    wait_for_events(tmp_path / "a", "trial_started", 2)
    # Host B: its own UTS namespace, so host A's owner pids mean nothing there.
    b = start_hpo(
        "run",
        str(cfg_b),
        "--quiet",
        wrap=["unshare", "-u", "sh", "-c", 'hostname host-b && exec "$0" "$@"'],
    )
    time.sleep(1.0)
    a.send_signal(signal.SIGKILL)
    killed_at = time.time()
    a.wait(10)
    out, err = b.communicate(timeout=300)
    assert b.returncode == 0, out + err
    recovered = [
        json.loads(line)
        for line in (tmp_path / "b" / "events.jsonl").read_text().splitlines()
        if '"trial_recovered"' in line
    ]
    assert recovered and all(r["how"] == "heartbeat stale" for r in recovered)
    takeover_s = min(r["ts"] for r in recovered) - killed_at
    print(f"\ntakeover after SIGKILL of host A: {takeover_s:.1f}s (grace {grace}s)")
    assert takeover_s <= grace + 5
    trials = _pg_trials(study)
    assert sum(t.state == TrialState.COMPLETE for t in trials) == 16
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.PRUNED)]
    lost = [t for t in trials if t.state == TrialState.FAIL]
    assert len(lost) == len(recovered)
    assert all(t.user_attrs["failure_class"] == "supervisor_lost" for t in lost)


def _yaml(path: Path) -> dict[str, object]:
    import yaml

    return dict(yaml.safe_load(path.read_text()))


# -- a disk that fills ----------------------------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path: Path) -> Any:
    """A 4 MB tmpfs, and a way to fill it; skipped where mounting is not allowed."""
    import subprocess

    mnt = tmp_path / "disk"
    mnt.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()[:100]}")

    def fill() -> Path:
        filler = mnt / "filler"
        with open(filler, "wb") as fh:
            try:
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            except OSError:
                pass
        return filler

    try:
        yield mnt, fill
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_a_full_disk_under_the_sqlite_storage_stops_plainly_and_the_rerun_finishes(
    tmp_path: Path, run_dir: Path, small_disk: Any
) -> None:
    mnt, fill = small_disk
    cfg = write_config(
        tmp_path / "s.yaml",
        study="full",
        objective="hpo.testing.objectives:quadratic",
        objective_kwargs={"sleep_s": 0.3},
        run_dir=str(run_dir),
        storage=f"sqlite:///{mnt / 'study.db'}",
        n_trials=40,
        workers=2,
        pruner={"name": "nop"},
    )
    proc = start_hpo("run", str(cfg), "--quiet")
    wait_for_events(run_dir, "trial_finished", 3)
    filler = fill()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, out + err
    assert "is full" in err and str(mnt / "study.db") in err and "MB free" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert_no_run_processes(run_dir)
    filler.unlink()
    again = run_hpo("run", str(cfg), "--quiet", timeout=240)
    assert again.returncode == 0, again.stdout + again.stderr
    study = optuna.load_study(study_name="full", storage=f"sqlite:///{mnt / 'study.db'}")
    states = Counter(t.state for t in study.get_trials(deepcopy=False))
    assert states[TrialState.COMPLETE] == 40 and not states[TrialState.RUNNING]
    assert not states[TrialState.PRUNED]


def test_a_full_run_folder_is_one_warning_and_the_run_keeps_its_exit_code(
    tmp_path: Path, small_disk: Any
) -> None:
    mnt, fill = small_disk
    run_dir = mnt / "run"
    cfg = write_config(
        tmp_path / "s.yaml",
        study="folder",
        objective="hpo.testing.objectives:quadratic",
        objective_kwargs={"sleep_s": 0.05},
        run_dir=str(run_dir),
        storage=f"sqlite:///{tmp_path / 'study.db'}",
        n_trials=120,  # enough log lines after the fill to need new pages of the tmpfs
        workers=2,
        pruner={"name": "nop"},
    )
    proc = start_hpo("run", str(cfg), "--quiet")
    wait_for_events(run_dir, "trial_finished", 2)
    fill()
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, out + err
    assert "Traceback" not in err, err
    # The folder did fill (the supervisor's log could not be written), and that is said once.
    assert err.count("warning:") == 1 and "supervisor.log" in err, err
    study = optuna.load_study(study_name="folder", storage=f"sqlite:///{tmp_path / 'study.db'}")
    assert sum(t.state == TrialState.COMPLETE for t in study.get_trials()) == 120
