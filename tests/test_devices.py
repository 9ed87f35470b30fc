"""Device layer: NVML through a fake ``pynvml``, the simulated ledger across real processes,
in-worker measurement, and the simulated packing objective."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pynvml
import pytest

from hpo.config import SimulatedGPUConfig
from hpo.devices import (
    CPUBackend,
    DeviceBackend,
    DeviceError,
    GPUInfo,
    Health,
    measure,
    open_backend,
)
from hpo.devices import simulated as sim
from hpo.devices.nvml import NVMLBackend, NVMLUnavailable
from hpo.testing.fake_nvml import fake_device, make_pynvml

ROOT = Path(__file__).resolve().parents[1]
MB = 1024 * 1024


# =================================================================================================
# A fake pynvml module
# =================================================================================================
NotSupported = pynvml.NVMLError_NotSupported
NoPermission = pynvml.NVMLError_NoPermission
GpuIsLost = pynvml.NVMLError_GpuIsLost


@pytest.fixture
def fake_nvml(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Install a fake pynvml with 2 GPUs; yields a function to install another one."""

    def install(devices: list[dict[str, Any]] | None = None, **kw: Any) -> ModuleType:
        mod = make_pynvml([fake_device(0), fake_device(1)] if devices is None else devices, **kw)
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        monkeypatch.setitem(sys.modules, "pynvml", mod)
        return mod

    install()
    yield install


# =================================================================================================
# NVML backend
# =================================================================================================
def test_auto_opens_nvml_and_reads_every_field(fake_nvml: Any) -> None:
    backend = open_backend("auto")
    assert isinstance(backend, NVMLBackend)
    assert isinstance(backend, DeviceBackend)
    gpus = backend.list()
    assert [g.index for g in gpus] == [0, 1]
    g = gpus[1]
    assert g == GPUInfo(
        index=1,
        name="NVIDIA GeForce RTX 4090",
        uuid="GPU-00000001-aaaa-bbbb-cccc-dddddddddddd",
        total_mb=24564,
        free_mb=20000,
        used_mb=4564,
        util_pct=37,
        ecc_uncorrected=0,
        retired_pages=3,
        pci_bus_id="00000000:02:00.0",
        nvml_index=1,
    )
    assert backend.driver_version() == "550.54.14"
    assert backend.health(0) == Health(True, "ok")
    backend.close()


def test_not_supported_queries_read_as_none(fake_nvml: Any) -> None:
    fake_nvml(
        unsupported={
            "nvmlDeviceGetUtilizationRates",
            "nvmlDeviceGetTotalEccErrors",
            "nvmlDeviceGetRetiredPages",
            "nvmlDeviceGetPciInfo",
            "nvmlDeviceGetUUID",
            "nvmlDeviceGetRetiredPagesPendingStatus",
            "nvmlDeviceGetRemappedRows",
            "nvmlSystemGetDriverVersion",
        }
    )
    backend = NVMLBackend()
    g = backend.info(0)
    assert (g.util_pct, g.ecc_uncorrected, g.retired_pages, g.pci_bus_id, g.uuid) == (None,) * 5
    assert g.total_mb == 24564
    assert backend.health(0).ok
    assert backend.driver_version() is None


def test_no_permission_and_missing_functions_read_as_none(fake_nvml: Any) -> None:
    mod = fake_nvml(missing={"nvmlDeviceGetRemappedRows", "nvmlDeviceGetRetiredPages"})
    mod.nvmlDeviceGetUtilizationRates = lambda h: (_ for _ in ()).throw(NoPermission())
    g = NVMLBackend().info(0)
    assert g.util_pct is None
    assert g.retired_pages is None


def test_zero_devices(fake_nvml: Any) -> None:
    mod = fake_nvml([])
    backend = open_backend("auto")
    assert isinstance(backend, CPUBackend)
    assert backend.list() == []
    assert mod.calls.count("nvmlShutdown") == 1  # auto closed the NVML it opened
    explicit = open_backend("nvml")
    assert isinstance(explicit, NVMLBackend)
    assert explicit.list() == []
    with pytest.raises(DeviceError, match="does not exist"):
        explicit.info(0)


def test_nvml_init_failure(fake_nvml: Any) -> None:
    fake_nvml(init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)
    backend = open_backend("auto")
    assert isinstance(backend, CPUBackend)
    assert "nvmlInit failed" in backend.reason
    with pytest.raises(
        DeviceError, match="device_backend: nvml but nvmlInit failed: NVML Shared Library Not Found"
    ):
        open_backend("nvml")
    with pytest.raises(NVMLUnavailable):
        NVMLBackend()


def test_count_failure_is_unavailable(fake_nvml: Any) -> None:
    mod = fake_nvml(not_found={"nvmlDeviceGetCount"})
    with pytest.raises(NVMLUnavailable, match="nvmlDeviceGetCount"):
        NVMLBackend()
    assert "nvmlShutdown" in mod.calls


def test_pynvml_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import raises ImportError
    assert isinstance(open_backend("auto"), CPUBackend)
    with pytest.raises(DeviceError, match="nvidia-ml-py"):
        open_backend("nvml")


def test_process_memory_v3(fake_nvml: Any) -> None:
    mod = fake_nvml()
    assert NVMLBackend().process_memory(0) == {4242: 3000, 4343: 0}  # None (WDDM) -> 0
    assert "nvmlDeviceGetComputeRunningProcesses_v3" in mod.calls
    assert "nvmlDeviceGetComputeRunningProcesses_v2" not in mod.calls


@pytest.mark.parametrize(
    ("kw", "used"),
    [
        ({"missing": {"nvmlDeviceGetComputeRunningProcesses_v3"}}, "_v2"),
        ({"not_found": {"nvmlDeviceGetComputeRunningProcesses_v3"}}, "_v2"),
        (
            {
                "missing": {"nvmlDeviceGetComputeRunningProcesses_v3"},
                "not_found": {"nvmlDeviceGetComputeRunningProcesses_v2"},
            },
            "",
        ),
    ],
)
def test_process_memory_falls_back(fake_nvml: Any, kw: dict[str, Any], used: str) -> None:
    mod = fake_nvml(**kw)
    assert NVMLBackend().process_memory(1) == {4242: 3000, 4343: 0}
    assert mod.calls[-1] == "nvmlDeviceGetComputeRunningProcesses" + used


def test_process_memory_version_mismatch_and_not_supported(fake_nvml: Any) -> None:
    mod = fake_nvml(
        not_found={
            "nvmlDeviceGetComputeRunningProcesses_v3",
            "nvmlDeviceGetComputeRunningProcesses_v2",
        }
    )
    mod.nvmlDeviceGetComputeRunningProcesses = lambda h: (_ for _ in ()).throw(
        pynvml.NVMLLibraryMismatchError()
    )
    assert NVMLBackend().process_memory(0) == {}
    fake_nvml(unsupported={"nvmlDeviceGetComputeRunningProcesses_v3"})
    assert NVMLBackend().process_memory(0) == {}


def test_process_memory_sums_duplicate_pids(fake_nvml: Any) -> None:
    fake_nvml([fake_device(0, procs=[(7, 100 * MB), (7, 50 * MB)])])
    assert NVMLBackend().process_memory(0) == {7: 150}


def test_health_flags_new_ecc_errors_only(fake_nvml: Any) -> None:
    mod = fake_nvml([fake_device(0, ecc=2), fake_device(1)])
    backend = NVMLBackend()
    assert backend.health(0).ok  # errors from before the run are the baseline
    mod.devices[0]["ecc"] = 3
    health = backend.health(0)
    assert not health.ok
    assert "1 new uncorrectable ECC error(s) on GPU 0" in health.reason
    assert backend.health(1).ok


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"pending": 1}, "retired pages pending"),
        ({"remapped": (1, 1, 1, 0)}, "row remapping pending"),
        ({"remapped": (0, 3, 0, 1)}, "failed a row remapping"),
        ({"lost": True}, "GPU is lost"),
    ],
)
def test_health_failures(fake_nvml: Any, change: dict[str, Any], reason: str) -> None:
    mod = fake_nvml()
    backend = NVMLBackend()
    mod.devices[0].update(change)
    health = backend.health(0)
    assert not health.ok
    assert reason in health.reason
    assert backend.health(1).ok


def test_lost_gpu_at_start_is_left_out_and_said_why(fake_nvml: Any) -> None:
    fake_nvml([fake_device(0, lost=True), fake_device(1)])
    backend = NVMLBackend()
    assert (backend.nvml_count, backend.count) == (2, 1)
    assert backend.unavailable == {0: "GPU is lost"}
    assert backend.info(0).uuid == "GPU-00000001-aaaa-bbbb-cccc-dddddddddddd"
    assert "not usable: NVML GPU 0 (GPU is lost)" in backend.describe()


def test_bad_index(fake_nvml: Any) -> None:
    backend = NVMLBackend()
    with pytest.raises(DeviceError, match="GPU 5 does not exist"):
        backend.info(5)
    assert not backend.health(5).ok
    with pytest.raises(DeviceError):
        backend.env(-1)


def test_nvml_env_pins_one_gpu_by_uuid(fake_nvml: Any) -> None:
    backend = NVMLBackend()
    assert backend.env(1) == {
        "CUDA_VISIBLE_DEVICES": "GPU-00000001-aaaa-bbbb-cccc-dddddddddddd",
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
        "HPO_DEVICE_INDEX": "1",
        "HPO_DEVICE_UUID": "GPU-00000001-aaaa-bbbb-cccc-dddddddddddd",
    }
    assert backend.env(None)["CUDA_VISIBLE_DEVICES"] == ""


def test_close_is_idempotent(fake_nvml: Any) -> None:
    mod = fake_nvml()
    backend = NVMLBackend()
    backend.close()
    backend.close()
    assert mod.calls.count("nvmlShutdown") == 1


def test_shutdown_error_is_swallowed(fake_nvml: Any) -> None:
    mod = fake_nvml()
    backend = NVMLBackend()
    tries: list[int] = []

    def failing_shutdown() -> None:
        tries.append(1)
        raise pynvml.NVMLError(pynvml.NVML_ERROR_UNKNOWN)

    mod.nvmlShutdown = failing_shutdown
    backend.close()  # must not raise
    backend.close()  # and the failed shutdown is not tried again
    assert tries == [1]


def test_real_pynvml_without_gpu_falls_back_to_cpu() -> None:
    """On this machine: the real pynvml, no driver. ``auto`` must not raise."""
    pytest.importorskip("pynvml")
    backend = open_backend("auto")
    if backend.name == "nvml":
        pytest.skip("this machine has an NVIDIA GPU")
    assert isinstance(backend, CPUBackend)
    assert backend.list() == []
    assert backend.process_memory(0) == {}
    assert not backend.health(0).ok
    assert backend.env(None)["CUDA_VISIBLE_DEVICES"] == ""
    with pytest.raises(DeviceError, match="running on CPU"):
        backend.info(0)
    backend.close()


def _real_gpu_count() -> int:
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            return int(pynvml.nvmlDeviceGetCount())
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        return 0


@pytest.mark.gpu
@pytest.mark.skipif(
    _real_gpu_count() == 0, reason="no NVIDIA GPU: NVML is unavailable or sees 0 GPUs"
)
def test_real_nvml_backend() -> None:
    backend = open_backend("nvml")
    try:
        gpus = backend.list()
        assert gpus and all(g.total_mb > 0 and g.free_mb <= g.total_mb for g in gpus)
        assert backend.health(0).ok, backend.health(0).reason
        assert isinstance(backend.process_memory(0), dict)
    finally:
        backend.close()


def test_cpu_and_unknown_backends(tmp_path: Path) -> None:
    assert open_backend("cpu").name == "cpu"
    with pytest.raises(DeviceError, match="state folder"):
        open_backend("simulated", SimulatedGPUConfig.model_validate({}), None)


# =================================================================================================
# Simulated backend
# =================================================================================================
def sim_config(**kw: Any) -> SimulatedGPUConfig:
    return SimulatedGPUConfig.model_validate({"count": 2, "memory_mb": 24576, **kw})


@pytest.fixture
def sim_backend(tmp_path: Path) -> sim.SimulatedBackend:
    backend = open_backend("simulated", sim_config(), tmp_path)
    assert isinstance(backend, sim.SimulatedBackend)
    return backend


@pytest.fixture
def in_worker(monkeypatch: pytest.MonkeyPatch, sim_backend: sim.SimulatedBackend) -> Any:
    """Make this test process look like a simulated worker pinned to a device."""

    def pin(device: int) -> None:
        for key, value in sim_backend.env(device).items():
            monkeypatch.setenv(key, value)
        sim.reset_peak()

    pin(0)
    return pin


def test_simulated_list_and_env(sim_backend: sim.SimulatedBackend, tmp_path: Path) -> None:
    gpus = sim_backend.list()
    assert [(g.index, g.total_mb, g.free_mb, g.used_mb) for g in gpus] == [
        (0, 24576, 24576, 0),
        (1, 24576, 24576, 0),
    ]
    assert sim_backend.health(1) == Health(True, "ok")
    env = sim_backend.env(1)
    assert env["HPO_DEVICE_INDEX"] == "1"
    assert env["HPO_SIM_STATE"] == str((tmp_path / sim.LEDGER_NAME).resolve())
    assert env["CUDA_VISIBLE_DEVICES"] == ""  # a simulated worker never touches a real GPU
    assert "HPO_SIM_FOOTPRINTS" not in env
    with pytest.raises(DeviceError):
        sim_backend.info(2)
    assert not sim_backend.health(2).ok


def test_simulated_env_passes_footprints(tmp_path: Path) -> None:
    backend = open_backend(
        "simulated", sim_config(footprint_mb={"8": 3000}, footprint_param="model"), tmp_path
    )
    env = backend.env(0)
    assert json.loads(env["HPO_SIM_FOOTPRINTS"]) == {"8": 3000}
    assert env["HPO_SIM_FOOTPRINT_PARAM"] == "model"


def test_allocate_holds_and_releases(in_worker: Any, sim_backend: sim.SimulatedBackend) -> None:
    with sim.allocate(5000):
        assert sim_backend.process_memory(0) == {os.getpid(): 5000}
        assert sim_backend.info(0).used_mb == 5000
        with sim.allocate(1000):  # nested holds add up
            assert sim_backend.process_memory(0) == {os.getpid(): 6000}
        assert measure.peak_gpu_mem_mb() == 6000
    assert sim_backend.process_memory(0) == {}
    assert sim_backend.trials_on(0) == 2


def test_allocate_oom_has_pytorch_wording(in_worker: Any) -> None:
    import torch

    with sim.allocate(20000), pytest.raises(torch.OutOfMemoryError) as info, sim.allocate(5000):
        pass
    err = info.value
    assert isinstance(err, RuntimeError)
    assert str(err).startswith(
        "CUDA out of memory. Tried to allocate 5000.00 MiB (GPU 0; 24576.00 MiB total capacity; "
        "20000.00 MiB already allocated; 4576.00 MiB free; 20000.00 MiB reserved in total by PyTorch)"
    )


def test_allocate_outside_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HPO_SIM_STATE", raising=False)
    monkeypatch.delenv("HPO_DEVICE_INDEX", raising=False)
    with pytest.raises(RuntimeError, match="HPO_SIM_STATE"), sim.allocate(1):
        pass


def test_allocate_bad_device_and_missing_ledger(tmp_path: Path, sim_backend: Any) -> None:
    with (
        pytest.raises(RuntimeError, match="invalid device ordinal"),
        sim.allocate(1, device=5, state=sim_backend.path),
    ):
        pass
    with (
        pytest.raises(RuntimeError, match="does not exist"),
        sim.allocate(1, device=0, state=tmp_path / "other.json"),
    ):
        pass


def test_ledger_ignores_recycled_pid(in_worker: Any, sim_backend: sim.SimulatedBackend) -> None:
    # A hold whose pid is alive but started at another time belongs to a dead process.
    with sim._locked(sim_backend.path) as state:
        state["holds"].append(
            {"id": "x", "pid": os.getpid(), "ctime": 1.0, "device": 0, "mb": 24000}
        )
    assert sim_backend.process_memory(0) == {}
    with sim.allocate(20000):
        pass


def test_failing_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = open_backend("simulated", sim_config(failing={1: 2}), tmp_path)
    for key, value in backend.env(1).items():
        monkeypatch.setenv(key, value)
    for _ in range(2):
        with sim.allocate(1000):
            pass
    assert backend.health(1).ok
    with pytest.raises(RuntimeError) as info, sim.allocate(1000):
        pass
    assert str(info.value).startswith("CUDA error: uncorrectable ECC error encountered\n")
    assert "CUDA kernel errors might be asynchronously reported" in str(info.value)
    health = backend.health(1)
    assert not health.ok
    assert health.reason == "simulated uncorrectable ECC error on GPU 1 after 2 trial(s)"
    assert backend.info(1).ecc_uncorrected == 1
    assert backend.health(0).ok
    with pytest.raises(RuntimeError, match="ECC"), sim.allocate(1):  # sticky
        pass
    with sim.allocate(1000, device=0):  # the other device is fine
        pass
    # Re-opening the run (a resumed supervisor) keeps the failure: hardware stays broken.
    again = open_backend("simulated", sim_config(failing={1: 2}), tmp_path)
    assert not again.health(1).ok


def test_ledger_version_check(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(DeviceError, match="not a simulated-GPU ledger"):
        sim.SimulatedBackend(tmp_path / "bad.json")


# -- across real processes ------------------------------------------------------------------------
HOLDER = textwrap.dedent(
    """
    import sys, time
    from hpo.devices.simulated import allocate
    try:
        with allocate(int(sys.argv[1])):
            print("HELD", flush=True)
            time.sleep(float(sys.argv[2]))
        print("RELEASED", flush=True)
    except Exception as exc:
        print("ERR", type(exc).__name__, str(exc).splitlines()[0], flush=True)
    """
)


def spawn_holder(
    backend: sim.SimulatedBackend, device: int, mb: int, hold_s: float
) -> subprocess.Popen[str]:
    env = {**os.environ, **backend.env(device), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(mb), str(hold_s)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def first_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    return proc.stdout.readline().strip()


def wait_until(cond: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


@pytest.mark.timeout(60)
def test_processes_share_capacity(sim_backend: sim.SimulatedBackend) -> None:
    a = spawn_holder(sim_backend, 0, 14000, 30)
    b = spawn_holder(sim_backend, 0, 8000, 30)
    procs = [a, b]
    try:
        assert first_line(a) == "HELD"
        assert first_line(b) == "HELD"
        assert sim_backend.process_memory(0) == {a.pid: 14000, b.pid: 8000}
        assert sim_backend.info(0).free_mb == 24576 - 22000
        c = spawn_holder(sim_backend, 0, 4000, 0)
        procs.append(c)
        line = first_line(c)
        assert line.startswith(
            "ERR OutOfMemoryError CUDA out of memory. Tried to allocate 4000.00 MiB"
        )
        assert "22000.00 MiB already allocated" in line
        d = spawn_holder(sim_backend, 1, 20000, 0)  # the other GPU has room
        procs.append(d)
        assert first_line(d) == "HELD"
        assert first_line(d) == "RELEASED"
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)
            assert p.stdout is not None
            p.stdout.close()


@pytest.mark.timeout(60)
def test_sigkilled_holder_does_not_leak(sim_backend: sim.SimulatedBackend) -> None:
    a = spawn_holder(sim_backend, 0, 20000, 60)
    try:
        assert first_line(a) == "HELD"
        assert sim_backend.process_memory(0) == {a.pid: 20000}
        os.kill(a.pid, signal.SIGKILL)
        # Not reaped yet: a zombie must count as dead too.
        wait_until(lambda: sim_backend.process_memory(0) == {})
        assert a.poll() is not None or a.wait(timeout=5) == -signal.SIGKILL
    finally:
        if a.poll() is None:
            os.killpg(a.pid, signal.SIGKILL)
        a.wait(timeout=10)
        assert a.stdout is not None
        a.stdout.close()
    with pytest.raises(ProcessLookupError):
        os.kill(a.pid, 0)
    b = spawn_holder(sim_backend, 0, 20000, 0)
    try:
        assert first_line(b) == "HELD"
        assert first_line(b) == "RELEASED"
    finally:
        b.wait(timeout=10)
        assert b.stdout is not None
        b.stdout.close()
    with sim._locked(sim_backend.path) as state:
        assert state["holds"] == []


# =================================================================================================
# In-worker measurement
# =================================================================================================
def test_measure_without_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HPO_SIM_STATE", raising=False)
    sim.reset_peak()
    assert measure.cuda_initialised() is False
    measure.reset_peak()
    measure.clear_caches()
    assert measure.peak_gpu_mem_mb() is None


def test_measure_never_imports_torch() -> None:
    code = (
        "import sys, hpo.devices.measure as m\n"
        "m.reset_peak(); m.clear_caches(); assert m.peak_gpu_mem_mb() is None\n"
        "assert not m.cuda_initialised()\n"
        "assert 'torch' not in sys.modules, 'measure imported torch'\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "HPO_SIM_STATE"}
    env["PYTHONPATH"] = str(ROOT)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)


class FakeCuda:
    def __init__(self, initialised: bool) -> None:
        self.initialised = initialised
        self.calls: list[str] = []

    def is_initialized(self) -> bool:
        return self.initialised

    def device_count(self) -> int:
        return 1

    def reset_peak_memory_stats(self, dev: int) -> None:
        self.calls.append(f"reset{dev}")

    def max_memory_reserved(self, dev: int) -> int:
        return 2048 * MB

    def empty_cache(self) -> None:
        self.calls.append("empty")

    def synchronize(self) -> None:
        self.calls.append("sync")


def fake_torch(monkeypatch: pytest.MonkeyPatch, initialised: bool) -> FakeCuda:
    cuda = FakeCuda(initialised)
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=cuda))
    return cuda


def test_measure_with_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HPO_SIM_STATE", raising=False)
    sim.reset_peak()
    cuda = fake_torch(monkeypatch, initialised=True)
    assert measure.cuda_initialised()
    measure.reset_peak()
    assert cuda.calls == ["reset0"]
    assert measure.peak_gpu_mem_mb() == 2048
    measure.clear_caches()
    assert cuda.calls[1:] == ["sync", "empty", "empty", "sync"]


def test_measure_leaves_uninitialised_cuda_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HPO_SIM_STATE", raising=False)
    sim.reset_peak()
    cuda = fake_torch(monkeypatch, initialised=False)
    measure.reset_peak()
    measure.clear_caches()
    assert measure.peak_gpu_mem_mb() is None
    assert cuda.calls == []


def test_measure_takes_max_of_cuda_and_simulated(
    monkeypatch: pytest.MonkeyPatch, in_worker: Any
) -> None:
    fake_torch(monkeypatch, initialised=True)
    with sim.allocate(3000):
        pass
    assert measure.peak_gpu_mem_mb() == 3000
    measure.reset_peak()
    assert measure.peak_gpu_mem_mb() == 2048


def test_measure_sticky_error_propagates(monkeypatch: pytest.MonkeyPatch) -> None:
    cuda = fake_torch(monkeypatch, initialised=True)
    cuda.synchronize = lambda: (_ for _ in ()).throw(
        RuntimeError("CUDA error: an illegal memory access")
    )  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="illegal memory access"):
        measure.clear_caches()


# =================================================================================================
# The packing objective
# =================================================================================================
def test_packing_objective_holds_its_footprint(in_worker: Any, sim_backend: Any) -> None:
    import optuna

    from hpo.testing.sim_objectives import DEFAULT_FOOTPRINTS_MB, packing_objective

    assert min(DEFAULT_FOOTPRINTS_MB.values()) >= 3 * 1024
    assert max(DEFAULT_FOOTPRINTS_MB.values()) <= 14 * 1024
    measure.reset_peak()
    value = packing_objective(optuna.trial.FixedTrial({"batch_size": 64, "lr": 3e-4}), seconds=0.01)
    assert value == pytest.approx(0.1005, abs=1e-3)  # (log10(3e-4) + 3.5)^2 + 0.1 * |6 - 5|
    assert measure.peak_gpu_mem_mb() == 14336
    assert sim_backend.process_memory(0) == {}


def test_packing_objective_footprints_from_kwargs_and_env(
    in_worker: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import optuna

    from hpo.testing.sim_objectives import packing_objective

    measure.reset_peak()
    packing_objective(
        optuna.trial.FixedTrial({"batch_size": 4, "lr": 1e-3}), footprint_mb={"4": 1234}, seconds=0
    )
    assert measure.peak_gpu_mem_mb() == 1234
    monkeypatch.setenv("HPO_SIM_FOOTPRINTS", json.dumps({"small": 500, "big": 900}))
    monkeypatch.setenv("HPO_SIM_FOOTPRINT_PARAM", "model")
    measure.reset_peak()
    packing_objective(optuna.trial.FixedTrial({"model": "big", "lr": 1e-3}), seconds=0)
    assert measure.peak_gpu_mem_mb() == 900


def test_packing_objective_ooms_on_a_full_device(in_worker: Any) -> None:
    import optuna
    import torch

    from hpo.testing.sim_objectives import packing_objective

    with sim.allocate(15000), pytest.raises(torch.OutOfMemoryError):
        packing_objective(optuna.trial.FixedTrial({"batch_size": 64, "lr": 1e-3}), seconds=0)


def test_packing_objective_in_a_study(in_worker: Any) -> None:
    import optuna

    from hpo.testing.sim_objectives import packing_objective

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    study.optimize(lambda t: packing_objective(t, seconds=0), n_trials=5)
    assert {t.params["batch_size"] for t in study.trials} <= {8, 16, 32, 48, 64}
    assert all(t.value is not None for t in study.trials)


# =================================================================================================
# GPU reset hook
# =================================================================================================
def test_reset_refused_unless_allowed_and_idle(fake_nvml: Any) -> None:
    from hpo.devices import reset_gpu

    assert reset_gpu(CPUBackend(), 0, allowed=True) == (
        False,
        "GPU 0 not reset: the cpu backend cannot reset GPUs",
    )
    backend = NVMLBackend(run=lambda *a, **k: pytest.fail("must not run nvidia-smi"))
    assert reset_gpu(backend, 0, allowed=False) == (
        False,
        "GPU 0 not reset: allow_gpu_reset is false",
    )
    assert reset_gpu(backend, 0, allowed=True) == (
        False,
        "GPU 0 not reset: in use by pid(s) 4242, 4343",
    )


def test_nvml_reset_runs_nvidia_smi(fake_nvml: Any) -> None:
    from hpo.devices import reset_gpu

    mod = fake_nvml([fake_device(0, procs=[]), fake_device(1, procs=[])])
    commands: list[list[str]] = []

    def run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        commands.append(cmd)
        code = 0 if cmd[-1] == "0" else 1
        out = "GPU 00000000:01:00.0 was successfully reset." if code == 0 else ""
        err = "" if code == 0 else "Insufficient Permissions"
        return subprocess.CompletedProcess(cmd, code, out, err)

    backend = NVMLBackend(run=run)
    mod.devices[0]["ecc"] = 4  # counted before the reset: the new baseline
    assert reset_gpu(backend, 0, allowed=True) == (
        True,
        "GPU 00000000:01:00.0 was successfully reset.",
    )
    assert commands[0][1:] == ["--gpu-reset", "-i", "0"]
    assert backend.health(0).ok
    done, message = reset_gpu(backend, 1, allowed=True)
    assert not done
    assert message == "GPU 1 not reset: nvidia-smi exited 1: Insufficient Permissions"


def test_nvml_reset_nvidia_smi_missing(fake_nvml: Any) -> None:
    def run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError(2, "No such file or directory", "nvidia-smi")

    with pytest.raises(DeviceError, match="nvidia-smi failed"):
        NVMLBackend(run=run).reset(0)


def test_simulated_reset_clears_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hpo.devices import reset_gpu

    backend = open_backend("simulated", sim_config(failing={0: 1}), tmp_path)
    with sim.allocate(100, device=0, state=backend.path):
        assert reset_gpu(backend, 0, allowed=True)[0] is False  # in use
    with pytest.raises(RuntimeError, match="ECC"), sim.allocate(100, device=0, state=backend.path):
        pass
    assert not backend.health(0).ok
    assert reset_gpu(backend, 0, allowed=True) == (True, "simulated GPU 0 reset")
    assert backend.health(0).ok
    with sim.allocate(100, device=0, state=backend.path):  # fails again after 1 more trial
        pass
    with pytest.raises(RuntimeError, match="ECC"), sim.allocate(100, device=0, state=backend.path):
        pass
