"""Recycling on memory growth (issue 14, item 3): the rule as a table, then real workers that
leak host memory and simulated GPU memory, through the real supervisor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from optuna.trial import TrialState

from hpo.growth import AtRest, GrowthLimits, GrowthWatch, growth_reason
from tests.conftest import assert_no_run_processes, load_study, run_hpo, write_config

LIMITS = GrowthLimits(rss_mb=1000, gpu_mb=500)

# (first rest, rest now, limits, the reason starts with / None)
TABLE: list[tuple[AtRest, AtRest, GrowthLimits, str | None]] = [
    (AtRest(800), AtRest(1700), LIMITS, None),  # 900 MB: within
    (AtRest(800), AtRest(1801), LIMITS, "memory growth: RSS at rest 1801 MB, 1001 MB"),
    (AtRest(800), AtRest(300), LIMITS, None),  # shrinking is fine
    (AtRest(800, 0), AtRest(800, 500), LIMITS, None),  # exactly the limit: within
    (AtRest(800, 0), AtRest(800, 501), LIMITS, "memory growth: GPU memory reserved at rest 501"),
    (AtRest(800, 200), AtRest(800, 650), LIMITS, None),  # grown 450 over a first rest of 200
    (AtRest(800), AtRest(800, 600), LIMITS, "memory growth: GPU"),  # CUDA first used later
    (AtRest(800, 900), AtRest(800, None), LIMITS, None),  # nothing measured now
    (AtRest(800, 0), AtRest(9000, 9000), GrowthLimits(None, None), None),  # both checks off
    (AtRest(800, 0), AtRest(9000, 9000), GrowthLimits(None, 500), "memory growth: GPU"),
    (AtRest(800, 0), AtRest(9000, 9000), LIMITS, "memory growth: RSS"),  # RSS named first
]


@pytest.mark.parametrize(("first", "now", "limits", "expected"), TABLE)
def test_growth_reason_table(
    first: AtRest, now: AtRest, limits: GrowthLimits, expected: str | None
) -> None:
    reason = growth_reason(first, now, limits)
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and reason.startswith(expected), reason
        assert "recycle_" in reason  # names the setting to change


def test_the_first_rest_is_the_baseline_and_checks_off_measure_nothing() -> None:
    class Devices:
        def __init__(self) -> None:
            self.mb = [0.0, 300.0, 700.0]

        def reserved_gpu_mem_mb(self) -> float:
            return self.mb.pop(0)

    watch = GrowthWatch(GrowthLimits(rss_mb=None, gpu_mb=500), Devices())
    assert watch.check() is None and watch.first is not None  # the first rest: measured
    assert watch.check() is None  # grown 300
    reason = watch.check()  # grown 700
    assert reason is not None and "recycle_gpu_growth_mb=500" in reason
    off = GrowthWatch(GrowthLimits(None, None), Devices())
    assert off.check() is None and off.first is None


def _events(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _leaking_study(tmp_path: Path, run_dir: Path, **cfg: Any) -> tuple[Any, list[Any], list[str]]:
    base = {"n_trials": 5, "workers": 1, "sampler": {"name": "random", "seed": 1}}
    path = write_config(
        tmp_path / "study.yaml",
        study="growth",
        objective="hpo.testing.objectives:leaks_memory",
        run_dir=str(run_dir),
        **{**base, **cfg},
    )
    proc = run_hpo("run", str(path), "--quiet", timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    recycled = [e["reason"] for e in _events(run_dir) if e["event"] == "worker_recycled"]
    return proc, load_study(run_dir, "growth").get_trials(), recycled


def test_a_worker_leaking_host_memory_is_replaced_between_trials(
    tmp_path: Path, run_dir: Path
) -> None:
    """120 MB kept per trial, limit 200: the first rest follows trial 0, growth 240 MB is seen
    after trial 2, so trials 0-2 share a worker and trials 3-4 run in a new one; none blamed."""
    _, trials, recycled = _leaking_study(
        tmp_path,
        run_dir,
        objective_kwargs={"rss_mb": 120},
        recycle_rss_growth_mb=200,
        recycle_gpu_growth_mb=None,
    )
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 5
    pids = [t.user_attrs["pid"] for t in trials]
    assert pids[0] == pids[1] == pids[2] != pids[3] == pids[4], pids
    assert len(recycled) == 1 and "recycle_rss_growth_mb=200" in recycled[0], recycled
    assert_no_run_processes(run_dir)


def test_a_worker_leaking_gpu_memory_is_replaced_and_the_leak_freed(
    tmp_path: Path, run_dir: Path
) -> None:
    """Simulated GPU: 300 MB held past each trial, limit 500 (RSS check off). The worker goes
    after trial 2 (600 MB over its first rest), and its leaked memory with it, so the GPU's
    ledger never holds more than three trials' leaks and all five trials complete."""
    _, trials, recycled = _leaking_study(
        tmp_path,
        run_dir,
        objective_kwargs={"gpu_mb": 300},
        device_backend="simulated",
        simulated_gpus={"count": 1, "memory_mb": 1000},
        recycle_rss_growth_mb=None,
        recycle_gpu_growth_mb=500,
    )
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 5
    pids = [t.user_attrs["pid"] for t in trials]
    assert pids[0] == pids[1] == pids[2] != pids[3] == pids[4], pids
    assert len(recycled) == 1 and "recycle_gpu_growth_mb=500" in recycled[0], recycled
    assert_no_run_processes(run_dir)


def test_an_oom_caused_by_earlier_trials_leftovers_is_not_the_trials_fault(
    tmp_path: Path, run_dir: Path
) -> None:
    """The same leak with the check off: trial 3 meets an OOM in a worker that held 900 MB
    before it began. Not its fault (hpo.failures.policy.INHERITED_OOM_MB): FAIL, blameless, and
    its parameters retried in a new worker, where they complete. Before: PRUNED as ``oom``."""
    _, trials, recycled = _leaking_study(
        tmp_path,
        run_dir,
        n_trials=4,
        objective_kwargs={"gpu_mb": 300},
        device_backend="simulated",
        simulated_gpus={"count": 1, "memory_mb": 1000},
        recycle_rss_growth_mb=None,
        recycle_gpu_growth_mb=None,
    )
    assert not [r for r in recycled if "memory growth" in r], recycled  # the check is off
    states = [t.state for t in trials]
    assert states == [TrialState.COMPLETE] * 3 + [TrialState.FAIL, TrialState.COMPLETE], states
    oom, retry = trials[3], trials[4]
    assert oom.user_attrs["hpo:failure_class"] == "oom"
    assert oom.user_attrs["hpo:blameless"] is True
    assert "held 900 MB left by its earlier trials" in oom.user_attrs["hpo:failure_note"]
    assert retry.params == oom.params
    assert retry.user_attrs["pid"] != oom.user_attrs["pid"]
    assert_no_run_processes(run_dir)


def _cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="no CUDA device: torch.cuda.is_available() is False")
def test_real_cuda_memory_at_rest_grows_with_a_kept_tensor_and_not_with_a_freed_one() -> None:
    import torch

    from hpo.devices import measure

    watch = GrowthWatch(GrowthLimits(rss_mb=None, gpu_mb=256), measure)
    warm = torch.ones(1024, device="cuda") * 2  # the context and the allocator exist
    del warm
    measure.clear_caches()
    assert watch.check() is None  # the first rest
    freed = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    del freed
    measure.clear_caches()
    assert watch.check() is None  # empty_cache gave it back
    kept = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    measure.clear_caches()
    reason = watch.check()
    assert reason is not None and "recycle_gpu_growth_mb=256" in reason, reason
    del kept
    measure.clear_caches()
