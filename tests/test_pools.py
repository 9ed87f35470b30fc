"""Pools that survive, leaks that do not: after a trial the worker keeps the process pools its
libraries own and reuse (joblib/loky, multiprocessing.Pool, DataLoader workers) and kills
everything else the trial left behind (a plain ``sleep``); a worker whose pools outlive a failed
trial, or grow past their bound, is recycled. Real processes throughout; the end-to-end tests
assert what the Optuna storage holds and that no process of the run is left."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
from optuna.trial import TrialState

from tests.conftest import ROOT, assert_no_run_processes, load_study, run_hpo, write_config

pytest.importorskip("joblib")

_PROBE = textwrap.dedent(
    """
    import json, multiprocessing as mp, os, subprocess, sys, time
    from hpo.pools import library_helpers, track_targets
    from hpo.process import kill_tree, tree_usage

    def main():
        track_targets()  # what the worker does before it loads the objective
        from joblib import Parallel, delayed
        from torch.utils.data import DataLoader
        par = lambda: sorted(set(Parallel(n_jobs=2)(delayed(os.getpid)() for _ in range(8))))
        par()
        pool = mp.get_context("forkserver").Pool(2)
        pool.map(abs, [-1, -2])
        loader = DataLoader(list(range(8)), num_workers=2, persistent_workers=True, batch_size=4)
        [b.tolist() for b in loader]
        leaks = {
            "sleep": subprocess.Popen(["sleep", "3600"]).pid,
            "user_process": mp.get_context("fork").Process(target=time.sleep, args=(3600,)),
            "forkserver_process": mp.get_context("forkserver").Process(
                target=time.sleep, args=(3600,)
            ),
        }
        for name in ("user_process", "forkserver_process"):
            leaks[name].start()
            leaks[name] = leaks[name].pid
        helpers = library_helpers()
        before = tree_usage(os.getpid())[0]
        killed = kill_tree(os.getpid(), include_root=False, exclude=helpers.servers,
                           spare_trees=helpers.pools, grace_s=2.0, reap_children=True)
        after = tree_usage(os.getpid())[0]
        works = [pool.map(abs, [-3]) == [3], [b.tolist() for b in loader] == [[0, 1, 2, 3],
                 [4, 5, 6, 7]], len(par()) >= 1]
        pool.terminate()
        print(json.dumps({"pools": helpers.pools, "servers": helpers.servers, "leaks": leaks,
                          "killed": killed, "before": before, "after": after, "works": works}))

    if __name__ == "__main__":
        main()
    """
)


def test_library_pools_are_told_from_leaks_by_ownership(tmp_path: Path) -> None:
    """joblib's loky workers, a multiprocessing.Pool's and persistent DataLoader workers are
    helpers; a subprocess ``sleep`` and ``multiprocessing.Process(target=time.sleep)`` (fork or
    forkserver, the latter a child of the spared forkserver) are not, are killed, and the pools
    still work afterwards."""
    pytest.importorskip("torch")
    script = tmp_path / "probe.py"
    script.write_text(_PROBE)
    out = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=240,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        start_new_session=True,
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    owners = sorted(got["pools"].values())
    assert owners == sorted(
        ["joblib/loky executor"] * 2 + ["multiprocessing.Pool"] * 2 + ["DataLoader workers"] * 2
    ), got
    assert "multiprocessing forkserver" in got["servers"].values()
    assert "joblib/loky resource tracker" in got["servers"].values()
    assert sorted(got["killed"]) == sorted(got["leaks"].values()), got
    assert got["after"] == got["before"] - 3
    assert got["works"] == [True, True, True]


def _events(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _pool_study(tmp_path: Path, run_dir: Path, n_trials: int, **extra: Any) -> Any:
    cfg = write_config(
        tmp_path / "study.yaml",
        study="pools",
        objective="hpo.testing.objectives:joblib_pool_and_leak",
        objective_kwargs={"pid_file": str(tmp_path / "pids.txt"), **extra.pop("kwargs", {})},
        run_dir=str(run_dir),
        n_trials=n_trials,
        workers=1,
        sampler={"name": "random", "seed": 1},
        **extra,
    )
    proc = run_hpo("run", str(cfg), "--quiet", timeout=300)
    recycled = [e["reason"] for e in _events(run_dir) if e["event"] == "worker_recycled"]
    return proc, load_study(run_dir, "pools").get_trials(), recycled


@pytest.mark.slow
def test_joblib_pool_survives_trials_and_a_leaked_sleep_does_not(
    tmp_path: Path, run_dir: Path
) -> None:
    """One worker, four trials; trial 2 fails after using the pool. Trials 0 and 1 share one
    loky pool (before: each trial met a dead pool, TerminatedWorkerError, or paid for a new
    one); every trial's leaked ``sleep`` is dead when the next trial starts; the failed trial
    takes the pool and its worker with it, so trial 3 runs on a new pool; nothing survives."""
    proc, trials, recycled = _pool_study(tmp_path, run_dir, 3, kwargs={"fail_trials": [2]})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [t.state for t in trials] == [
        TrialState.COMPLETE,
        TrialState.COMPLETE,
        TrialState.FAIL,
        TrialState.COMPLETE,
    ]
    assert trials[2].user_attrs["failure_class"] == "user_error"
    assert all(t.user_attrs["earlier_sleeps_alive"] == [] for t in trials)
    first, second, third = (set(trials[i].user_attrs["pool_pids"]) for i in (0, 1, 3))
    assert len(first | second) <= 2, "the pool was not reused between trials"
    assert not third & (first | second), "the pool outlived the failed trial"
    assert len(recycled) == 1 and recycled[0].startswith("the trial failed: its helper"), recycled
    assert_no_run_processes(run_dir)
    # joblib's temporary folders and loky's semaphores (named for the worker that made them)
    # were removed: a worker exits by os._exit, so it runs the libraries' clean-up itself.
    workers = [e["pid"] for e in _events(run_dir) if e["event"] == "worker_started"]
    assert len(workers) == 2
    left = [
        p.name
        for where in (Path("/dev/shm"), Path(tempfile.gettempdir()))
        if where.is_dir()
        for pid in workers
        for pattern in (f"joblib_memmapping_folder_{pid}_*", f"sem.loky-{pid}-*")
        for p in where.glob(pattern)
    ]
    assert not left, left


@pytest.mark.slow
def test_pools_past_their_bound_recycle_the_worker(tmp_path: Path, run_dir: Path) -> None:
    """``max_helper_processes: 1`` against a pool of two: after each trial the worker goes, its
    pool with it; trials are not blamed."""
    proc, trials, recycled = _pool_study(tmp_path, run_dir, 2, max_helper_processes=1)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [t.state for t in trials] == [TrialState.COMPLETE, TrialState.COMPLETE]
    assert not set(trials[0].user_attrs["pool_pids"]) & set(trials[1].user_attrs["pool_pids"])
    assert len(recycled) >= 1 and all("over 1" in r for r in recycled), recycled
    assert_no_run_processes(run_dir)


_PLAIN_OPTUNA = textwrap.dedent(
    """
    import json, sys
    import optuna
    sys.path.insert(0, sys.argv[1])
    from sklearn_cv import objective
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=int(sys.argv[2])))
    study.optimize(objective, n_trials=int(sys.argv[3]))
    print(json.dumps([[t.state.name, t.params, t.value] for t in study.trials]))
    """
)


@pytest.mark.slow
def test_sklearn_cross_val_score_n_jobs_minus_one_as_in_plain_optuna(
    tmp_path: Path, run_dir: Path
) -> None:
    """Optuna's sklearn_simple example (``cross_val_score(n_jobs=-1)``) under ``hpo run`` and
    under ``study.optimize`` with the same seed: the same states, parameters and values, and no
    failure (before: false ``worker_lost`` failures from a killed loky pool)."""
    pytest.importorskip("sklearn")
    n, seed = 6, 7
    examples = ROOT / "tests" / "examples"
    proc = run_hpo(
        "run",
        "--objective",
        f"{examples / 'sklearn_cv.py'}:objective",
        "--study",
        "skl",
        "--run-dir",
        str(run_dir),
        "--n-trials",
        str(n),
        "--workers",
        "1",
        "--direction",
        "maximize",
        "--seed",
        str(seed),
        "--quiet",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plain = subprocess.run(
        [sys.executable, "-c", _PLAIN_OPTUNA, str(examples), str(seed), str(n)],
        capture_output=True,
        text=True,
        timeout=300,
        start_new_session=True,
    )
    assert plain.returncode == 0, plain.stderr
    expected = json.loads(plain.stdout.strip().splitlines()[-1])
    got = [[t.state.name, t.params, t.value] for t in load_study(run_dir, "skl").get_trials()]
    assert got == expected
    assert_no_run_processes(run_dir)


@pytest.mark.parametrize(
    ("source", "preloaded"),
    [
        ("import sklearn.svm\nfrom joblib import Parallel\n", False),
        ("import torch\n", True),
        ("def f():\n    from transformers import Trainer\n", True),
        ("import lightning.pytorch as pl\n", True),
        ("# uses torch later, in a comment only\nimport numpy\n", False),
    ],
)
def test_forkserver_preloads_torch_only_for_objectives_that_import_it(
    tmp_path: Path, source: str, preloaded: bool
) -> None:
    """torch in a worker makes every joblib pool process import it too (scikit-learn sends the
    warning filters, one naming a torch class, with each task): preload it only when the
    objective uses it, or when its source cannot be read."""
    pytest.importorskip("torch")
    from hpo.workers import default_preload

    path = tmp_path / "objective.py"
    path.write_text(source + "\ndef objective(trial):\n    return 0.0\n")
    assert default_preload(f"{path}:objective") == (["torch"] if preloaded else [])
    assert default_preload("hpo.tasks.criteria:objective") == ["torch"]
    assert default_preload("no_such_package.mod:objective") == ["torch"]
