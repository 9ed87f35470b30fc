"""Criteria throughput: training examples per second of the criteria objective run by ``hpo``
beside the same function run directly in one process (issue 6; goal: at least 95%).

The task is ``hpo.tasks.criteria:objective`` with the offline ``tiny-bert`` model and one fixed
parameter set (enqueued, so the sampler plays no part), 1 epoch of the shipped data's train
split (``--quick``: 480 examples), 1 worker. The objective measures its own training speed and
writes it as the user attr ``examples_per_s`` (training steps only; tokenisation and evaluation
excluded), so both sides are measured by the same code. Direct: a fresh Python process runs
``study.optimize`` on an in-memory study with the same enqueued trial. Via hpo: ``hpo run`` with
a SQLite study holding that enqueued trial. The pairs alternate order between repeats. If the
task is not importable the section is skipped with the reason.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from bench import common

TASK = "hpo.tasks.criteria:objective"
PARAMS = {"model": "tiny-bert", "batch_size": 16, "lr": 1e-4, "dropout": 0.1}


def _kwargs(quick: bool) -> dict[str, Any]:
    kw: dict[str, Any] = {"models": ["tiny-bert"], "batch_sizes": [16], "seed": 0}
    if quick:
        kw.update(epochs=1, max_train_examples=480)
    else:
        kw.update(epochs=1)  # the whole shipped train split: a few seconds of training
    return kw


def available() -> str | None:
    """None if the task can be imported, else the reason."""
    rc, out, err = common.run_python(
        ["-c", "import hpo.tasks.criteria as c; c.objective; c.Options"], timeout_s=120
    )
    if rc != 0:
        last = (err.strip().splitlines() or ["unknown error"])[-1]
        return f"{TASK} is not importable yet: {last[:200]}"
    return None


def _direct(kwargs: dict[str, Any]) -> dict[str, Any]:
    rc, out, err = common.run_python(
        ["-m", "bench.criteria_speed", "direct", json.dumps(kwargs)],
        timeout_s=300,
        cwd=common.ROOT,
    )
    res = common.last_json_line(out)
    if rc != 0 or res is None:
        return {"error": (err.strip().splitlines() or ["no output"])[-1][:300]}
    return res


def _via_hpo(kwargs: dict[str, Any], rep: int) -> dict[str, Any]:
    import optuna

    from hpo.storage import open_storage

    where = common.scratch(f"criteria/hpo-{rep}")
    url = common.sqlite_url(where / "study.db")
    storage = open_storage(url)
    study = optuna.create_study(storage=storage, study_name=common.STUDY, direction="maximize")
    study.enqueue_trial(PARAMS)
    storage.engine.dispose()
    cfg = {
        "objective": TASK,
        "objective_kwargs": kwargs,
        "storage": url,
        "direction": "maximize",
        "n_trials": 1,
        "workers": 1,
        "pruner": {"name": "nop"},
    }
    run = common.run_hpo(cfg, where, timeout_s=300)
    if run.rc != 0:
        return {"error": run.describe_failure()}
    storage = open_storage(url)
    trial = optuna.load_study(study_name=common.STUDY, storage=storage).trials[0]
    storage.engine.dispose()
    return _attrs(trial)


def _attrs(trial: Any) -> dict[str, Any]:
    ua = trial.user_attrs
    return {
        "state": trial.state.name,
        "params": trial.params,
        "examples_per_s": ua.get("examples_per_s"),
        "train_seconds": ua.get("train_seconds"),
        "value": trial.value,
    }


def run(quick: bool) -> dict[str, Any]:
    reason = available()
    kwargs = _kwargs(quick)
    out: dict[str, Any] = {"task": TASK, "params": PARAMS, "objective_kwargs": kwargs}
    if reason:
        out.update(skipped=True, reason=reason, ratio=common.summary([]))
        return out
    repeats = 1 if quick else 3
    direct, hpo = [], []
    for rep in common.repeats(repeats, "criteria"):
        if rep % 2:
            hpo.append(_via_hpo(kwargs, rep))
            direct.append(_direct(kwargs))
        else:
            direct.append(_direct(kwargs))
            hpo.append(_via_hpo(kwargs, rep))
    ratios = [
        common.ratio(h.get("examples_per_s"), d.get("examples_per_s"))
        for d, h in zip(direct, hpo, strict=False)
    ]
    out.update(
        skipped=False,
        direct_examples_per_s=common.summary([d.get("examples_per_s") for d in direct], 2),
        hpo_examples_per_s=common.summary([h.get("examples_per_s") for h in hpo], 2),
        ratio=common.summary(ratios),
        # Best of the repeats on each side: robust to another process taking the cores for a
        # while (torch's threads then spin and one run can be several times slower).
        ratio_of_best=common.ratio(
            max((h.get("examples_per_s") or 0 for h in hpo), default=0) or None,
            max((d.get("examples_per_s") or 0 for d in direct), default=0) or None,
        ),
        raw={"direct": direct, "hpo": hpo},
    )
    errors = [r["error"] for r in direct + hpo if r.get("error")]
    if errors:
        out["errors"] = errors
    return out


def headline(section: dict[str, Any]) -> dict[str, Any]:
    return {
        "criteria_throughput_ratio": section["ratio"]["median"],
        "criteria_reason": section.get("reason"),
    }


def _main_direct(kwargs: dict[str, Any]) -> None:
    import optuna

    from hpo.tasks.criteria import objective

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", pruner=optuna.pruners.NopPruner())
    study.enqueue_trial(PARAMS)
    study.optimize(lambda t: objective(t, **kwargs), n_trials=1)
    print(json.dumps(_attrs(study.trials[0]), default=str))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "direct":
        _main_direct(json.loads(sys.argv[2]))
    else:
        raise SystemExit("usage: python -m bench.criteria_speed direct KWARGS_JSON")
