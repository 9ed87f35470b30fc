"""Ray Tune driver for the overhead comparison; runs under ``bench/.venv-ray`` (never hpo's venv).

The same null objective as ``hpo.testing.objectives.null_objective`` (one float in [-10, 10],
returned as the score), ``num_samples`` trials with ``max_concurrent_trials`` at once, Ray's
default search (random sampling of the declared space). ``ray.init`` is timed apart from the
``Tuner.fit`` calls, which are repeated on the same Ray instance. Prints one JSON object on the
last line of stdout:

    {"ray": "2.x", "init_s": ..., "fits": [{"trials": N, "wall_s": ..., "trials_per_s": ...}, ...]}

Usage: ray_null.py N_TRIALS CONCURRENCY REPEATS WORKDIR
"""

from __future__ import annotations

import json
import os
import sys
import time


def null_objective(config: dict) -> dict:
    return {"score": config["x"]}


def main() -> None:
    n_trials, concurrency, repeats = (int(a) for a in sys.argv[1:4])
    workdir = sys.argv[4]
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    import ray
    from ray import tune

    t0 = time.perf_counter()
    ray.init(
        num_cpus=concurrency,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="ERROR",
        _temp_dir=os.path.join(workdir, "ray-tmp"),
    )
    init_s = time.perf_counter() - t0
    fits = []
    for i in range(repeats):
        tuner = tune.Tuner(
            null_objective,
            param_space={"x": tune.uniform(-10.0, 10.0)},
            tune_config=tune.TuneConfig(
                num_samples=n_trials,
                max_concurrent_trials=concurrency,
                metric="score",
                mode="min",
                reuse_actors=True,
            ),
            run_config=tune.RunConfig(
                name=f"null-{i}",
                storage_path=os.path.join(workdir, "ray-results"),
                verbose=0,
            ),
        )
        t = time.perf_counter()
        grid = tuner.fit()
        wall = time.perf_counter() - t
        done = sum(1 for r in grid if r.error is None and r.metrics and "score" in r.metrics)
        fits.append(
            {"trials": done, "wall_s": round(wall, 3), "trials_per_s": round(done / wall, 2)}
        )
    ray.shutdown()
    print(json.dumps({"ray": ray.__version__, "init_s": round(init_s, 3), "fits": fits}))


if __name__ == "__main__":
    main()
