"""Issue 14's runtime points on real GPUs, on CPU: the allocator config in the forkserver before
torch (point 7), the WSL2 expandable-segments fallback (point 4), a retiring worker that hangs
(point 11), and GPU resets once the GPU's workers are gone (point 13).

Fakes stand in for what this machine lacks: a WSL2 kernel string, a ``pynvml`` module on
``PYTHONPATH`` whose compute processes are the run's live workers on that GPU, and an
``nvidia-smi`` on ``PATH`` that refuses a reset while one of them is alive, as the real one does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.trial import TrialState

from hpo import allocator
from hpo.errors import ExitCode
from hpo.failures import expandable_segments_failure
from hpo.outcome import Status
from hpo.testing.fakes import Done, FakeClock, FakeMechanism
from hpo.testing.objectives import WSL2_PROC_VERSION
from hpo.workers import RETIRE_GRACE_S
from tests.conftest import ROOT, assert_no_run_processes, run_hpo, write_config
from tests.test_loop import _run, _states

ILLEGAL = "CUDA error: an illegal memory access was encountered"


# =================================================================================================
# The allocator config: merged, and in the forkserver's environment before torch (point 7)
# =================================================================================================
@pytest.mark.parametrize(
    ("user", "expandable", "expected"),
    [
        (None, True, "expandable_segments:True"),
        ("max_split_size_mb:128", True, "max_split_size_mb:128,expandable_segments:True"),
        ("expandable_segments:False", True, "expandable_segments:False"),  # the user's choice
        ("backend:cudaMallocAsync", True, "backend:cudaMallocAsync"),
        (None, False, "expandable_segments:False"),
        ("max_split_size_mb:128,expandable_segments:True", False,
         "max_split_size_mb:128,expandable_segments:False"),  # the fallback overrides it
    ],
)  # fmt: skip
def test_allocator_config_merges_the_users(
    user: str | None, expandable: bool, expected: str
) -> None:
    assert allocator.env(user, expandable) == {
        "PYTORCH_CUDA_ALLOC_CONF": expected,
        "PYTORCH_ALLOC_CONF": expected,
    }


def test_the_forkserver_has_the_allocator_config_in_its_environment_before_torch(
    tmp_path: Path,
) -> None:
    """/proc/<pid>/environ is the environment the forkserver was exec'd with, so what it shows
    was there before the server imported anything (torch among its preloads)."""
    script = textwrap.dedent(
        f"""
        import json, os, sys, time
        from multiprocessing import forkserver
        from hpo.config import load_config
        from hpo.paths import RunPaths
        from hpo.workers import start_forkserver

        os.environ.pop("PYTORCH_ALLOC_CONF", None)
        os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        cfg = load_config(None, {{
            "objective": "hpo.testing.objectives:quadratic", "study": "fs",
            "run_dir": {str(tmp_path / "run")!r},
            "env": {{"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:64"}},
        }})
        start_forkserver(cfg, RunPaths(cfg.run_path))
        pid = forkserver._forkserver._forkserver_pid
        # spawnv_passfds returns before the child has exec'd: wait for the server's own cmdline
        deadline = time.monotonic() + 30
        while b"forkserver" not in open(f"/proc/{{pid}}/cmdline", "rb").read():
            assert time.monotonic() < deadline, "the forkserver never exec'd"
            time.sleep(0.01)
        raw = open(f"/proc/{{pid}}/environ", "rb").read().split(b"\\0")
        env = dict(kv.decode().partition("=")[::2] for kv in raw if kv)
        print(json.dumps({{k: env.get(k) for k in
              ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "HPO_RUN_DIR")}}))
        # The parent's own environment is left as it was.
        assert "PYTORCH_ALLOC_CONF" not in os.environ
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    want = "max_split_size_mb:64,expandable_segments:True"
    assert seen["PYTORCH_ALLOC_CONF"] == want and seen["PYTORCH_CUDA_ALLOC_CONF"] == want
    assert seen["HPO_RUN_DIR"] == str(tmp_path / "run")


# =================================================================================================
# The WSL2 signature (pytorch#192330) and the fallback (point 4)
# =================================================================================================
@pytest.mark.parametrize(
    ("text", "wsl", "expandable", "fallback"),
    [
        # pytorch#192330: RTX A4000 under WSL2, cuMemSetAccess -> CUDA_ERROR_UNKNOWN (999)
        ("CUDA driver error: unknown error", True, True, True),
        # noonghunna/club-3090#84: WSL2, cured by expandable_segments:False
        ("CUDA driver error: device not ready", True, True, True),
        ("CUDA driver error: unknown error", False, True, False),  # not WSL: a real failure
        ("CUDA driver error: unknown error", True, False, False),  # already without them
        ("CUDA out of memory. Tried to allocate 2.00 GiB", True, True, False),
    ],
)
def test_the_wsl2_signature(text: str, wsl: bool, expandable: bool, fallback: bool) -> None:
    assert expandable_segments_failure(text, wsl=wsl, expandable=expandable) is fallback


def test_wsl_is_recognised_from_the_kernel_string(tmp_path: Path) -> None:
    (tmp_path / "wsl").write_text(WSL2_PROC_VERSION)
    (tmp_path / "linux").write_text("Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075)\n")
    assert allocator.is_wsl(tmp_path / "wsl", release="6.8.0-45-generic")
    assert allocator.is_wsl(tmp_path / "none", release="6.18.33.2-microsoft-standard-WSL2")
    assert not allocator.is_wsl(tmp_path / "linux", release="6.8.0-45-generic")


def test_the_allocator_in_effect_is_read_from_torch() -> None:
    """The real torch API (CPU build here): the parsed settings, and the expandable flag."""
    torch = pytest.importorskip("torch")
    code = (
        "import torch, json; from hpo import allocator; "
        "allocator.apply('expandable_segments:False'); "
        "print(json.dumps(allocator.in_effect()))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTORCH_ALLOC_CONF": "expandable_segments:True"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen["settings"] == "expandable_segments:False" and seen["expandable_segments"] is False
    assert torch is not None


@pytest.mark.slow
def test_wsl2_first_allocation_failure_restarts_the_gpus_workers_without_expandable_segments(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "wsl"
    proc_version = tmp_path / "proc_version"
    proc_version.write_text(WSL2_PROC_VERSION)
    cfg = write_config(
        tmp_path / "wsl.yaml",
        study="wsl",
        objective="hpo.testing.objectives:wsl2_expandable",
        objective_kwargs={"proc_version": str(proc_version)},
        run_dir=str(run_dir),
        n_trials=4,
        device_backend="simulated",
        simulated_gpus={"count": 1},
        trials_per_gpu=2,
        sampler={"name": "random", "seed": 0},
    )
    proc = run_hpo("run", str(cfg), timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = (proc.stdout + proc.stderr).count("expandable segments fail under WSL2")
    assert said == 1, proc.stdout + proc.stderr  # said once, for both workers of the GPU
    study = optuna.load_study(study_name="wsl", storage=f"sqlite:///{run_dir / 'study.db'}")
    trials = study.get_trials()
    # No trial is blamed: none PRUNED or FAILED as the user's error.
    assert not [t for t in trials if t.user_attrs.get("failure_class") == "user_error"]
    assert {t.state for t in trials} == {TrialState.COMPLETE}
    assert len([t for t in trials if t.state == TrialState.COMPLETE]) == 4
    # Each worker's first GPU trial records the allocator in effect: without expandable segments.
    recorded = [t.user_attrs["hpo:allocator"] for t in trials if "hpo:allocator" in t.user_attrs]
    assert recorded and all(a["expandable_segments"] is False for a in recorded)
    assert all("expandable_segments:False" in a["settings"] for a in recorded)
    (key,) = [k for k in study.user_attrs if k.startswith("hpo:no_expandable_segments:")]
    assert key.endswith(":0") and "CUDA driver error: unknown error" in study.user_attrs[key]
    assert_no_run_processes(run_dir)


# =================================================================================================
# A retiring worker that hangs is killed after a deadline (point 11)
# =================================================================================================
def test_a_retiring_worker_stuck_after_a_sticky_error_is_killed_after_its_grace(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    mech = FakeMechanism(
        clock,
        # Trial 0 hits a sticky error; its worker then hangs (in synchronize) and never reads
        # the STOP of its retirement. Later trials take long enough to outlast the grace.
        trial=lambda spec, w: (
            Done(Status.FAILED, None, "torch.AcceleratorError", ILLEGAL, stuck=True)
            if spec.number == 0
            else Done(after_s=RETIRE_GRACE_S / 2)
        ),
    )
    code, sup = _run(tmp_path, mech, clock, n_trials=5, max_retries=2)
    assert code == ExitCode.OK
    stuck = mech.spawned[0]
    assert stuck.sent[-1][0] == "stop"  # it was retired...
    assert stuck.killed == [signal.SIGKILL]  # ...and, stuck, killed by the pool, not at shutdown
    assert sup.pool.retiring == [] and _states(tmp_path)["COMPLETE"] == 5


# =================================================================================================
# allow_gpu_reset: the GPU's workers go first, then the reset, then they restart (point 13)
# =================================================================================================
FAKE_PYNVML = '''
"""A fake pynvml for two GPUs whose compute processes are the run's live workers on each."""
import json, os
from types import SimpleNamespace

import psutil

class NVMLError(Exception):
    value = 999
def _err(name, value):
    return type(name, (NVMLError,), {"value": value})
NVMLError_NotSupported = _err("NVMLError_NotSupported", 3)
NVMLError_NoPermission = _err("NVMLError_NoPermission", 4)
NVMLError_FunctionNotFound = _err("NVMLError_FunctionNotFound", 13)
NVMLError_GpuIsLost = _err("NVMLError_GpuIsLost", 15)
NVMLError_Unknown = _err("NVMLError_Unknown", 999)
NVMLLibraryMismatchError = _err("NVMLLibraryMismatchError", 18)
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_VOLATILE_ECC = 0
NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0
NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1
MB = 1 << 20

def holders(gpu):
    """Live workers of the run pinned to ``gpu`` (from its event log): they hold a context."""
    pids = set()
    path = os.path.join(os.environ["FAKE_GPU_RUN_DIR"], "events.jsonl")
    if os.path.exists(path):
        for line in open(path):
            ev = json.loads(line)
            if ev["event"] == "worker_started" and ev.get("device") == gpu:
                pids.add(ev["pid"])
    return sorted(p for p in pids if psutil.pid_exists(p)
                  and psutil.Process(p).status() != psutil.STATUS_ZOMBIE)

def nvmlInit(): pass
def nvmlShutdown(): pass
def nvmlDeviceGetCount(): return 2
def nvmlDeviceGetHandleByIndex(i): return i
def nvmlDeviceGetName(h): return b"NVIDIA A100-SXM4-40GB"
def nvmlDeviceGetUUID(h): return f"GPU-0000000{h}-aaaa-bbbb-cccc-dddddddddddd"
def nvmlDeviceGetMemoryInfo(h): return SimpleNamespace(total=40960 * MB, free=40000 * MB, used=960 * MB)
def nvmlDeviceGetUtilizationRates(h): return SimpleNamespace(gpu=0, memory=0)
def nvmlDeviceGetTotalEccErrors(h, t, c): return 0
def nvmlDeviceGetRetiredPages(h, cause): return []
def nvmlDeviceGetRetiredPagesPendingStatus(h): return 0
def nvmlDeviceGetRemappedRows(h): return (0, 0, 0, 0)
def nvmlDeviceGetPciInfo(h): return SimpleNamespace(busId=f"00000000:0{h + 1}:00.0".encode())
def nvmlDeviceGetComputeRunningProcesses(h):
    return [SimpleNamespace(pid=p, usedGpuMemory=500 * MB) for p in holders(h)]
nvmlDeviceGetComputeRunningProcesses_v2 = nvmlDeviceGetComputeRunningProcesses
nvmlDeviceGetComputeRunningProcesses_v3 = nvmlDeviceGetComputeRunningProcesses
def nvmlSystemGetDriverVersion(): return b"550.54.14"
def nvmlSystemGetCudaDriverVersion(): return 12040
def __getattr__(name):  # any other query: not supported on this card, as NVML says
    if name.startswith("nvml"):
        def unsupported(*a):
            raise NVMLError_NotSupported()
        return unsupported
    raise AttributeError(name)
'''

FAKE_NVIDIA_SMI = '''#!{python}
"""nvidia-smi --gpu-reset -i N: refused while a process holds a context on GPU N, as the real
one refuses; every call is recorded, with the holders at that moment."""
import json, os, sys
sys.path.insert(0, {fake_dir!r})
import pynvml
gpu = int(sys.argv[sys.argv.index("-i") + 1])
held = pynvml.holders(gpu)
with open(os.environ["FAKE_NVSMI_LOG"], "a") as fh:
    fh.write(json.dumps({{"argv": sys.argv[1:], "gpu": gpu, "holders": held}}) + "\\n")
if held:
    print(f"Unable to reset GPU 00000000:0{{gpu + 1}}:00.0 because it's being used by some "
          "other process (e.g. CUDA application, graphics application like X server, "
          "monitoring application like other instance of nvidia-smi). Please first kill all "
          "processes using the device and retry the command or reboot the system to make GPU "
          "reset work.")
    sys.exit(255)
print(f"GPU 00000000:0{{gpu + 1}}:00.0 was successfully reset.")
'''


@pytest.mark.slow
def test_gpu_reset_waits_for_the_gpus_workers_then_restarts_them(tmp_path: Path) -> None:
    run_dir = tmp_path / "reset"
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "pynvml.py").write_text(FAKE_PYNVML)
    smi = fake / "nvidia-smi"
    smi.write_text(FAKE_NVIDIA_SMI.format(python=sys.executable, fake_dir=str(fake)))
    smi.chmod(0o755)
    log = tmp_path / "nvidia-smi.log"
    cfg = write_config(
        tmp_path / "reset.yaml",
        study="reset",
        objective="hpo.testing.objectives:cuda_error_on_device",
        # GPU 1's trials take a while, so work is left when GPU 0 comes back from its reset
        # (without it, a loaded machine let GPU 1 finish everything first: nothing restarted).
        objective_kwargs={"device": "0", "sleep_s": 0.5},
        run_dir=str(run_dir),
        n_trials=12,
        device_backend="nvml",
        trials_per_gpu=1,
        quarantine_after=1,
        allow_gpu_reset=True,
        max_retries=3,
        sampler={"name": "random", "seed": 0},
    )
    env: dict[str, Any] = {
        "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": f"{fake}{os.pathsep}{ROOT}",
        "FAKE_GPU_RUN_DIR": str(run_dir),
        "FAKE_NVSMI_LOG": str(log),
    }
    proc = run_hpo("run", str(cfg), "--quiet", env=env, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    # One reset of GPU 0, once none of the run's workers held it: the real one would succeed.
    assert calls == [{"argv": ["--gpu-reset", "-i", "0"], "gpu": 0, "holders": []}]
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    kinds = [(e["event"], e.get("device")) for e in events]
    quarantined = kinds.index(("device_quarantined", 0))
    reset = kinds.index(("gpu_reset", 0))
    assert quarantined < reset and events[reset]["done"] is True
    # Then GPU 0's worker restarted; quarantined again (the GPU stays bad), it is not reset twice.
    assert ("worker_started", 0) in kinds[reset:]
    assert kinds.count(("device_quarantined", 0)) == 2 and kinds.count(("gpu_reset", 0)) == 1
    study = optuna.load_study(study_name="reset", storage=f"sqlite:///{run_dir / 'study.db'}")
    records = [v for k, v in study.user_attrs.items() if k.startswith("hpo:quarantine:")]
    assert len(records) == 1 and not records[0].get("lifted")  # the second quarantine stands
    assert_no_run_processes(run_dir)
