"""The supervisor's loop without processes: scripted workers on a fake clock.

``hpo.testing.fakes`` replaces process start and polling (the :class:`~hpo.workers.Mechanism`
seam) and the clock; the pool, the policy, the planner and a real SQLite study are the real
code. Each test scripts how workers boot and how trials end, then asserts exact counts: workers
spawned, STOPs sent, trials per state, attempts. Elastic's agent tests (scripted
``side_effect`` exits) are the model.
"""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import TrialState

from hpo.config import load_config
from hpo.errors import ExitCode
from hpo.outcome import Status
from hpo.supervisor import Supervisor
from hpo.testing.fakes import Die, Done, FakeClock, FakeMechanism, Hang

ILLEGAL = "CUDA error: an illegal memory access was encountered"


def _cfg(tmp_path: Path, **kw: Any) -> Any:
    base: dict[str, Any] = {
        "objective": "hpo.testing.objectives:quadratic",
        "study": "loop",
        "run_dir": str(tmp_path / "run"),
        "n_trials": 6,
        "workers": 1,
        "gpus": "none",
        "sampler": {"name": "random", "seed": 1},
    }
    base.update(kw)
    return load_config(None, base)


def _run(
    tmp_path: Path, mech: FakeMechanism, clock: FakeClock, **kw: Any
) -> tuple[int, Supervisor]:
    sup = Supervisor(_cfg(tmp_path, **kw), mechanism=mech, clock=clock)  # type: ignore[arg-type]
    return sup.run(), sup


def _trials(tmp_path: Path) -> list[optuna.trial.FrozenTrial]:
    url = f"sqlite:///{tmp_path / 'run' / 'study.db'}"
    return optuna.load_study(study_name="loop", storage=url).get_trials(deepcopy=False)


def _states(tmp_path: Path) -> Counter[str]:
    return Counter(t.state.name for t in _trials(tmp_path))


def test_a_clean_run_reuses_one_worker_and_stops_it_at_the_end(tmp_path: Path) -> None:
    clock = FakeClock()
    mech = FakeMechanism(clock, trial=lambda spec, w: Done(values=(float(spec.number),)))
    code, _ = _run(tmp_path, mech, clock)
    assert code == ExitCode.OK
    assert _states(tmp_path) == {"COMPLETE": 6}
    assert len(mech.spawned) == 1 and len({pid for _, pid in mech.runs}) == 1
    assert mech.stops == 1  # the shutdown's STOP


def test_recycle_every_replaces_the_worker_after_exactly_n_trials(tmp_path: Path) -> None:
    clock = FakeClock()
    mech = FakeMechanism(clock, trial=lambda spec, w: Done())
    code, _ = _run(tmp_path, mech, clock, n_trials=7, recycle_every=3)
    assert code == ExitCode.OK
    per_worker = Counter(pid for _, pid in mech.runs)
    assert sorted(per_worker.values()) == [1, 3, 3]
    assert len(mech.spawned) == 3


def test_the_boot_budget_stops_a_slot_whose_workers_die_while_starting(tmp_path: Path) -> None:
    clock = FakeClock()
    mech = FakeMechanism(clock, trial=lambda spec, w: Done(), boot=lambda n: Die(code=1, sig=None))
    code, sup = _run(tmp_path, mech, clock)
    assert code == ExitCode.ERROR
    assert len(mech.spawned) == 5  # BOOT_FAILURES_PER_MINUTE, then the run stops
    assert "died 5 times in a minute while starting" in sup.stop_message
    assert mech.runs == []


def test_boot_deaths_spread_over_more_than_a_minute_do_not_stop_the_run(tmp_path: Path) -> None:
    clock = FakeClock()
    # Every other worker dies at boot, 20 s after it was started: never 5 within 60 s.
    mech = FakeMechanism(
        clock,
        trial=lambda spec, w: Done(),
        boot=lambda n: Die(code=1, sig=None, after_s=20.0) if n % 2 == 0 else None,
    )
    code, _ = _run(tmp_path, mech, clock, n_trials=4, recycle_every=1)
    assert code == ExitCode.OK and _states(tmp_path) == {"COMPLETE": 4}


def test_retried_failures_do_not_count_as_consecutive(tmp_path: Path) -> None:
    clock = FakeClock()
    # Every first attempt segfaults, every retry completes: 6 crashes in a row, no stop.
    mech = FakeMechanism(
        clock,
        trial=lambda spec, w: (
            Die(sig=signal.SIGSEGV) if spec.user_attrs.get("hpo:attempt", 1) == 1 else Done()
        ),
    )
    code, _ = _run(tmp_path, mech, clock, max_consecutive_failures=2, max_failed_trials=100)
    assert code == ExitCode.OK
    trials = _trials(tmp_path)
    assert Counter(t.state.name for t in trials) == {"FAIL": 6, "COMPLETE": 6}
    assert all(
        t.user_attrs["failure_class"] == "segfault" for t in trials if t.state == TrialState.FAIL
    )
    assert len(mech.spawned) == 7  # a dead worker is replaced each time: 6 + the last one


def test_max_failed_trials_stops_at_exactly_the_limit(tmp_path: Path) -> None:
    clock = FakeClock()
    mech = FakeMechanism(clock, trial=lambda spec, w: Die(sig=signal.SIGSEGV))
    code, sup = _run(tmp_path, mech, clock, n_trials=50, max_failed_trials=7, max_retries=100)
    assert code == ExitCode.FAILURES
    assert _states(tmp_path)["FAIL"] == 7 and len(mech.runs) == 7
    assert "7 failed trials (max_failed_trials=7)" in sup.stop_message


def test_timeout_kills_a_hung_trial_and_the_next_one_runs(tmp_path: Path) -> None:
    clock = FakeClock()
    mech = FakeMechanism(clock, trial=lambda spec, w: Hang() if spec.number == 0 else Done())
    code, _ = _run(tmp_path, mech, clock, n_trials=3, timeout_per_trial=30)
    assert code == ExitCode.OK
    t0 = _trials(tmp_path)[0]
    assert t0.state == TrialState.FAIL and t0.user_attrs["failure_class"] == "timeout"
    assert mech.spawned[0].killed == [signal.SIGKILL]
    assert clock.now >= 1000.0 + 30


def _signal_at(times: list[float], signum: int = signal.SIGTERM) -> Any:
    """An on_wait hook that delivers ``signum`` to the supervisor at each fake time in ``times``."""
    pending = sorted(times)

    def hook(mech: FakeMechanism) -> bool:
        if pending and mech.clock.now >= pending[0]:
            pending.pop(0)
            sup = hook.sup  # type: ignore[attr-defined]
            sup.signals._handler(signum, None)
            return True
        return False

    return hook


def test_sigterm_lets_running_trials_finish_within_the_grace_period(tmp_path: Path) -> None:
    clock = FakeClock()
    hook = _signal_at([1001.0])
    mech = FakeMechanism(clock, trial=lambda spec, w: Done(after_s=3.0), on_wait=hook)
    sup = Supervisor(
        _cfg(tmp_path, workers=2, n_trials=50, stop_grace_s=10), mechanism=mech, clock=clock
    )  # type: ignore[arg-type]
    hook.sup = sup  # type: ignore[attr-defined]
    assert sup.run() == ExitCode.INTERRUPTED
    # The two trials running at SIGTERM finished (COMPLETE); nothing new started after it.
    assert _states(tmp_path) == {"COMPLETE": 2}
    assert len(mech.runs) == 2


def test_a_second_signal_kills_running_trials_at_once(tmp_path: Path) -> None:
    clock = FakeClock()
    hook = _signal_at([1001.0, 1002.0])
    mech = FakeMechanism(clock, trial=lambda spec, w: Done(after_s=60.0), on_wait=hook)
    sup = Supervisor(_cfg(tmp_path, n_trials=5, stop_grace_s=30), mechanism=mech, clock=clock)  # type: ignore[arg-type]
    hook.sup = sup  # type: ignore[attr-defined]
    assert sup.run() == ExitCode.INTERRUPTED
    t, retry = _trials(tmp_path)
    assert t.state == TrialState.FAIL and t.user_attrs["failure_class"] == "interrupted"
    # Not the trial's fault: its parameters wait in the study for the next run.
    assert retry.state == TrialState.WAITING and retry.user_attrs["hpo:retry_of"] == t.number
    assert t.user_attrs["hpo:retried_as"] == retry.number and t.user_attrs["hpo:blameless"]
    assert mech.spawned[0].killed == [signal.SIGKILL]
    assert clock.now < 1000.0 + 30  # not after the grace period


def test_sticky_errors_quarantine_a_healthy_gpu_after_quarantine_after(tmp_path: Path) -> None:
    clock = FakeClock()
    mech = FakeMechanism(
        clock,
        trial=lambda spec, w: (
            Done(Status.FAILED, None, "torch.AcceleratorError", ILLEGAL)
            if w.boot.env.get("HPO_DEVICE_INDEX") == "0"
            else Done()
        ),
    )
    code, sup = _run(
        tmp_path,
        mech,
        clock,
        n_trials=12,
        gpus="auto",
        device_backend="simulated",
        simulated_gpus={"count": 2},
        quarantine_after=3,
        max_retries=5,
        allow_gpu_reset=True,
    )
    assert code == ExitCode.OK
    trials = _trials(tmp_path)
    on0 = [t for t in trials if t.user_attrs.get("hpo:device") == 0]
    # 3 sticky errors quarantine GPU 0; once its worker is gone it is reset (allow_gpu_reset)
    # and back in rotation; 3 more quarantine it for good: one reset per GPU and run.
    assert len(on0) == 6 and all(
        t.user_attrs["failure_class"] == "cuda_context_corrupted" for t in on0
    )
    study = optuna.load_study(
        study_name="loop", storage=f"sqlite:///{tmp_path / 'run' / 'study.db'}"
    )
    (q,) = [v for k, v in study.user_attrs.items() if k.startswith("hpo:quarantine:")]
    assert q["gpu"] == 0 and "3 sticky CUDA errors" in q["reason"] and "lifted" not in q
    events = [json.loads(e) for e in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds.count("device_quarantined") == 2 and kinds.count("gpu_reset") == 1
    assert events[kinds.index("gpu_reset")]["done"] is True
    # Every sticky error recycled its worker; nothing ran on GPU 0 after the second quarantine.
    assert all(
        t.user_attrs.get("hpo:device") == 1 for t in trials if t.state == TrialState.COMPLETE
    )


def test_stale_heartbeat_of_another_hosts_trial_is_recovered_and_retried(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, n_trials=2, heartbeat_interval=1, heartbeat_grace=2)
    (tmp_path / "run").mkdir()
    storage = optuna.storages.RDBStorage(cfg.storage_url, heartbeat_interval=1, grace_period=2)
    study = optuna.create_study(study_name="loop", storage=storage)
    dead = study.ask({"x": optuna.distributions.FloatDistribution(-10, 10)})
    owner = {
        "host": "another-host",
        "pid": 1,
        "ctime": 0.0,
        "run_dir": "/elsewhere",
        "worker_pid": 2,
        "device": None,
    }
    storage.set_trial_system_attr(dead._trial_id, "hpo:owner", owner)
    storage.record_heartbeat(dead._trial_id)
    import sqlalchemy

    with storage.engine.begin() as conn:  # its supervisor's last heartbeat was a minute ago
        conn.execute(
            sqlalchemy.text(
                "UPDATE trial_heartbeats SET heartbeat = datetime(heartbeat, '-60 seconds')"
            )
        )
    clock = FakeClock()
    mech = FakeMechanism(clock, trial=lambda spec, w: Done())
    sup = Supervisor(cfg, mechanism=mech, clock=clock)  # type: ignore[arg-type]
    assert sup.run() == ExitCode.OK
    trials = _trials(tmp_path)
    lost = trials[dead.number]
    assert lost.state == TrialState.FAIL
    assert lost.user_attrs["failure_class"] == "supervisor_lost"
    assert "heartbeat stale" in lost.user_attrs["hpo:error_msg"]
    retry = [t for t in trials if t.user_attrs.get("hpo:retry_of") == dead.number]
    assert (
        len(retry) == 1 and retry[0].params == lost.params and retry[0].state == TrialState.COMPLETE
    )
    assert sup.recovered == 1


def test_a_worker_that_dies_between_trials_loses_only_the_trial_it_was_handed(
    tmp_path: Path,
) -> None:
    clock = FakeClock()

    def trial(spec: Any, w: Any) -> Any:
        if spec.number == 1:  # the worker dies 0.1 s after reporting: it was handed trial 2
            mech.at(0.2, w, lambda: w._exit(0, None))
        return Done()

    mech = FakeMechanism(clock, trial=trial)
    code, _ = _run(tmp_path, mech, clock, n_trials=4)
    assert code == ExitCode.OK and _states(tmp_path) == {"COMPLETE": 4, "FAIL": 1}
    lost = _trials(tmp_path)[2]
    assert (
        lost.user_attrs["failure_class"] == "worker_lost"
        and lost.user_attrs["hpo:failure_action"] == "retry"
    )
    assert len(mech.spawned) == 2


def test_a_worker_that_cannot_go_on_says_so_and_is_never_handed_another_trial(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    mech = FakeMechanism(
        clock, trial=lambda spec, w: Done(recycle="cleanup failed") if spec.number == 1 else Done()
    )
    code, _ = _run(tmp_path, mech, clock, n_trials=4)
    assert code == ExitCode.OK and _states(tmp_path) == {"COMPLETE": 4}  # nothing lost, no blame
    assert len(mech.spawned) == 2
    # Trial 2 was handed to the retiring worker right after trial 1's DONE; it never started
    # there and ran, as trial 2, on the next worker.
    assert [n for n, pid in mech.runs if pid == mech.spawned[0].pid] == [0, 1]
    assert 2 in [n for n, pid in mech.runs if pid == mech.spawned[1].pid]
    events = (tmp_path / "run" / "events.jsonl").read_text()
    assert '"worker_lost"' not in events and "cleanup failed" in events


def test_a_quarantine_outlives_the_run_until_it_is_lifted_or_expires(tmp_path: Path) -> None:
    from hpo.storage import lift_quarantine

    gpu = {"gpus": "auto", "device_backend": "simulated", "simulated_gpus": {"count": 2}}

    def trial(spec: Any, w: Any) -> Any:
        if w.boot.env.get("HPO_DEVICE_INDEX") == "0" and first_run:
            return Done(Status.FAILED, None, "torch.AcceleratorError", ILLEGAL)
        return Done()

    def devices_used(mech: FakeMechanism) -> set[str]:
        by_pid = {w.pid: w.boot.env.get("HPO_DEVICE_INDEX") for w in mech.spawned}
        return {by_pid[pid] for _, pid in mech.runs}

    first_run = True
    clock = FakeClock()
    mech = FakeMechanism(clock, trial=trial)
    code, _ = _run(tmp_path, mech, clock, n_trials=6, quarantine_after=2, max_retries=5, **gpu)
    assert code == ExitCode.OK and "0" in devices_used(mech)

    first_run = False  # GPU 0 would work now, but it stays out of rotation
    mech = FakeMechanism(clock, trial=trial)
    code, sup = _run(tmp_path, mech, clock, n_trials=12, **gpu)
    assert code == ExitCode.OK and devices_used(mech) == {"1"}
    assert sup.planner.restored and sup.planner.restored[0].device == 0

    study = optuna.load_study(
        study_name="loop", storage=f"sqlite:///{tmp_path / 'run' / 'study.db'}"
    )
    assert [q["gpu"] for q in lift_quarantine(study, "0")] == [0]
    mech = FakeMechanism(clock, trial=trial)
    code, _ = _run(tmp_path, mech, clock, n_trials=20, **gpu)
    assert code == ExitCode.OK and devices_used(mech) == {"0", "1"}


def test_an_expired_quarantine_is_forgotten(tmp_path: Path) -> None:
    gpu = {"gpus": "auto", "device_backend": "simulated", "simulated_gpus": {"count": 2}}
    clock = FakeClock()
    sick = FakeMechanism(
        clock,
        trial=lambda spec, w: (
            Done(Status.FAILED, None, "torch.AcceleratorError", ILLEGAL)
            if w.boot.env.get("HPO_DEVICE_INDEX") == "0"
            else Done()
        ),
    )
    _run(tmp_path, sick, clock, n_trials=6, quarantine_after=2, max_retries=5, **gpu)
    study = optuna.load_study(
        study_name="loop", storage=f"sqlite:///{tmp_path / 'run' / 'study.db'}"
    )
    (key,) = [k for k in study.user_attrs if k.startswith("hpo:quarantine:")]
    record = study.user_attrs[key]
    # Still in force an hour later...
    study.set_user_attr(key, {**record, "time": record["time"] - 3600})
    mech = FakeMechanism(clock, trial=lambda spec, w: Done())
    code, sup = _run(tmp_path, mech, clock, n_trials=14, quarantine_expires_s=7200, **gpu)
    assert code == ExitCode.OK and [e.device for e in sup.planner.restored] == [0]
    # ... forgotten three hours later.
    study.set_user_attr(key, {**record, "time": record["time"] - 3 * 3600})
    mech = FakeMechanism(clock, trial=lambda spec, w: Done())
    code, sup = _run(tmp_path, mech, clock, n_trials=22, quarantine_expires_s=7200, **gpu)
    assert code == ExitCode.OK and not sup.planner.restored
