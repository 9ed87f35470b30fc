"""Optuna's own ``study.optimize(n_jobs=...)`` on the null objective, in this process.

Run as a fresh process by ``bench/overhead.py`` so that imports and the study's creation are not
timed; prints one JSON line: ``{"trials": N, "optimize_s": ..., "trials_per_s": ...}``.

Usage: optuna_inprocess.py URL N_TRIALS N_JOBS hpo|default
  hpo:     the storage built by ``hpo.storage.open_storage`` (WAL, synchronous=NORMAL, 60 s busy
           timeout), exactly what ``hpo run`` uses;
  default: ``optuna.storages.RDBStorage(URL)`` with Optuna's defaults (rollback journal,
           synchronous=FULL, 5 s busy timeout).
"""

from __future__ import annotations

import json
import sys
import time

import optuna


def null_objective(trial: optuna.Trial) -> float:
    return trial.suggest_float("x", -10.0, 10.0)


def main() -> None:
    url, n, jobs, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if mode == "hpo":
        from hpo.storage import open_storage

        storage: optuna.storages.BaseStorage = open_storage(url)
    else:
        storage = optuna.storages.RDBStorage(url)
    study = optuna.create_study(storage=storage, study_name="bench")
    t = time.perf_counter()
    study.optimize(null_objective, n_trials=n, n_jobs=jobs)
    wall = time.perf_counter() - t
    done = sum(1 for tr in study.get_trials(deepcopy=False) if tr.state.name == "COMPLETE")
    print(json.dumps({"trials": done, "optimize_s": round(wall, 3), "trials_per_s": done / wall}))


if __name__ == "__main__":
    main()
