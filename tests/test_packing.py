"""Packer and MemoryModel: fixed vs auto, conservative start, fit, quarantine, backfill."""

from __future__ import annotations

import math

import pytest

from hpo.devices.packing import MemoryModel, Packer

GB = 1024


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def bs(n: int, lr: float = 1e-3) -> dict[str, object]:
    return {"batch_size": n, "lr": lr}


def trained(peaks: dict[int, float], headroom: float = 1.1) -> MemoryModel:
    model = MemoryModel(headroom=headroom)
    for batch, peak in peaks.items():
        model.observe(bs(batch), peak)
    return model


def packer(model: MemoryModel | None = None, **kw: object) -> Packer:
    args: dict[str, object] = {
        "devices": [0, 1],
        "capacity_mb": {0: 24 * GB, 1: 24 * GB},
        "trials_per_gpu": "auto",
        "margin_mb": 1 * GB,
        "model": model or MemoryModel(),
    }
    args.update(kw)
    return Packer(**args)  # type: ignore[arg-type]


# -- MemoryModel ---------------------------------------------------------------------------------
def test_model_unknown_key_is_none() -> None:
    model = MemoryModel()
    assert model.predict(bs(8)) is None
    assert model.predict(None) is None


def test_model_predicts_max_peak_times_headroom() -> None:
    model = MemoryModel()
    model.observe(bs(8, 1e-3), 3000)
    model.observe(bs(8, 1e-4), 2800)  # a float param does not change the key
    assert model.predict(bs(8, 5e-2)) == pytest.approx(3300)
    model.observe(bs(8), 3500)
    assert model.predict(bs(8)) == pytest.approx(3850)
    assert model.predict(bs(16)) is None
    assert len(model) == 1


def test_model_default_key_uses_every_non_float_param() -> None:
    model = MemoryModel()
    key = model.key({"model": "bert", "batch_size": 8, "lr": 1e-3, "fp16": True, "dropout": 0.1})
    assert key == (("batch_size", 8), ("fp16", True), ("model", "bert"))
    model.observe({"model": "bert", "batch_size": 8, "lr": 1e-3}, 1000)
    assert model.predict({"model": "roberta", "batch_size": 8, "lr": 1e-3}) is None


def test_model_configured_keys() -> None:
    model = MemoryModel(keys=["batch_size"])
    model.observe({"batch_size": 8, "model": "bert", "seed": 1}, 1000)
    assert model.predict({"batch_size": 8, "model": "roberta", "seed": 7}) == pytest.approx(1100)
    assert model.predict({"model": "bert"}) is None  # missing key param: a different key


def test_model_unhashable_values_are_keys_too() -> None:
    model = MemoryModel()
    model.observe({"layers": [64, 64], "opts": {"a": 1}}, 500)
    assert model.predict({"layers": [64, 64], "opts": {"a": 1}}) == pytest.approx(550)


def test_model_oom_means_alone_until_measured() -> None:
    model = MemoryModel()
    model.observe(bs(64), 14000)
    model.observe_oom(bs(64))
    assert model.predict(bs(64)) == math.inf
    model.observe(bs(64), 14500)
    assert model.predict(bs(64)) == pytest.approx(15950)


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_model_rejects_bad_peaks(bad: float) -> None:
    with pytest.raises(ValueError):
        MemoryModel().observe(bs(8), bad)


def test_model_rejects_headroom_below_one() -> None:
    with pytest.raises(ValueError):
        MemoryModel(headroom=0.9)


# -- fixed N -------------------------------------------------------------------------------------
def test_fixed_n_ignores_memory_and_spreads() -> None:
    p = packer(trials_per_gpu=2)
    placed = []
    for n in range(4):
        d = p.choose(bs(64))  # unknown size: irrelevant for fixed N
        assert d is not None
        p.start(n, d, bs(64))
        placed.append(d)
    assert placed == [0, 1, 0, 1]
    assert p.choose(bs(8)) is None
    assert "trials_per_gpu" in p.explain(bs(8))
    p.finish(1, 5000)
    assert p.choose(bs(8)) == 1


def test_fixed_n_with_params_none() -> None:
    p = packer(trials_per_gpu=1)
    p.start(0, p.choose(None) or 0, None)
    assert p.choose(None) == 1


# -- auto: conservative start --------------------------------------------------------------------
def test_auto_unknown_trial_runs_alone() -> None:
    p = packer()
    assert p.choose(bs(8)) == 0
    p.start(0, 0, bs(8))
    # GPU 0 runs a trial of unknown size: nothing joins it, not even a known small one.
    assert p.choose(bs(8)) == 1
    p.start(1, 1, bs(8))
    assert p.choose(bs(8)) is None
    assert p.choose(None) is None
    assert "unknown size" in p.explain(bs(8))
    p.finish(0, 3000)
    # Trial 1 is now predictable (same key): known trials may join it.
    assert p.predicted_mb(1) == pytest.approx(3300)
    assert p.choose(bs(8)) == 0  # GPU 0 empty: fewest running first
    p.start(2, 0, bs(8))
    assert p.choose(bs(8)) == 0  # one trial each, equal fit: lowest index


def test_auto_params_none_runs_alone() -> None:
    p = packer(trained({8: 3000}))
    p.start(0, 0, bs(8))
    assert p.choose(None) == 1
    p.start(1, 1, None)
    assert p.choose(bs(8)) == 0  # GPU 1 runs an unknown trial
    p.start(2, 0, bs(8))
    p.finish(1, 999)  # a None-params trial teaches nothing
    assert len(p.model) == 1


def test_unknown_trial_waits_for_an_empty_gpu() -> None:
    p = packer(trained({8: 3000}))
    p.start(0, 0, bs(8))
    p.start(1, 1, bs(8))
    assert p.choose(bs(16)) is None
    p.finish(1, 3000)
    assert p.choose(bs(16)) == 1


# -- auto: fit -----------------------------------------------------------------------------------
def test_auto_packs_by_predicted_peak_and_margin() -> None:
    # bs 64 -> 14000 * 1.1 = 15400; bs 16 -> 4000 * 1.1 = 4400; capacity 24576, margin 1024.
    p = packer(trained({64: 14000, 16: 4000}), devices=[0], capacity_mb={0: 24576})
    p.start(0, 0, bs(64))
    assert p.choose(bs(64)) is None  # 15400 + 15400 + 1024 > 24576
    assert p.choose(bs(16)) == 0  # 15400 + 4400 + 1024 = 20824 <= 24576
    p.start(1, 0, bs(16))
    assert p.choose(bs(16)) is None  # 24200 + 1024 > 24576
    assert p.reserved_mb(0) == pytest.approx(19800)
    assert "4776 MB free" in p.explain(bs(16))


def test_auto_exact_fit_boundary() -> None:
    model = trained({8: 1000}, headroom=1.0)
    p = packer(model, devices=[0], capacity_mb={0: 3000}, margin_mb=1000)
    p.start(0, 0, bs(8))
    assert p.choose(bs(8)) == 0  # 1000 + 1000 + margin 1000 == 3000
    p.start(1, 0, bs(8))
    assert p.choose(bs(8)) is None


def test_auto_overhead_counts_per_trial() -> None:
    model = trained({8: 1000}, headroom=1.0)
    p = packer(model, devices=[0], capacity_mb={0: 4000}, margin_mb=0, overhead_mb=500)
    p.start(0, 0, bs(8))
    p.start(1, 0, bs(8))
    assert p.reserved_mb(0) == pytest.approx(3000)
    assert p.choose(bs(8)) is None  # a third needs 1500 more: 4500 > 4000


def test_auto_prefers_fewest_trials_then_tightest_fit() -> None:
    p = packer(
        trained({8: 2000, 32: 7000, 64: 14000}),
        devices=[0, 1, 2],
        capacity_mb={0: 24 * GB, 1: 24 * GB, 2: 12 * GB},
    )
    p.start(0, 0, bs(32))
    p.start(1, 1, bs(64))
    # GPU 2 is empty: fewest running wins even though GPU 0/1 also fit.
    assert p.choose(bs(8)) == 2
    p.start(2, 2, bs(8))
    # All run one trial: the tightest fit wins (GPU 1: 24576 - 15400 - 2200 = 6976 left).
    assert p.choose(bs(8)) == 1


def test_auto_too_big_to_share_runs_alone() -> None:
    # A trial predicted bigger than a GPU must still start somewhere (alone) and not wait forever.
    p = packer(trained({128: 30000, 8: 1000}))
    assert p.choose(bs(128)) == 0
    p.start(0, 0, bs(128))
    assert p.choose(bs(8)) == 1  # nothing joins the oversized trial
    p.start(1, 1, bs(8))
    assert p.choose(bs(128)) is None


def test_auto_oom_key_runs_alone() -> None:
    p = packer(trained({8: 3000, 64: 14000}), devices=[0], capacity_mb={0: 24 * GB})
    p.start(0, 0, bs(8))
    p.start(1, 0, bs(64))
    p.finish(1, 9000, oom=True)  # the peak of an OOM'd trial is not a measurement
    assert p.model.predict(bs(64)) == math.inf
    assert p.choose(bs(64)) is None
    p.finish(0, 3000)
    assert p.choose(bs(64)) == 0
    p.start(2, 0, bs(64))
    assert p.choose(bs(8)) is None
    p.finish(2, 14200)
    assert p.model.predict(bs(64)) == pytest.approx(15620)


def test_auto_learns_from_finish() -> None:
    p = packer()
    p.start(0, 0, bs(8))
    assert p.finish(0, 3000.0) is True
    assert p.finish(0, 3000.0) is False  # idempotent
    assert p.model.predict(bs(8)) == pytest.approx(3300)
    p.start(1, 0, bs(16))
    p.finish(1, None)  # not measured: nothing learned
    assert p.model.predict(bs(16)) is None


def test_measured_free_memory_limits_placement() -> None:
    free = {0: 24 * GB, 1: 24 * GB}
    clock = Clock()
    p = packer(trained({8: 3000}), free_mb=lambda d: free[d], clock=clock, settle_s=30.0)
    free[0] = 4000  # another process holds GPU 0
    assert p.choose(bs(8)) == 1  # 3300 + 1024 > 4000 on GPU 0
    p.start(0, 1, bs(8))
    free[0] = 24 * GB
    assert p.choose(bs(8)) == 0
    # A just-started trial has not reached its peak: its prediction is reserved against the
    # measured free memory until it settles.
    free[1] = 5000
    assert p._room(1, bs(8)) is None  # 5000 - 3300 (settling) - 3300 < 1024
    clock.now = 31.0
    assert p._room(1, bs(8)) == pytest.approx(5000 - 3300)


def test_measured_free_memory_does_not_block_unknown_alone() -> None:
    p = packer(free_mb=lambda d: 100)
    assert p.choose(bs(8)) == 0  # conservative start: unknown sizes are not checked


def test_packing_is_deterministic() -> None:
    def run() -> list[int | None]:
        p = packer(trained({8: 3000, 16: 4500, 32: 7500, 64: 14000}))
        out = []
        for n, b in enumerate([64, 8, 32, 16, 8, 64, 32, 8]):
            d = p.choose(bs(b))
            out.append(d)
            if d is not None:
                p.start(n, d, bs(b))
        return out

    assert run() == run()


# -- quarantine ----------------------------------------------------------------------------------
def test_quarantine_stops_placement_but_keeps_running_trials() -> None:
    p = packer(trained({8: 3000}))
    p.start(0, 0, bs(8))
    assert p.quarantine(0, "3 sticky CUDA errors in 600 s") is True
    assert p.quarantine(0, "again") is False
    assert p.quarantine(7, "unknown device") is False
    assert p.active_devices() == [1]
    assert p.quarantined() == {0: "3 sticky CUDA errors in 600 s"}
    assert p.running_on(0) == [0]
    assert p.choose(bs(8)) == 1
    with pytest.raises(ValueError, match="quarantined"):
        p.start(1, 0, bs(8))
    p.finish(0, 3100)  # its measurement still counts
    assert p.running_on(0) == []
    assert p.model.predict(bs(8)) == pytest.approx(3410)


def test_no_device_left() -> None:
    p = packer(trials_per_gpu=3)
    p.quarantine(0, "ECC")
    p.quarantine(1, "lost")
    assert p.active_devices() == []
    assert p.choose(bs(8)) is None
    assert p.plan([(0, bs(8))]) == []
    assert p.explain(bs(8)).startswith("no GPU left")


# -- bookkeeping and validation ------------------------------------------------------------------
def test_start_validation_and_queries() -> None:
    p = packer()
    p.start(5, 1, bs(8))
    assert p.device_of(5) == 1
    assert p.device_of(6) is None
    assert p.predicted_mb(6) is None
    assert p.reserved_mb(1) is None
    assert p.reserved_mb(0) == 0
    with pytest.raises(ValueError, match="already running"):
        p.start(5, 0, bs(8))
    with pytest.raises(ValueError, match="unknown device"):
        p.start(6, 9, bs(8))


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"trials_per_gpu": 0}, "trials_per_gpu"),
        ({"trials_per_gpu": "many"}, "trials_per_gpu"),
        ({"capacity_mb": {0: 1000}}, "no capacity"),
        ({"margin_mb": -1}, "margin_mb"),
    ],
)
def test_constructor_validation(kw: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        packer(**kw)


# -- plan (backfill) -----------------------------------------------------------------------------
def test_plan_backfills_behind_a_blocked_trial_and_reserves_a_device() -> None:
    p = packer(trained({8: 3000, 64: 14000}))
    p.start(0, 0, bs(64))
    p.start(1, 1, bs(64))
    # The bs-64 head cannot start anywhere; it reserves GPU 0 (most headroom, lowest index),
    # and the small ones backfill GPU 1 only: 15400 + 2 x 3300 + 1024 fits, a third does not,
    # and trial 5 is not put on GPU 0 although it would fit there.
    plan = p.plan([(2, bs(64)), (3, bs(8)), (4, bs(8)), (5, bs(8))])
    assert plan == [(3, 1), (4, 1)]
    assert p.choose(bs(8)) == 0  # without the plan, GPU 0 would take it
    assert p.running_on(1) == [1]  # plan records nothing


def test_plan_places_in_age_order_and_counts_each_placement() -> None:
    p = packer(trained({8: 3000}))
    plan = p.plan([(n, bs(8)) for n in range(14)])
    per_gpu = {d: sum(1 for _, dev in plan if dev == d) for d in (0, 1)}
    assert per_gpu == {0: 7, 1: 7}  # 7 x 3300 + 1024 <= 24576 < 8 x 3300 + 1024
    assert [n for n, _ in plan] == list(range(14))
    assert p.plan([(n, bs(8)) for n in range(16)])[-1][0] == 13


def test_plan_equals_choose_for_one_trial() -> None:
    p = packer(trained({8: 3000}))
    p.start(0, 0, bs(8))
    assert p.plan([(1, bs(8))]) == [(1, p.choose(bs(8)))]
