"""Packing: ``trials_per_gpu: auto`` against fixed 2, 3 and 4 trials per GPU, on simulated GPUs.

Runs ``bench/packing_sim.py``'s ``run(seed)`` (a discrete-event simulation of a 24-hour study on
2 simulated 24 GB GPUs that drives hpo's real ``Packer`` and ``MemoryModel``; see its docstring
for the workload) over several seeds and reports min/median/max per mode. Deterministic for a
seed; takes well under a second per seed.
"""

from __future__ import annotations

from typing import Any

from bench import common
from bench import packing_sim as sim

KEYS = (
    "trials_per_hour",
    "packing_ooms",
    "trials_per_hour_lost",
    "mix_adjusted_trials_per_hour",
    "useful_gpu_pct",
    "gpu_busy_pct",
    "gpu_mem_used_pct",
)


def run(quick: bool) -> dict[str, Any]:
    seeds = list(range(2 if quick else 10))
    per_seed = [sim.run(seed) for seed in seeds]
    modes: dict[str, Any] = {}
    for mode in per_seed[0]:
        modes[mode] = {
            k: common.summary([r[mode][k] for r in per_seed], 2)
            for k in KEYS
            if k in per_seed[0][mode]
        }
    vs: dict[str, Any] = {}
    for other in ("fixed2", "fixed3", "fixed4"):
        if other in per_seed[0]:
            for key in ("trials_per_hour", "mix_adjusted_trials_per_hour"):
                vs[f"auto/{other} {key}"] = common.summary(
                    [common.ratio(r["auto"][key], r[other][key]) for r in per_seed]
                )
    return {
        "seeds": seeds,
        "gpus": getattr(sim, "GPUS", None),
        "gpu_memory_mb": getattr(sim, "CAPACITY_MB", None),
        "hours": getattr(sim, "HOURS", None),
        "modes": modes,
        "ratios": vs,
    }


def headline(section: dict[str, Any]) -> dict[str, Any]:
    return {
        "packing": {
            mode: {
                "trials_per_hour": v["trials_per_hour"]["median"],
                "packing_ooms": v["packing_ooms"]["median"],
            }
            for mode, v in section["modes"].items()
        }
    }
