"""GPUs as real machines show them (issue 14): NVML errors inside placement, GPUs the process may
not open, the scheduler's ``CUDA_VISIBLE_DEVICES`` (indices, ``GPU-``/``MIG-`` UUIDs), MIG
instances, native bf16, honest memory learning and the measured per-process overhead.

NVML is :mod:`hpo.testing.fake_nvml`: the real ``pynvml`` error classes and messages, raised by
the calls that raise them on real machines.
"""

from __future__ import annotations

import logging
import math
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pynvml
import pytest

from hpo.config import StudyConfig
from hpo.devices import CPUBackend, DevicePlanner, measure, open_backend, open_planner
from hpo.devices.nvml import NVMLBackend
from hpo.devices.packing import MemoryModel, Packer
from hpo.errors import ConfigError
from hpo.failures import FailureClass
from hpo.failures.classify import diagnosis_for
from hpo.failures.result import Source, TrialResult
from hpo.outcome import Status
from hpo.testing.fake_nvml import MB, fake_device, fake_mig, make_pynvml

UUID = [f"GPU-0000000{i}-aaaa-bbbb-cccc-dddddddddddd" for i in range(4)]


@pytest.fixture
def nvml(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Install a fake pynvml over the given devices, with the given CUDA_VISIBLE_DEVICES."""

    def install(devices: list[dict[str, Any]] | None = None, cvd: str | None = None) -> ModuleType:
        mod = make_pynvml(devices if devices is not None else [fake_device(0), fake_device(1)])
        monkeypatch.setitem(sys.modules, "pynvml", mod)
        if cvd is None:
            monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        else:
            monkeypatch.setenv("CUDA_VISIBLE_DEVICES", cvd)
        return mod

    return install


def config(tmp_path: Path, **kw: Any) -> StudyConfig:
    base = {
        "study": "s",
        "objective": "m:f",
        "device_backend": "nvml",
        "trials_per_gpu": "auto",
        "workers": 4,
        "run_dir": str(tmp_path),
    }
    return StudyConfig.model_validate({**base, **kw})


def result(number: int, status: Status, peak: float | None, **kw: Any) -> TrialResult:
    diag = None
    if status is Status.FAILED:
        diag = diagnosis_for(kw.pop("cls", FailureClass.USER_ERROR), summary="x")
    return TrialResult(number, status, Source.REPORTED, diagnosis=diag, peak_gpu_mem_mb=peak, **kw)


# =================================================================================================
# 1. An NVML error inside placement quarantines that GPU; the run goes on
# =================================================================================================
@pytest.mark.parametrize(
    ("code", "text"),
    [
        (pynvml.NVML_ERROR_GPU_IS_LOST, "GPU is lost"),
        (pynvml.NVML_ERROR_UNKNOWN, "Unknown Error"),
        (pynvml.NVML_ERROR_NO_PERMISSION, "Insufficient Permissions"),
    ],
)
def test_nvml_error_while_placing_quarantines_that_gpu(
    nvml: Any, tmp_path: Path, code: int, text: str
) -> None:
    mod = nvml()
    planner = open_planner(config(tmp_path), tmp_path)
    assert isinstance(planner, DevicePlanner)
    planner.packer.model.observe({"batch_size": 8}, 1000)
    mod.devices[0]["errors"]["nvmlDeviceGetMemoryInfo"] = code  # the free-memory query fails
    idle = [0, 0, 1, 1]
    at = planner.place({"batch_size": 8}, idle)
    assert at is not None and idle[at] == 1  # placed on the healthy GPU, no exception
    events = planner.check_health()
    assert [(e.device, e.uuid, e.none_left) for e in events] == [(0, UUID[0], False)]
    assert text in events[0].reason
    assert not planner.usable(0) and planner.usable(1)
    assert planner.check_health() == []  # reported once


def test_every_gpu_lost_while_placing_leaves_none(nvml: Any, tmp_path: Path) -> None:
    mod = nvml()
    planner = open_planner(config(tmp_path), tmp_path)
    planner.packer.model.observe({"batch_size": 8}, 1000)  # type: ignore[attr-defined]
    for dev in mod.devices:
        dev["lost"] = True
    assert planner.place({"batch_size": 8}, [0, 1]) is None
    events = planner.check_health()
    assert [e.device for e in events] == [0, 1]
    assert events[-1].none_left  # the supervisor stops the run (exit 5) with this event


# =================================================================================================
# 2. GPUs NVML counts but the process may not open
# =================================================================================================
def test_no_permission_gpu_is_left_out_of_slot_planning(nvml: Any, tmp_path: Path) -> None:
    nvml([fake_device(0), fake_device(1, no_permission=True), fake_device(2)])
    backend = NVMLBackend()
    assert (backend.nvml_count, backend.count) == (3, 2)
    assert backend.unavailable == {1: "Insufficient Permissions"}
    assert [g.uuid for g in backend.list()] == [UUID[0], UUID[2]]
    planner = open_planner(config(tmp_path, trials_per_gpu=2), tmp_path)
    assert planner.slot_devices() == [0, 0, 1, 1]
    assert planner.env(1)["CUDA_VISIBLE_DEVICES"] == UUID[2]


def test_only_inaccessible_gpus_means_cpu(nvml: Any) -> None:
    nvml([fake_device(0, no_permission=True)])
    backend = open_backend("auto")
    assert isinstance(backend, CPUBackend)
    assert "NVML GPU 0 (Insufficient Permissions)" in backend.reason


# =================================================================================================
# 5. Pinning by UUID, within the set the parent was given
# =================================================================================================
FOUR = [fake_device(i) for i in range(4)]


@pytest.mark.parametrize(
    ("cvd", "uuids"),
    [
        (None, UUID),
        ("2", [UUID[2]]),
        ("3,1", [UUID[3], UUID[1]]),  # CUDA's order is the list's order
        (UUID[2], [UUID[2]]),
        ("GPU-00000003", [UUID[3]]),  # a unique prefix, as CUDA accepts it
        (f"{UUID[1]},0", [UUID[1], UUID[0]]),
        ("1,9,2", [UUID[1]]),  # CUDA stops at the first invalid entry
        ("GPU-0000000", []),  # an ambiguous prefix names no device
        ("", []),
    ],
)
def test_cuda_visible_devices_narrows_and_orders(
    nvml: Any, cvd: str | None, uuids: list[str]
) -> None:
    nvml([dict(d) for d in FOUR], cvd)
    backend = NVMLBackend()
    assert [g.uuid for g in backend.list()] == uuids
    for i, uuid in enumerate(uuids):
        env = backend.env(i)
        assert env["CUDA_VISIBLE_DEVICES"] == uuid  # never an index that CUDA might renumber
        assert env["HPO_DEVICE_INDEX"] == str(i)


def test_indices_count_the_gpus_the_process_may_open(nvml: Any) -> None:
    # Slurm with ConstrainDevices: CUDA sees only the job's GPUs and numbers them from 0.
    nvml([fake_device(0, no_permission=True), fake_device(1), fake_device(2)], "0")
    assert NVMLBackend().env(0)["CUDA_VISIBLE_DEVICES"] == UUID[1]


def test_empty_cuda_visible_devices_runs_on_cpu(nvml: Any) -> None:
    nvml(cvd="")
    backend = open_backend("auto")
    assert isinstance(backend, CPUBackend)
    assert "CUDA_VISIBLE_DEVICES=" in backend.reason


# =================================================================================================
# 6. MIG instances are devices with their own memory
# =================================================================================================
def mig_machine() -> list[dict[str, Any]]:
    a100 = fake_device(
        0,
        name="NVIDIA A100-SXM4-40GB",
        total=40960 * MB,
        mig=[fake_mig(0, 0), fake_mig(0, 2, 9984)],
    )
    return [a100, fake_device(1)]


def test_mig_instances_are_targets_with_their_own_memory(nvml: Any, tmp_path: Path) -> None:
    mod = nvml(mig_machine())
    backend = NVMLBackend()
    gpus = backend.list()
    assert [(g.uuid, g.total_mb, g.nvml_index, g.mig_slot) for g in gpus] == [
        (mod.devices[0]["mig"][0]["uuid"], 4864, 0, 0),
        (mod.devices[0]["mig"][1]["uuid"], 9984, 0, 2),
        (UUID[1], 24564, 1, None),
    ]
    assert "MIG 1g.5gb" in gpus[0].name
    assert gpus[0].ecc_uncorrected == 0  # read from the parent GPU (not supported on MIG)
    assert backend.env(1)["CUDA_VISIBLE_DEVICES"] == mod.devices[0]["mig"][1]["uuid"]
    assert backend.health(0).ok
    planner = open_planner(config(tmp_path), tmp_path)
    assert planner.packer.capacity_mb == {0: 4864, 1: 9984, 2: 24564}  # type: ignore[attr-defined]
    with pytest.raises(Exception, match="MIG instance"):
        backend.reset(0)


def test_mig_uuid_in_cuda_visible_devices(nvml: Any) -> None:
    devices = mig_machine()
    mig = devices[0]["mig"][1]["uuid"]
    nvml(devices, f"{mig},1")
    assert [g.uuid for g in NVMLBackend().list()] == [mig, UUID[1]]
    nvml(mig_machine(), "0")  # an index of a GPU in MIG mode: its instances
    assert [g.mig_slot for g in NVMLBackend().list()] == [0, 2]


def test_parent_ecc_error_fails_its_mig_instances(nvml: Any) -> None:
    mod = nvml(mig_machine())
    backend = NVMLBackend()
    mod.devices[0]["ecc"] = 1
    assert not backend.health(0).ok and not backend.health(1).ok
    assert backend.health(2).ok


# =================================================================================================
# Bad input: GPUs that are not there, or not this process's
# =================================================================================================
def test_gpu_not_on_the_machine_is_a_config_error(nvml: Any, tmp_path: Path) -> None:
    nvml()
    with pytest.raises(ConfigError) as err:
        open_planner(config(tmp_path, gpus=[7]), tmp_path)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith("gpus: [7]: GPU 7 is not visible to this process")
    assert f"0: NVML GPU 0 ({UUID[0]}), 1: NVML GPU 1 ({UUID[1]})" in msg


def test_gpu_the_process_may_not_open_is_a_config_error(nvml: Any, tmp_path: Path) -> None:
    nvml([fake_device(0), fake_device(1, no_permission=True)])
    with pytest.raises(ConfigError) as err:
        open_planner(config(tmp_path, gpus=[0, 1]), tmp_path)
    msg = str(err.value)
    assert "GPU 1 is not visible" in msg
    assert "not usable: NVML GPU 1 (Insufficient Permissions)" in msg


def test_gpu_hidden_by_the_scheduler_is_a_config_error(nvml: Any, tmp_path: Path) -> None:
    nvml(cvd="1")
    with pytest.raises(ConfigError, match=r"GPU 1 is not visible.*CUDA_VISIBLE_DEVICES=1"):
        open_planner(config(tmp_path, gpus=[1]), tmp_path)


@pytest.mark.parametrize(
    ("gpus", "text"), [([-1], "GPU indices are >= 0"), ([0, 0], "listed twice"), ([], "empty")]
)
def test_gpus_list_is_validated(tmp_path: Path, gpus: list[int], text: str) -> None:
    from hpo.config import load_config

    with pytest.raises(ConfigError, match=text):
        load_config(overrides={"study": "s", "objective": "m:f", "gpus": gpus})


def test_memory_that_depends_on_a_float_says_how_to_set_keys(
    caplog: pytest.LogCaptureFixture,
) -> None:
    p = Packer([0], {0: 24576}, "auto", 0, MemoryModel())
    planner = DevicePlanner(
        CPUBackend(), [0], p, per_gpu=2, mem_keys=None, packing_auto=True,
        window_s=60, allow_reset=False,
    )  # fmt: skip
    params = [{"batch_size": 8, "hidden_ratio": 0.5}, {"batch_size": 8, "hidden_ratio": 4.0}]
    with caplog.at_level(logging.WARNING):
        for n, (prm, peak) in enumerate(zip(params, [2000, 9000], strict=True)):
            planner.started(n, 0, prm)
            planner.finished(n, result(n, Status.COMPLETE, peak))
    assert p.model.predict({"batch_size": 8, "hidden_ratio": 1.0}) == math.inf  # runs alone
    (line,) = [r.getMessage() for r in caplog.records if "gpu_mem_keys" in r.getMessage()]
    assert "between 2000 and 9000 MB" in line and "hidden_ratio" in line
    assert "gpu_mem_keys: [batch_size, hidden_ratio]" in line


# =================================================================================================
# 9. The memory model learns only from completed trials, and keeps what OOMs taught
# =================================================================================================
def planner_on_one_gpu() -> DevicePlanner:
    p = Packer([0], {0: 24576}, "auto", 0, MemoryModel(headroom=1.0))
    return DevicePlanner(
        CPUBackend(), [0], p, per_gpu=4, mem_keys=None, packing_auto=True,
        window_s=60, allow_reset=False,
    )  # fmt: skip


BS8 = {"batch_size": 8, "lr": 1e-3}


@pytest.mark.parametrize(
    "ended",
    [
        result(0, Status.PRUNED, 900.0),
        result(0, Status.FAILED, 900.0),
        result(0, Status.FAILED, 900.0, cls=FailureClass.NUMERICAL),
    ],
)
def test_pruned_and_failed_peaks_teach_nothing(ended: TrialResult) -> None:
    planner = planner_on_one_gpu()
    planner.started(0, 0, BS8)
    planner.finished(0, ended)
    assert planner.packer.model.predict(BS8) is None  # still unknown: the next one runs alone
    planner.started(1, 0, BS8)
    planner.finished(1, result(1, Status.COMPLETE, 3000.0))
    planner.started(2, 0, BS8)
    planner.finished(2, result(2, Status.PRUNED, 500.0))
    assert planner.packer.model.predict(BS8) == 3000.0  # a short pruned peak lowers nothing


def test_partial_peak_above_the_prediction_raises_it() -> None:
    model = MemoryModel(headroom=1.0)
    model.observe(BS8, 3000)
    model.observe_partial(BS8, 3600)  # pruned after it had already held more
    assert model.predict(BS8) == 3600


def test_oom_mark_is_not_cleared_into_an_underprediction() -> None:
    planner = planner_on_one_gpu()
    planner.started(0, 0, BS8)
    planner.finished(0, result(0, Status.COMPLETE, 3000.0))
    planner.started(1, 0, BS8)
    planner.finished(1, result(1, Status.FAILED, 7000.0, cls=FailureClass.OOM))
    assert planner.packer.model.predict(BS8) == math.inf
    planner.started(2, 0, BS8)
    planner.finished(2, result(2, Status.PRUNED, 1000.0))  # a pruned trial does not clear it
    assert planner.packer.model.predict(BS8) == math.inf
    planner.started(3, 0, BS8)
    planner.finished(3, result(3, Status.COMPLETE, 3100.0))  # completed alone: cleared, but
    assert planner.packer.model.predict(BS8) == 7000.0  # never below what the OOM'd trial held


# =================================================================================================
# 10. The per-process overhead is measured, and idle workers' contexts count
# =================================================================================================
def test_measured_overhead_replaces_the_guess_and_idle_contexts_count() -> None:
    p = Packer([0], {0: 6000}, "auto", 0, MemoryModel(headroom=1.0), overhead_mb=512,
               slots={0: 3})  # fmt: skip
    planner = DevicePlanner(
        CPUBackend(), [0], p, per_gpu=3, mem_keys=None, packing_auto=True,
        window_s=60, allow_reset=False,
    )  # fmt: skip
    p.model.observe(BS8, 2000)
    assert p.need_mb(BS8, 0) == 2512  # the guess
    for n, pid in enumerate([101, 102]):
        planner.started(n, 0, BS8)
        planner.finished(
            n, result(n, Status.COMPLETE, 2000.0, gpu_overhead_mb=700.0, worker_pid=pid)
        )
    assert p.overhead(0) == 700.0  # measured
    assert p.need_mb(BS8, 0) == 2700
    # Two idle workers hold contexts: 2 x 700 MB counted although no trial runs.
    assert p.reserved_mb(0) == pytest.approx(1400)
    planner.started(2, 0, BS8)  # one of them runs a trial: 2700 + 1 idle context
    assert p.reserved_mb(0) == pytest.approx(2700 + 700)
    # 6000 - 3400 = 2600 left: a second trial (2700) does not fit. Counting only running
    # trials (2700) it would, and the idle worker's context would make it run out of memory.
    assert p.choose(BS8) is None


def test_worker_measures_its_overhead_from_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    dev = fake_device(0, procs=[(os.getpid(), 1800 * MB), (1, 5000 * MB)])
    monkeypatch.setitem(sys.modules, "pynvml", make_pynvml([dev]))
    monkeypatch.setattr(measure, "_nvml_handle", [])
    monkeypatch.setenv("HPO_DEVICE_UUID", dev["uuid"])
    cuda = SimpleNamespace(
        is_initialized=lambda: True,
        device_count=lambda: 1,
        memory_reserved=lambda d: 1300 * MB,
    )
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=cuda))
    assert measure.process_overhead_mb() == pytest.approx(500.0)
    assert measure.process_overhead_mb(pid=99999) is None  # another pid namespace: not found
    monkeypatch.setattr(cuda, "is_initialized", lambda: False)
    assert measure.process_overhead_mb() is None  # never initialises CUDA to measure


# =================================================================================================
# 8. bf16 only where it is native
# =================================================================================================
@pytest.mark.parametrize(("major", "want_bf16"), [(7, False), (8, True)])
def test_bf16_only_where_native(
    monkeypatch: pytest.MonkeyPatch, major: int, want_bf16: bool
) -> None:
    import torch

    from hpo.tasks import criteria

    def is_bf16_supported(including_emulation: bool = True) -> bool:
        # torch/cuda/__init__.py: major >= 8 is native; below, emulation answers True.
        return major >= 8 or including_emulation

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", is_bf16_supported)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Tesla T4")
    dtype = criteria._amp_dtype("bf16", torch.device("cuda"))
    assert dtype == (torch.bfloat16 if want_bf16 else None)
