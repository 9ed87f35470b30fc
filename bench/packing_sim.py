"""Packing benchmark: ``trials_per_gpu: auto`` against fixed 3 and 4 trials per GPU.

A discrete-event (fluid) simulation of a long study on 2 simulated 24 GB GPUs; no processes,
pure Python, a few seconds. It drives the real :class:`hpo.devices.Packer` and
:class:`hpo.devices.MemoryModel` exactly as the supervisor does: ask a trial, ``choose`` a GPU
(``None``: the trial waits for the next finish), ``start``, and at the end ``finish`` with the
measured peak.

The workload is a fine-tuning sweep whose batch size decides memory and speed:

* footprint (what ``torch.cuda.max_memory_reserved`` measures) 3-14 GB by batch size, each run
  92-100% of its batch size's table value (sequence lengths vary), plus a CUDA context of
  400 MB per worker process that the measurement misses. A worker keeps its context while it
  is idle, so every worker that has run a trial holds 400 MB. The packer starts from a 512 MB
  guess and learns the 400 MB that workers measure (NVML's memory for the process minus
  torch's reserved memory), as ``hpo.devices.measure.process_overhead_mb`` reports it;
* time alone on a GPU grows with the batch (``sqrt(batch / 8)`` x 10 min, +-20%), and so does
  the GPU utilisation of a trial alone (35% at batch 8 to 95% at batch 64). Trials sharing a
  GPU share its compute: each runs at ``1 / max(1, sum of utilisations)`` of its solo speed,
  times a time-slicing penalty of 2% per extra process;
* a trial that starts on a GPU whose memory cannot hold it (the sum of the true footprints and
  contexts exceeds 24 GB) is a *packing OOM*: it is lost after 20% of its work, and, as hpo's
  failure policy does with an OOM on a shared GPU, retried alone on a GPU (up to
  ``max_infra_retries`` = 3 times), without blame.

Throughput counts completed trials per simulated hour over a 24-hour study, with that policy:
every sampled trial is eventually run whole, so no mode can look fast by dropping big trials.
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
OVERHEAD_MB = 512  # the guess, until workers measure CONTEXT_MB
AUTO_WORKERS = 3  # per GPU: the most trials auto may run at once on one GPU (each holds a context)
INFRA_RETRIES = 3  # hpo's max_infra_retries: a shared-GPU OOM is retried alone


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
    max_retries: int = INFRA_RETRIES,
    alone: bool = True,
    workers_per_gpu: int | None = None,
) -> dict[str, float]:
    """One study; returns trials_per_hour, packing_ooms and helpers for the report.

    ``max_retries``: how often a trial lost to a packing OOM is run again with the same
    parameters, before any new trial (``enqueue_trial`` puts it first); 0: it is simply lost.
    ``alone``: a retry runs alone on a GPU (hpo's policy for an OOM on a shared GPU), else it
    is placed like any trial. ``workers_per_gpu``: worker processes per GPU (default: N for
    a fixed N, ``AUTO_WORKERS`` for auto).
    """
    rng = random.Random(seed)
    per_gpu = workers_per_gpu or (AUTO_WORKERS if mode == "auto" else int(mode))
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
        slots=dict.fromkeys(range(GPUS), per_gpu),
    )
    workers = GPUS * per_gpu
    idle: dict[int, list[int]] = {d: list(range(per_gpu)) for d in range(GPUS)}  # worker ids
    warm: dict[int, set[int]] = {d: set() for d in range(GPUS)}  # workers holding a context
    held_alone: dict[int, int] = {}  # device -> the retry that runs alone on it
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

    def held_on(device: int) -> float:
        busy = {t.extra["worker"] for t in running.values() if t.device == device}
        contexts = len(warm[device] - busy) * CONTEXT_MB  # idle workers keep their context
        return contexts + sum(t.held for t in running.values() if t.device == device)

    while now < end:
        # Place as many trials as the packer allows, oldest first; a retry runs alone.
        while len(running) < workers:
            if not queue:
                if retries:
                    old = retries.pop(0)
                    nxt = _Trial(counter, old.params, old.footprint, old.work, old.util)
                    nxt.extra["tries"] = old.extra.get("tries", 0) + 1
                    nxt.extra["alone"] = alone
                else:
                    nxt = _sample(rng, counter)
                queue.append(nxt)
                counter += 1
            t = queue[0]
            exclude = list(held_alone) + [d for d in range(GPUS) if not idle[d]]
            if t.extra.get("alone"):
                exclude += [d for d in range(GPUS) if packer.running_on(d)]
            device = packer.choose(t.params, exclude=exclude)
            if device is None:
                break
            queue.pop(0)
            worker = idle[device].pop(0)
            t.extra["worker"] = worker
            used = held_on(device)
            need = t.footprint + (0 if worker in warm[device] else CONTEXT_MB)
            warm[device].add(worker)
            t.device = device
            if used + need > CAPACITY_MB:
                t.oom_at = OOM_AFTER * t.work
                t.held = max(0.0, min(t.footprint, CAPACITY_MB - used))
            else:
                t.held = t.footprint
            if t.extra.get("alone"):
                held_alone[device] = t.number
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
        mem_used += dt_min * sum(held_on(d) for d in range(GPUS))
        for n, t in running.items():
            t.done += r[n] * dt_min
        now += dt_min
        if now >= end:
            break
        t = running.pop(who)
        idle[t.device].append(t.extra["worker"])
        held_alone.pop(t.device, None) if held_alone.get(t.device) == t.number else None
        packer.set_overhead(t.device, CONTEXT_MB)  # what the worker measured
        packer.note_context(t.device, t.extra["worker"])
        if t.oom_at is not None:
            ooms += 1
            packer.finish(t.number, t.held, oom=True)
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


MODES: dict[str, int | Literal["auto"]] = {"auto": "auto", "fixed2": 2, "fixed3": 3, "fixed4": 4}


def run(
    seed: int = 0, modes: dict[str, int | Literal["auto"]] | None = None
) -> dict[str, dict[str, float]]:
    """The benchmark for one seed: ``{"auto": {...}, "fixed3": {...}, "fixed4": {...}}``.

    Per mode: ``trials_per_hour`` (completed trials per hour, a trial lost to a packing OOM
    retried alone as hpo does) and ``packing_ooms``; then ``trials_per_hour_lost`` (the same
    when such a trial is simply lost: survivorship, fixed modes finish a lighter mix),
    ``mix_adjusted_trials_per_hour``
    (completed GPU work divided by the work of an average *sampled* trial: what the rate would
    be if the completed trials had the sampled mix; a packer that loses big trials completes a
    lighter mix and looks faster in plain trials per hour), ``useful_gpu_pct`` (GPU time spent on
    trials that completed), ``gpu_busy_pct`` and ``gpu_mem_used_pct``.
    """
    out: dict[str, dict[str, float]] = {}
    for name, mode in (modes or MODES).items():
        hpo = simulate(mode, seed)
        lost = simulate(mode, seed, max_retries=0)
        out[name] = {
            "trials_per_hour": hpo["trials_per_hour"],
            "packing_ooms": hpo["packing_ooms"],
            "trials_per_hour_lost": lost["trials_per_hour"],
            "mix_adjusted_trials_per_hour": hpo["mix_adjusted_trials_per_hour"],
            "useful_gpu_pct": hpo["useful_gpu_pct"],
            "gpu_busy_pct": hpo["gpu_busy_pct"],
            "gpu_mem_used_pct": hpo["gpu_mem_used_pct"],
        }
    return out


def main() -> None:
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    result = run(seed)
    extra: dict[str, dict[str, float]] = {}
    ceiling = GPUS * 3600.0 / MEAN_TRIAL_WORK
    print(
        f"{GPUS} x {CAPACITY_MB // 1024} GB simulated GPUs, {HOURS:.0f} h study, seed {seed}; "
        f"at most {ceiling:.2f} trials/h of the sampled mix fit in the GPUs' compute"
    )
    cols = (
        ("trials/h", "trials_per_hour"),
        ("OOMs", "packing_ooms"),
        ("lost t/h", "trials_per_hour_lost"),
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
