"""Simulated GPUs for tests, demos and benchmarks on machines without a GPU.

``count`` devices of ``memory_mb`` each. Their state lives in one JSON *ledger* file shared by
the supervisor and every worker process, guarded by ``fcntl.flock`` on a sidecar lock file and
rewritten atomically (temp file + ``os.replace``), so a worker killed mid-write cannot corrupt
it. The ledger records which process holds how many MB on which device; entries of dead
processes (gone, zombie, or a recycled pid with another start time) are ignored and pruned, so a
SIGKILLed worker never leaks simulated memory.

In a worker (env ``HPO_DEVICE_INDEX`` and ``HPO_SIM_STATE``, set by :meth:`SimulatedBackend.env`)
an objective holds a footprint with ``with allocate(mb): ...``. When the device's held total
would exceed its capacity, ``allocate`` raises ``torch.OutOfMemoryError`` worded like PyTorch's.
A device listed in ``failing`` (index -> N) accepts N allocations, then raises the CUDA
"uncorrectable ECC error" ``RuntimeError`` on every later one, and its :meth:`health` is not ok.
Each ``allocate`` call counts as one trial's use of the device.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import logging
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from hpo.devices.base import (
    ENV_DEVICE_INDEX,
    ENV_SIM_FOOTPRINTS,
    ENV_SIM_STATE,
    DeviceError,
    GPUInfo,
    Health,
)

if TYPE_CHECKING:
    from hpo.config import SimulatedGPUConfig

log = logging.getLogger(__name__)

LEDGER_NAME = "sim_gpus.json"
ENV_SIM_FOOTPRINT_PARAM = "HPO_SIM_FOOTPRINT_PARAM"
_VERSION = 1

ECC_ERROR_TEXT = (
    "CUDA error: uncorrectable ECC error encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)

# This process's simulated allocator statistics (what torch.cuda.max_memory_reserved would be).
_held_here: dict[str, int] = {}
_peak_mb: float = 0.0
_seq = itertools.count()


# -- the ledger --------------------------------------------------------------------------------
def _proc_start(pid: int) -> float | None:
    """Start time of a live (non-zombie) process, ``None`` if it is gone."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return float(proc.create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


def _alive(hold: Mapping[str, Any]) -> bool:
    start = _proc_start(int(hold["pid"]))
    return start is not None and abs(start - float(hold["ctime"])) < 1.0


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[dict[str, Any]]:
    """Read-modify-write the ledger under an exclusive lock; the dict yielded is saved after."""
    lock_path = path.with_name(path.name + ".lock")
    with open(lock_path, "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            try:
                state: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                state = {}
            before = json.dumps(state, sort_keys=True)
            yield state
            if json.dumps(state, sort_keys=True) != before:
                fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(state, f, indent=1, sort_keys=True)
                os.replace(tmp, path)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _prune(state: dict[str, Any]) -> None:
    holds = state.get("holds", [])
    live = [h for h in holds if _alive(h)]
    if len(live) != len(holds):
        log.debug("simulated GPUs: dropped %d hold(s) of dead processes", len(holds) - len(live))
    state["holds"] = live


def _held(state: Mapping[str, Any], device: int) -> int:
    return sum(int(h["mb"]) for h in state.get("holds", []) if int(h["device"]) == device)


def _failing(state: Mapping[str, Any]) -> dict[int, int]:
    return {int(k): int(v) for k, v in state.get("failing", {}).items()}


def _ecc_reason(device: int, after: int) -> str:
    return f"simulated uncorrectable ECC error on GPU {device} after {after} trial(s)"


# -- the backend (supervisor side) -------------------------------------------------------------
class SimulatedBackend:
    """Simulated GPUs whose state is the ledger at ``path`` (see the module docstring)."""

    name = "simulated"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        with _locked(self.path) as state:
            if state.get("version") != _VERSION:
                raise DeviceError(f"{self.path} is not a simulated-GPU ledger (version {_VERSION})")
            self.count = int(state["count"])
            self.memory_mb = int(state["memory_mb"])
            self.footprint_param = str(state.get("footprint_param", "batch_size"))
            self.footprint_mb = {str(k): int(v) for k, v in state.get("footprint_mb", {}).items()}

    @classmethod
    def create(cls, sim: SimulatedGPUConfig, state_dir: Path) -> SimulatedBackend:
        """Create (or join, keeping live holds and trial counts) the ledger under ``state_dir``."""
        state_dir.mkdir(parents=True, exist_ok=True)
        path = state_dir / LEDGER_NAME
        with _locked(path) as state:
            state["version"] = _VERSION
            state["count"] = sim.count
            state["memory_mb"] = sim.memory_mb
            state["footprint_param"] = sim.footprint_param
            state["footprint_mb"] = dict(sim.footprint_mb)
            state["failing"] = {str(k): v for k, v in sim.failing.items()}
            state.setdefault("trials", {})
            state.setdefault("failed", {})
            state.setdefault("holds", [])
            _prune(state)
        return cls(path)

    def _state(self) -> dict[str, Any]:
        with _locked(self.path) as state:
            _prune(state)
            return state

    def _check(self, index: int) -> None:
        if not 0 <= index < self.count:
            raise DeviceError(f"simulated GPU {index} does not exist ({self.count} simulated)")

    def list(self) -> list[GPUInfo]:
        state = self._state()
        return [self._info(state, i) for i in range(self.count)]

    def info(self, index: int) -> GPUInfo:
        self._check(index)
        return self._info(self._state(), index)

    def _info(self, state: Mapping[str, Any], index: int) -> GPUInfo:
        used = _held(state, index)
        failed = str(index) in state.get("failed", {})
        return GPUInfo(
            index=index,
            name=f"Simulated GPU ({self.memory_mb // 1024} GB)",
            uuid=f"GPU-51a0{index:04x}-0000-0000-0000-000000000000",
            total_mb=self.memory_mb,
            free_mb=max(0, self.memory_mb - used),
            used_mb=used,
            util_pct=100 if used else 0,
            ecc_uncorrected=1 if failed else 0,
            retired_pages=0,
            pci_bus_id=f"00000000:{index + 1:02X}:00.0",
        )

    def process_memory(self, index: int) -> dict[int, int]:
        self._check(index)
        out: dict[int, int] = {}
        for h in self._state().get("holds", []):
            if int(h["device"]) == index:
                out[int(h["pid"])] = out.get(int(h["pid"]), 0) + int(h["mb"])
        return out

    def health(self, index: int) -> Health:
        if not 0 <= index < self.count:
            return Health(False, f"simulated GPU {index} does not exist")
        reason = self._state().get("failed", {}).get(str(index))
        return Health(True) if reason is None else Health(False, str(reason))

    def env(self, index: int | None) -> dict[str, str]:
        from hpo.devices.base import cpu_env

        out = cpu_env()  # real GPUs, if any, stay hidden from a simulated worker
        if index is None:
            return out
        self._check(index)
        out.update({ENV_DEVICE_INDEX: str(index), ENV_SIM_STATE: str(self.path.resolve())})
        if self.footprint_mb:
            out[ENV_SIM_FOOTPRINTS] = json.dumps(self.footprint_mb, sort_keys=True)
        if self.footprint_param != "batch_size":
            out[ENV_SIM_FOOTPRINT_PARAM] = self.footprint_param
        return out

    def reset(self, index: int) -> str:
        """Simulate ``nvidia-smi --gpu-reset``: clears a failure and the device's trial count
        (a device in ``failing`` then fails again after as many trials)."""
        self._check(index)
        with _locked(self.path) as state:
            _prune(state)
            if any(int(h["device"]) == index for h in state.get("holds", [])):
                raise DeviceError(f"simulated GPU {index} not reset: a process holds memory on it")
            state.setdefault("failed", {}).pop(str(index), None)
            state.setdefault("trials", {})[str(index)] = 0
        return f"simulated GPU {index} reset"

    def trials_on(self, index: int) -> int:
        """How many allocations (trials) device ``index`` has served."""
        return int(self._state().get("trials", {}).get(str(index), 0))

    def close(self) -> None:
        return None


# -- the worker side ---------------------------------------------------------------------------
def _oom(mb: int, device: int, capacity: int, held: int) -> BaseException:
    from torch import OutOfMemoryError

    mine = sum(_held_here.values())
    return OutOfMemoryError(
        f"CUDA out of memory. Tried to allocate {mb:.2f} MiB (GPU {device}; "
        f"{capacity:.2f} MiB total capacity; {held:.2f} MiB already allocated; "
        f"{max(0, capacity - held):.2f} MiB free; {mine:.2f} MiB reserved in total by PyTorch) "
        "If reserved memory is >> allocated memory try setting max_split_size_mb to avoid "
        "fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"
    )


def _worker_target(device: int | None, state: str | Path | None) -> tuple[int, Path]:
    dev = device if device is not None else os.environ.get(ENV_DEVICE_INDEX, "")
    path = state if state is not None else os.environ.get(ENV_SIM_STATE, "")
    if dev == "" or not path:
        raise RuntimeError(
            "simulated GPU memory needs a simulated-GPU worker: HPO_DEVICE_INDEX and "
            "HPO_SIM_STATE are not set (run with device_backend: simulated)"
        )
    return int(dev), Path(path)


@contextlib.contextmanager
def allocate(
    mb: float, *, device: int | None = None, state: str | Path | None = None
) -> Iterator[None]:
    """Hold ``mb`` MB on this worker's simulated GPU for the body of the ``with`` block.

    Raises ``torch.OutOfMemoryError`` when the device's held total would exceed its capacity and
    the CUDA ECC ``RuntimeError`` on a device that started failing. ``device`` and ``state``
    default to ``HPO_DEVICE_INDEX`` and ``HPO_SIM_STATE``.
    """
    global _peak_mb
    dev, path = _worker_target(device, state)
    want = max(0, round(mb))
    pid = os.getpid()
    hold_id = f"{pid}-{next(_seq)}"
    ctime = _proc_start(pid)
    with _locked(path) as ledger:
        if not ledger:
            raise RuntimeError(f"simulated-GPU ledger {path} does not exist")
        count, capacity = int(ledger["count"]), int(ledger["memory_mb"])
        if not 0 <= dev < count:
            raise RuntimeError(
                f"CUDA error: invalid device ordinal (simulated GPU {dev} of {count})"
            )
        _prune(ledger)
        trials = ledger.setdefault("trials", {})
        trials[str(dev)] = int(trials.get(str(dev), 0)) + 1
        after = _failing(ledger).get(dev)
        if after is not None and trials[str(dev)] > after:
            ledger.setdefault("failed", {})[str(dev)] = _ecc_reason(dev, after)
            failure: BaseException | None = RuntimeError(ECC_ERROR_TEXT)
        elif _held(ledger, dev) + want > capacity:
            failure = _oom(want, dev, capacity, _held(ledger, dev))
        else:
            failure = None
            ledger["holds"].append(
                {"id": hold_id, "pid": pid, "ctime": ctime, "device": dev, "mb": want}
            )
    if failure is not None:
        raise failure
    _held_here[hold_id] = want
    _peak_mb = max(_peak_mb, float(sum(_held_here.values())))
    try:
        yield
    finally:
        _held_here.pop(hold_id, None)
        with _locked(path) as ledger:
            ledger["holds"] = [h for h in ledger.get("holds", []) if h.get("id") != hold_id]


def peak_mb() -> float | None:
    """Peak simulated MB held by this process since :func:`reset_peak` (``None``: not simulated)."""
    if _peak_mb == 0.0 and not _held_here and not os.environ.get(ENV_SIM_STATE):
        return None
    return _peak_mb


def held_mb() -> float | None:
    """Simulated MB this process holds now (``None``: not a simulated-GPU worker)."""
    if not _held_here and not os.environ.get(ENV_SIM_STATE):
        return None
    return float(sum(_held_here.values()))


def reset_peak() -> None:
    """Start a new peak measurement at what this process holds now (like PyTorch's reset)."""
    global _peak_mb
    _peak_mb = float(sum(_held_here.values()))


def footprints_from_env() -> dict[str, int] | None:
    """The footprint table passed by the supervisor in ``HPO_SIM_FOOTPRINTS``, if any."""
    raw = os.environ.get(ENV_SIM_FOOTPRINTS)
    if not raw:
        return None
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError(f"{ENV_SIM_FOOTPRINTS} must be a JSON object of value -> MB")
    return {str(k): int(v) for k, v in data.items()}
