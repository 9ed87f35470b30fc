"""Ray Tune beside hpo: the null objective, 4 concurrent trials, trials per second.

Ray lives only in its own virtualenv, ``bench/.venv-ray`` (create it with
``python3 -m venv bench/.venv-ray && bench/.venv-ray/bin/pip install "ray[tune]"``, or let
``run_all.py --setup-ray`` do it); it is never installed into hpo's environment. The driver,
``bench/ray_null.py``, runs there as a subprocess, time-boxed. Ray's default search samples the
space at random (no TPE), with ``reuse_actors=True``: the cheapest configuration Ray offers.

Right after Ray, hpo runs the same count of null-objective trials with 4 workers and
RandomSampler (like Ray's search), as many times, so the comparison is side by side (hpo with
TPE, its default, is in the overhead section). Both are reported two ways: excluding start-up
(hpo: first trial started to last result; Ray: ``Tuner.fit`` wall time, ``ray.init`` excluded)
and including it (hpo: process wall time; Ray: ``ray.init`` + the first fit).
"""

from __future__ import annotations

import subprocess
from typing import Any

from bench import common

RAY_VENV = common.BENCH / ".venv-ray"
RAY_PY = RAY_VENV / "bin" / "python"
CONCURRENCY = 4


def setup(timeout_s: float = 900) -> str | None:
    """Create the Ray venv if missing; returns a reason if it cannot be had."""
    if RAY_PY.exists():
        return None
    try:
        subprocess.run(["python3", "-m", "venv", str(RAY_VENV)], check=True, timeout=120)
        subprocess.run(
            [str(RAY_VENV / "bin" / "pip"), "install", "-q", "ray[tune]"],
            check=True,
            timeout=timeout_s,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"could not create {RAY_VENV} with ray[tune]: {exc}"
    return None


def _ray(n: int, repeats: int, timeout_s: float) -> tuple[dict[str, Any] | None, str | None]:
    if not RAY_PY.exists():
        return None, (
            f"Ray is not installed: {RAY_VENV} is missing (python3 -m venv bench/.venv-ray && "
            'bench/.venv-ray/bin/pip install "ray[tune]", or run_all.py --setup-ray)'
        )
    where = common.scratch("ray")
    try:
        p = subprocess.run(
            [
                str(RAY_PY),
                str(common.BENCH / "ray_null.py"),
                str(n),
                str(CONCURRENCY),
                str(repeats),
                str(where),
            ],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
            cwd=where,
        )
    except subprocess.TimeoutExpired:
        _stop_ray()
        return None, f"Ray Tune did not finish {repeats} x {n} trials within {timeout_s:.0f} s"
    res = common.last_json_line(p.stdout)
    if p.returncode != 0 or res is None:
        last = (p.stderr.strip().splitlines() or ["no output"])[-1][:300]
        return None, f"Ray Tune failed (exit code {p.returncode}): {last}"
    return res, None


def _stop_ray() -> None:
    """A timed-out driver may leave Ray's own daemons: stop them with Ray's own command."""
    ray_cli = RAY_VENV / "bin" / "ray"
    if ray_cli.exists():
        subprocess.run([str(ray_cli), "stop", "--force"], capture_output=True, timeout=60)


def _hpo(n: int, sampler: str, rep: int) -> dict[str, Any]:
    where = common.scratch(f"ray-hpo/{sampler}-{rep}")
    cfg = {
        "objective": common.NULL_OBJECTIVE,
        "storage": common.sqlite_url(where / "study.db"),
        "n_trials": n,
        "workers": CONCURRENCY,
        "sampler": {"name": sampler},
    }
    run = common.run_hpo(cfg, where, timeout_s=180)
    return {
        "rc": run.rc,
        "trials_per_s": run.trials_per_s(),
        "trials_per_s_with_startup": len(run.completed) / run.wall_s if run.wall_s else None,
    }


def run(quick: bool) -> dict[str, Any]:
    n = 50 if quick else 100
    repeats = 1 if quick else 3
    res, reason = _ray(n, repeats, timeout_s=120 if quick else 240)
    out: dict[str, Any] = {"trials": n, "concurrency": CONCURRENCY, "repeats": repeats}
    hpo_random = [_hpo(n, "random", r) for r in common.repeats(repeats, "ray (hpo side)")]
    out["hpo_random_trials_per_s"] = common.summary([r["trials_per_s"] for r in hpo_random], 2)
    out["hpo_random_trials_per_s_with_startup"] = common.summary(
        [r["trials_per_s_with_startup"] for r in hpo_random], 2
    )
    if res is None:
        out["ray_trials_per_s"] = None
        out["ray_reason"] = reason
        return out
    fits = res["fits"]
    out["ray_version"] = res.get("ray")
    out["ray_init_s"] = res.get("init_s")
    out["ray_trials_per_s"] = common.summary([f["trials_per_s"] for f in fits], 2)
    first = fits[0]
    out["ray_trials_per_s_with_startup"] = round(
        first["trials"] / (first["wall_s"] + float(res.get("init_s") or 0)), 2
    )
    out["hpo_random_vs_ray"] = common.summary(
        [
            common.ratio(h["trials_per_s"], f["trials_per_s"])
            for h, f in zip(hpo_random, fits, strict=False)
        ]
    )
    out["ray_reason"] = None
    return out


def headline(section: dict[str, Any]) -> dict[str, Any]:
    r = section.get("ray_trials_per_s")
    return {
        "ray_trials_per_s": r["median"] if isinstance(r, dict) else None,
        "ray_reason": section.get("ray_reason"),
    }
