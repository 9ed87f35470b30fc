"""Objectives for the simulated GPU backend (tests, demos, benchmarks of packing).

``packing_objective`` behaves like a fine-tuning trial whose GPU memory is decided by its batch
size: it holds the footprint on its simulated GPU (``hpo.devices.simulated.allocate``) while it
"trains" for a short sleep proportional to its work, then returns a smooth loss. Run it with
``device_backend: simulated``; packing mistakes then surface as real ``torch.OutOfMemoryError``
in the worker.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from typing import Any

from hpo.devices import simulated

#: Peak memory of a BERT-base-sized fine-tune (AdamW, fp32 master weights, seq 256) by batch
#: size on a 24 GB card: about 1.5 GB of weights and optimizer state plus activations that grow
#: linearly with the batch.
DEFAULT_FOOTPRINTS_MB: dict[str, int] = {
    "8": 3072,
    "16": 4608,
    "32": 7680,
    "48": 10752,
    "64": 14336,
}


def _choices(table: Mapping[str, int]) -> list[Any]:
    keys = list(table)
    if all(k.lstrip("-").isdigit() for k in keys):
        return sorted(int(k) for k in keys)
    return sorted(keys)


def footprint_table(footprint_mb: Mapping[str, int] | None = None) -> dict[str, int]:
    """The footprint table in force: the kwarg, else ``HPO_SIM_FOOTPRINTS``, else the default."""
    if footprint_mb:
        return {str(k): int(v) for k, v in footprint_mb.items()}
    return simulated.footprints_from_env() or dict(DEFAULT_FOOTPRINTS_MB)


def packing_objective(
    trial: Any,
    footprint_mb: Mapping[str, int] | None = None,
    seconds: float = 0.2,
    param: str | None = None,
    oom_after: float = 0.0,
) -> float:
    """A trial needing a batch-size-dependent amount of simulated GPU memory.

    ``footprint_mb``: value of ``param`` (default ``batch_size``, or ``HPO_SIM_FOOTPRINT_PARAM``)
    -> MB; ``seconds``: duration of the smallest configuration (larger ones take longer, growing
    with the square root of the batch); ``oom_after``: fraction of the duration spent before the
    memory is taken (a real OOM comes after the first steps, not at start).
    """
    table = footprint_table(footprint_mb)
    name = param or os.environ.get(simulated.ENV_SIM_FOOTPRINT_PARAM) or "batch_size"
    choices = _choices(table)
    value = trial.suggest_categorical(name, choices)
    lr = trial.suggest_float("lr", 1e-5, 1e-2, log=True)
    smallest = float(choices[0]) if isinstance(choices[0], int) else 1.0
    scale = math.sqrt(float(value) / smallest) if isinstance(value, int) and smallest > 0 else 1.0
    duration = seconds * scale
    if oom_after > 0:
        time.sleep(duration * oom_after)
    with simulated.allocate(table[str(value)]):
        time.sleep(duration * (1.0 - oom_after))
    batch_term = abs(math.log2(float(value)) - 5.0) if isinstance(value, int) and value > 0 else 0.0
    return (math.log10(lr) + 3.5) ** 2 + 0.1 * batch_term
