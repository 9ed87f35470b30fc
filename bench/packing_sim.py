"""Packing benchmark: ``trials_per_gpu: auto`` against fixed 3 and 4 trials per GPU.

A discrete-event (fluid) simulation of a long study on 2 simulated 24 GB GPUs; no processes,
pure Python, a few seconds. It drives the real :class:`hpo.devices.Packer` and
:class:`hpo.devices.MemoryModel` exactly as the supervisor does: ask a trial, ``choose`` a GPU
(``None``: the trial waits for the next finish), ``start``, and at the end ``finish`` with the
measured peak.

The workload is a fine-tuning sweep whose batch size decides memory and speed:

* footprint (what ``torch.cuda.max_memory_reserved`` measures) 3-14 GB by batch size, each run
  92-100% of its batch size's table value (sequence lengths vary), plus a CUDA context of
  400 MB per process that the measurement misses (the packer's ``overhead_mb`` covers it);
* time alone on a GPU grows with the batch (``sqrt(batch / 8)`` x 10 min, +-20%), and so does
  the GPU utilisation of a trial alone (35% at batch 8 to 95% at batch 64). Trials sharing a
  GPU share its compute: each runs at ``1 / max(1, sum of utilisations)`` of its solo speed,
  times a time-slicing penalty of 2% per extra process;
* a trial that starts on a GPU whose memory cannot hold it (the sum of the true footprints and
  contexts exceeds 24 GB) is a *packing OOM*: it is lost after 20% of its work.

Throughput counts completed trials per simulated hour over a 24-hour study.
"""

from __future__ import annotations

import json
import math
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hpo.devices.packing import MemoryModel, Packer  # noqa: E402

CAPACITY_MB = 24576
GPUS = 2
CONTEXT_MB = 400
FOOTPRINT_MB = {8: 3072, 16: 4608, 32: 7680, 48: 10752, 64: 14336}
UTIL = {8: 0.35, 16: 0.5, 32: 0.7, 48: 0.85, 64: 0.95}
BASE_SECONDS = 600.0
SLICE_PENALTY = 0.02
OOM_AFTER = 0.2
HOURS = 24.0
MARGIN_MB = 1024
OVERHEAD_MB = 512
AUTO_WORKERS = 8  # per GPU: the most trials auto may run at once on one GPU


#: GPU-seconds (solo time x utilisation) of the average sampled trial: 2 GPUs can finish at most
#: 7200 / MEAN_TRIAL_WORK trials of the sampled mix per hour, whatever the packing.
MEAN_TRIAL_WORK = (
    BASE_SECONDS * sum(math.sqrt(b / 8) * UTIL[b] for b in FOOTPRINT_MB) / len(FOOTPRINT_MB)
)


@dataclass
class _Trial:
    number: int
    params: dict[str, Any]
    footprint: float  # MB measured by torch
    work: float  # seconds alone at full speed
    util: float
    device: int = -1
    done: float = 0.0
    held: float = 0.0  # MB actually held on the GPU (incl. context)
    oom_at: float | None = None  # work done at which it dies of OOM
    extra: dict[str, Any] = field(default_factory=dict)


def _sample(rng: random.Random, number: int) -> _Trial:
    bs = rng.choice(sorted(FOOTPRINT_MB))
    params = {"batch_size": bs, "lr": 10 ** rng.uniform(-5, -2)}
    return _Trial(
        number=number,
        params=params,
        footprint=FOOTPRINT_MB[bs] * rng.uniform(0.92, 1.0),
        work=BASE_SECONDS * math.sqrt(bs / 8) * rng.uniform(0.8, 1.2),
        util=UTIL[bs],
    )


def simulate(
    mode: int | Literal["auto"],
    seed: int,
    hours: float = HOURS,
    max_retries: int = 0,
    lookahead: int = 1,
) -> dict[str, float]:
    """One study; returns trials_per_hour, packing_ooms and helpers for the report.

    ``max_retries``: how often a trial lost to a packing OOM is run again with the same
    parameters, before any new trial (``enqueue_trial`` puts it first); 0: it is simply lost.
    ``lookahead``: how many asked trials may wait for a GPU at once (``Packer.plan`` backfills
    younger ones behind a blocked one); 1: strictly one at a time (``Packer.choose``).
    """
    rng = random.Random(seed)
    now = 0.0
    end = hours * 3600.0
    packer = Packer(
        list(range(GPUS)),
        dict.fromkeys(range(GPUS), CAPACITY_MB),
        mode,
        MARGIN_MB,
        MemoryModel(),
        clock=lambda: now,
        overhead_mb=OVERHEAD_MB if mode == "auto" else 0,
    )
    workers = GPUS * (AUTO_WORKERS if mode == "auto" else int(mode))
    running: dict[int, _Trial] = {}
    counter = 0
    queue: list[_Trial] = []  # asked trials waiting for a GPU, oldest first
    completed = ooms = 0
    work_done = 0.0  # solo GPU-seconds x utilisation of completed trials
    retries: list[_Trial] = []
    busy_util = 0.0  # integral of min(1, sum util) over time and GPUs
    mem_used = 0.0  # integral of the memory held over time

    def rates() -> dict[int, float]:
        out: dict[int, float] = {}
        for d in range(GPUS):
            on = [t for t in running.values() if t.device == d]
            if not on:
                continue
            load = max(1.0, sum(t.util for t in on))
            slow = 1.0 + SLICE_PENALTY * (len(on) - 1)
            for t in on:
                out[t.number] = 1.0 / (load * slow)
        return out

    while now < end:
        # Place as many trials as the packer allows (oldest first, backfilling behind a blocked
        # trial when lookahead > 1), asking new trials as the queue empties.
        while True:
            while len(queue) < lookahead:
                if retries:
                    old = retries.pop(0)
                    nxt = _Trial(counter, old.params, old.footprint, old.work, old.util)
                    nxt.extra["tries"] = old.extra.get("tries", 0) + 1
                else:
                    nxt = _sample(rng, counter)
                queue.append(nxt)
                counter += 1
            placements = packer.plan([(q.number, q.params) for q in queue])
            placements = placements[: max(0, workers - len(running))]
            if not placements:
                break
            for number, device in placements:
                t = next(q for q in queue if q.number == number)
                queue.remove(t)
                used = sum(r.held for r in running.values() if r.device == device)
                need = t.footprint + CONTEXT_MB
                t.device = device
                if used + need > CAPACITY_MB:
                    t.oom_at = OOM_AFTER * t.work
                    t.held = max(0.0, min(need, CAPACITY_MB - used))
                else:
                    t.held = need
                packer.start(t.number, device, t.params)
                running[t.number] = t
        if not running:
            raise RuntimeError("deadlock: nothing runs and the packer places nothing")
        r = rates()
        # Next event: a completion or an OOM.
        dt_min, who = math.inf, -1
        for n, t in running.items():
            target = t.oom_at if t.oom_at is not None else t.work
            dt = (target - t.done) / r[n]
            if dt < dt_min:
                dt_min, who = dt, n
        dt_min = min(dt_min, end - now)
        for d in range(GPUS):
            busy_util += dt_min * min(1.0, sum(t.util for t in running.values() if t.device == d))
        mem_used += dt_min * sum(t.held for t in running.values())
        for n, t in running.items():
            t.done += r[n] * dt_min
        now += dt_min
        if now >= end:
            break
        t = running.pop(who)
        if t.oom_at is not None:
            ooms += 1
            packer.finish(t.number, None, oom=True)
            if t.extra.get("tries", 0) < max_retries:
                retries.append(t)
        else:
            completed += 1
            work_done += t.work * t.util
            packer.finish(t.number, t.footprint)
    return {
        "trials_per_hour": round(completed / hours, 2),
        "packing_ooms": ooms,
        "completed": completed,
        "mix_adjusted_trials_per_hour": round(work_done / MEAN_TRIAL_WORK / hours, 2),
        "useful_gpu_pct": round(100.0 * work_done / (GPUS * now), 1),
        "gpu_busy_pct": round(100.0 * busy_util / (GPUS * now), 1),
        "gpu_mem_used_pct": round(100.0 * mem_used / (GPUS * CAPACITY_MB * now), 1),
    }


MODES: dict[str, int | Literal["auto"]] = {"auto": "auto", "fixed3": 3, "fixed4": 4}


def run(
    seed: int = 0, modes: dict[str, int | Literal["auto"]] | None = None
) -> dict[str, dict[str, float]]:
    """The benchmark for one seed: ``{"auto": {...}, "fixed3": {...}, "fixed4": {...}}``.

    Per mode: ``trials_per_hour`` (completed trials per hour; a trial lost to a packing OOM is
    not re-run) and ``packing_ooms``; then ``trials_per_hour_retry1`` (the same with each lost
    trial re-run once, hpo's default ``max_retries: 1``), ``mix_adjusted_trials_per_hour``
    (completed GPU work divided by the work of an average *sampled* trial: what the rate would
    be if the completed trials had the sampled mix; a packer that loses big trials completes a
    lighter mix and looks faster in plain trials per hour), ``useful_gpu_pct`` (GPU time spent on
    trials that completed), ``gpu_busy_pct`` and ``gpu_mem_used_pct``.
    """
    out: dict[str, dict[str, float]] = {}
    for name, mode in (modes or MODES).items():
        lost = simulate(mode, seed)
        retried = simulate(mode, seed, max_retries=1)
        out[name] = {
            "trials_per_hour": lost["trials_per_hour"],
            "packing_ooms": lost["packing_ooms"],
            "trials_per_hour_retry1": retried["trials_per_hour"],
            "mix_adjusted_trials_per_hour": lost["mix_adjusted_trials_per_hour"],
            "useful_gpu_pct": lost["useful_gpu_pct"],
            "gpu_busy_pct": lost["gpu_busy_pct"],
            "gpu_mem_used_pct": lost["gpu_mem_used_pct"],
        }
    return out


def main() -> None:
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    result = run(seed)
    extra = run(seed, {"fixed2": 2})
    ceiling = GPUS * 3600.0 / MEAN_TRIAL_WORK
    print(
        f"{GPUS} x {CAPACITY_MB // 1024} GB simulated GPUs, {HOURS:.0f} h study, seed {seed}; "
        f"at most {ceiling:.2f} trials/h of the sampled mix fit in the GPUs' compute"
    )
    cols = (
        ("trials/h", "trials_per_hour"),
        ("OOMs", "packing_ooms"),
        ("retry1 t/h", "trials_per_hour_retry1"),
        ("mix-adj t/h", "mix_adjusted_trials_per_hour"),
        ("useful GPU%", "useful_gpu_pct"),
        ("busy%", "gpu_busy_pct"),
        ("mem%", "gpu_mem_used_pct"),
    )
    print(f"{'mode':<8}" + "".join(f"{title:>13}" for title, _ in cols))
    for name, r in {**result, **extra}.items():
        print(f"{name:<8}" + "".join(f"{r[key]:>13}" for _, key in cols))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
