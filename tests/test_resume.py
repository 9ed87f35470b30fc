"""Nothing lost: SIGKILL the supervisor and resume; several supervisors on one study; storages."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import optuna
import psutil
import pytest
from optuna.trial import TrialState

from hpo import storage as st
from hpo.outcome import Outcome, Status
from tests.conftest import (
    ROOT,
    assert_no_run_processes,
    run_hpo,
    run_processes,
    start_hpo,
    write_config,
)

pytestmark = pytest.mark.slow

PG_URL = os.environ.get("HPO_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _postgres_available() -> str | None:
    try:
        import sqlalchemy

        eng = sqlalchemy.create_engine(PG_URL, connect_args={"connect_timeout": 3})
        with eng.connect() as c:
            c.exec_driver_sql("select 1")
        eng.dispose()
        return None
    except Exception as exc:  # noqa: BLE001
        return f"no PostgreSQL server at {st.redact(PG_URL)}: {str(exc).splitlines()[0][:120]}"


def require_postgres() -> None:
    reason = _postgres_available()
    if reason is None:
        return
    if os.environ.get("HPO_REQUIRE_POSTGRES"):
        pytest.fail(f"PostgreSQL is mandatory here (HPO_REQUIRE_POSTGRES=1): {reason}")
    pytest.skip(reason)


def _states(study: optuna.Study) -> dict[TrialState, int]:
    out: dict[TrialState, int] = {}
    for t in study.get_trials(deepcopy=False):
        out[t.state] = out.get(t.state, 0) + 1
    return out


def test_sigkill_supervisor_five_times_then_finish(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    n = 100
    cfg = write_config(
        tmp_path / "s.yaml",
        study="k",
        objective="hpo.testing.objectives:quadratic",
        # 100 x 0.4 s over 4 workers is ~10 s of work: six runs of at most ~2 s each cannot
        # finish it, so every kill lands (with 0.15 s a fast run sometimes finished early).
        objective_kwargs={"sleep_s": 0.4},
        run_dir=str(run_dir),
        n_trials=n,
        workers=4,
        max_retries=10,
        heartbeat_interval=1,
        heartbeat_grace=3,
    )
    rng = random.Random(7)
    kills = 0
    for _ in range(6):
        proc = start_hpo("run", str(cfg), "--quiet")
        events = run_dir / "events.jsonl"
        seen = events.read_text().count("trial_started") if events.exists() else 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
            not events.exists() or events.read_text().count("trial_started") <= seen
        ):
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 1.5))  # while asking, telling, and workers running
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        kills += 1
        # No orphan keeps running after the supervisor's death.
        assert_no_run_processes(run_dir, within_s=5)
    assert kills >= 5
    final = run_hpo("run", str(cfg), "--quiet", timeout=300)
    assert final.returncode == 0, final.stdout + final.stderr
    storage_url = f"sqlite:///{run_dir / 'study.db'}"
    study = optuna.load_study(study_name="k", storage=storage_url)
    states = _states(study)
    assert states.get(TrialState.COMPLETE, 0) + states.get(TrialState.PRUNED, 0) == n
    assert states.get(TrialState.RUNNING, 0) == 0
    trials = study.get_trials(deepcopy=False)
    lost = [t for t in trials if t.user_attrs.get("failure_class") == "supervisor_lost"]
    assert lost, "the kills should have caught trials in flight"
    retried_of = {t.user_attrs.get("hpo:retry_of") for t in trials}
    for t in lost:
        assert t.state == TrialState.FAIL
        assert t.number in retried_of, f"supervisor_lost trial {t.number} has no retry"
    # COMPLETE trials carry their values; nothing was told twice.
    assert all(t.value is not None for t in trials if t.state == TrialState.COMPLETE)
    assert_no_run_processes(run_dir)


def test_outcome_recorded_before_supervisor_died_is_told(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "outcomes").mkdir(parents=True)
    url = f"sqlite:///{run_dir / 'study.db'}"
    storage = st.open_storage(url, heartbeat_interval=2, grace_period=10)
    study = optuna.create_study(study_name="o", storage=storage, direction="minimize")
    trial = study.ask()
    x = trial.suggest_float("x", -10, 10)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    ctime = time.time() - 5
    storage.set_trial_system_attr(
        trial._trial_id,
        st.OWNER_KEY,
        {
            "host": st.HOST,
            "pid": dead.pid,
            "ctime": ctime,
            "run_dir": str(run_dir),
            "worker_pid": 1,
            "device": None,
        },
    )
    Outcome(
        trial_number=trial.number,
        status=Status.COMPLETE,
        values=[x * 2],
        duration_s=1.5,
        worker_pid=4242,
    ).write_atomic(run_dir / "outcomes" / f"trial-{trial.number:06d}.json")
    proc = run_hpo(
        "run",
        "--objective",
        "hpo.testing.objectives:quadratic",
        "--study",
        "o",
        "--run-dir",
        str(run_dir),
        "--n-trials",
        "2",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "recovered 1 trial" in proc.stdout
    t0 = optuna.load_study(study_name="o", storage=url).get_trials()[0]
    assert t0.state == TrialState.COMPLETE and t0.value == pytest.approx(x * 2)
    assert t0.user_attrs["hpo:worker_pid"] == 4242


@pytest.mark.parametrize("objective", ["spawns_grandchild", "holds_the_gil"])
def test_sigkill_leaves_no_orphans_even_grandchildren(tmp_path: Path, objective: str) -> None:
    """Grandchildren in the worker's group, or in their own session while the worker blocks in C
    holding the GIL: all die within seconds of the supervisor's SIGKILL."""
    run_dir = tmp_path / "run"
    pid_file = tmp_path / "pids.txt"
    cfg = write_config(
        tmp_path / "s.yaml",
        study="g",
        objective=f"hpo.testing.objectives:{objective}",
        objective_kwargs={"pid_file": str(pid_file)},
        run_dir=str(run_dir),
        n_trials=4,
        workers=2,
    )
    proc = start_hpo("run", str(cfg), "--quiet")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (
        not pid_file.exists() or len(pid_file.read_text().splitlines()) < 2
    ):
        time.sleep(0.2)
    pids = [int(p) for line in pid_file.read_text().splitlines() for p in line.split()]
    assert all(psutil.pid_exists(p) for p in pids)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    t0 = time.monotonic()
    assert_no_run_processes(run_dir, within_s=5)
    for p in pids:
        assert not psutil.pid_exists(p) or psutil.Process(p).status() == psutil.STATUS_ZOMBIE, p
    assert time.monotonic() - t0 < 5


def test_sigint_marks_running_trials_interrupted(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    cfg = write_config(
        tmp_path / "s.yaml",
        study="i",
        objective="hpo.testing.objectives:quadratic",
        objective_kwargs={"sleep_s": 30},
        run_dir=str(run_dir),
        n_trials=4,
        workers=2,
        stop_grace_s=1,
    )
    proc = start_hpo("run", str(cfg))
    events = run_dir / "events.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (
        not events.exists() or events.read_text().count('"trial_started"') < 2
    ):
        time.sleep(0.1)
    assert len(run_processes(run_dir)) >= 2  # both workers are running a trial
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    study = optuna.load_study(study_name="i", storage=f"sqlite:///{run_dir / 'study.db'}")
    trials = study.get_trials()
    cut = [t for t in trials if t.state == TrialState.FAIL]
    assert len(cut) == 2 and all(t.user_attrs["failure_class"] == "interrupted" for t in cut)
    # Not their fault: their parameters wait (WAITING) for the next run, linked both ways.
    waiting = [t for t in trials if t.state == TrialState.WAITING]
    assert sorted(t.user_attrs["hpo:retry_of"] for t in waiting) == sorted(t.number for t in cut)
    assert all(t.user_attrs["hpo:blameless"] and "hpo:retried_as" in t.user_attrs for t in cut)
    assert len(trials) == 4
    assert_no_run_processes(run_dir)


def _two_supervisors(tmp_path: Path, storage: str, study: str, n: int) -> optuna.Study:
    procs = []
    for i in range(2):
        cfg = write_config(
            tmp_path / f"s{i}.yaml",
            study=study,
            storage=storage,
            objective="hpo.testing.objectives:quadratic",
            objective_kwargs={"sleep_s": 0.05},
            run_dir=str(tmp_path / f"run{i}"),
            n_trials=n,
            workers=2,
            sampler={"name": "tpe", "seed": 5},
        )
        procs.append(start_hpo("run", str(cfg), "--quiet"))
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, out + err
    s = optuna.load_study(study_name=study, storage=storage)
    trials = s.get_trials(deepcopy=False)
    done = [t for t in trials if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]
    assert n <= len(done) <= n + 4, len(done)  # overshoot at most the trials in flight (2 x 2)
    assert not [t for t in trials if t.state == TrialState.RUNNING]
    # Both supervisors worked, and no parameters were run twice (the samplers do not walk in lockstep).
    owners = {t.system_attrs[st.OWNER_KEY]["pid"] for t in trials}
    assert len(owners) == 2
    params = [tuple(sorted(t.params.items())) for t in trials if "hpo:retry_of" not in t.user_attrs]
    assert len(params) == len(set(params))
    for i in range(2):
        assert_no_run_processes(tmp_path / f"run{i}")
    return s


def test_two_supervisors_one_sqlite_study(tmp_path: Path) -> None:
    _two_supervisors(tmp_path, f"sqlite:///{tmp_path / 'shared.db'}", "shared", 40)


def test_two_supervisors_one_postgres_study(tmp_path: Path) -> None:
    require_postgres()
    name = f"hpo-test-{uuid.uuid4().hex[:8]}"
    try:
        _two_supervisors(tmp_path, PG_URL, name, 40)
    finally:
        try:
            optuna.delete_study(study_name=name, storage=PG_URL)
        except Exception:
            pass


def test_eight_workers_sqlite_no_storage_errors(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = run_hpo(
        "run",
        "--objective",
        "hpo.testing.objectives:null_objective",
        "--study",
        "eight",
        "--run-dir",
        str(run_dir),
        "--n-trials",
        "500",
        "--workers",
        "8",
        "--quiet",
        timeout=400,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    log = (run_dir / "supervisor.log").read_text()
    assert "locked" not in log and "Traceback" not in log and "ERROR" not in log
    study = optuna.load_study(study_name="eight", storage=f"sqlite:///{run_dir / 'study.db'}")
    assert _states(study) == {TrialState.COMPLETE: 500}


def test_password_never_printed(tmp_path: Path) -> None:
    url = "postgresql://alice:s3cr3t-pw@127.0.0.1:9/nodb"
    proc = run_hpo(
        "run",
        "--objective",
        "hpo.testing.objectives:quadratic",
        "--storage",
        url,
        "--run-dir",
        str(tmp_path / "r"),
        "--n-trials",
        "1",
    )
    assert proc.returncode == 3
    assert "s3cr3t-pw" not in proc.stdout + proc.stderr
    assert "***" in proc.stderr


_ = ROOT


MYSQL_URL = os.environ.get("HPO_TEST_MYSQL", "mysql+pymysql://root@127.0.0.1:3306/test")


def test_mariadb_storage_runs_a_study(tmp_path: Path) -> None:
    try:
        import sqlalchemy

        eng = sqlalchemy.create_engine(MYSQL_URL, connect_args={"connect_timeout": 3})
        with eng.connect() as c:
            c.exec_driver_sql("select 1")
        eng.dispose()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(
            f"no MariaDB/MySQL server at {st.redact(MYSQL_URL)}: {str(exc).splitlines()[0][:120]}"
        )
    name = f"hpo-test-{uuid.uuid4().hex[:8]}"
    try:
        proc = run_hpo(
            "run",
            "--objective",
            "hpo.testing.objectives:fault_objective",
            "--study",
            name,
            "--storage",
            MYSQL_URL,
            "--run-dir",
            str(tmp_path / "r"),
            "--n-trials",
            "6",
            "--workers",
            "2",
            "--chaos",
            "0.5",
            "--chaos-seed",
            "2",
            "--quiet",
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        s = optuna.load_study(study_name=name, storage=MYSQL_URL)
        states = _states(s)
        assert states.get(TrialState.COMPLETE, 0) + states.get(TrialState.PRUNED, 0) == 6
        assert all(
            t.user_attrs.get("failure_class") for t in s.trials if t.state == TrialState.FAIL
        )
    finally:
        try:
            optuna.delete_study(study_name=name, storage=MYSQL_URL)
        except Exception:
            pass


def test_storage_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "old.db"
    optuna.create_study(study_name="old", storage=f"sqlite:///{db}").optimize(
        lambda t: t.suggest_float("x", 0, 1), n_trials=2
    )
    con = sqlite3.connect(db)
    con.execute("UPDATE alembic_version SET version_num = 'v9.9.9.a'")
    con.commit()
    con.close()
    before = db.read_bytes()
    proc = run_hpo(
        "run",
        "--objective",
        "hpo.testing.objectives:quadratic",
        "--study",
        "old",
        "--storage",
        f"sqlite:///{db}",
        "--run-dir",
        str(tmp_path / "r"),
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "hpo: error: cannot open storage" in proc.stderr and "Traceback" not in proc.stderr
    assert db.read_bytes() == before


def test_unwritable_trial_log_is_recorded_and_run_goes_on(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    (run_dir / "logs" / "trial-000001.log").mkdir(parents=True)  # a directory: open() fails
    proc = run_hpo(
        "run",
        "--objective",
        "hpo.testing.objectives:quadratic",
        "--study",
        "l",
        "--run-dir",
        str(run_dir),
        "--n-trials",
        "3",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    trials = optuna.load_study(study_name="l", storage=f"sqlite:///{run_dir / 'study.db'}").trials
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 3
    assert "log file unwritable" in trials[1].user_attrs["hpo:log_error"]


def test_trial_left_by_a_supervisor_killed_inside_ask_is_recovered(tmp_path: Path) -> None:
    """Killed between creating the trial and recording its heartbeat: no owner, no heartbeat."""
    import datetime

    from optuna.distributions import FloatDistribution
    from optuna.trial import FrozenTrial

    run_dir = tmp_path / "run"
    url = f"sqlite:///{run_dir / 'study.db'}"
    storage = st.open_storage(url)
    study = optuna.create_study(study_name="a", storage=storage)
    long_ago = datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None
    ) - datetime.timedelta(minutes=5)
    template = FrozenTrial(
        number=0,
        state=TrialState.RUNNING,
        value=None,
        datetime_start=long_ago,
        datetime_complete=None,
        params={"x": 1.0},
        distributions={"x": FloatDistribution(-10, 10)},
        user_attrs={},
        system_attrs={},
        intermediate_values={},
        trial_id=0,
    )
    storage.create_new_trial(study._study_id, template_trial=template)
    proc = run_hpo(
        "run",
        "--objective",
        "hpo.testing.objectives:quadratic",
        "--study",
        "a",
        "--storage",
        url,
        "--run-dir",
        str(run_dir),
        "--n-trials",
        "3",
        "--quiet",
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    trials = optuna.load_study(study_name="a", storage=url).trials
    assert (
        trials[0].state == TrialState.FAIL
        and trials[0].user_attrs["failure_class"] == "supervisor_lost"
    )
    assert "while asking" in trials[0].user_attrs["hpo:error_msg"]
    assert any(t.user_attrs.get("hpo:retry_of") == 0 and t.params["x"] == 1.0 for t in trials)
