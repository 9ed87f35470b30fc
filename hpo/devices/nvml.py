"""The NVML backend: real NVIDIA GPUs through ``pynvml`` (package ``nvidia-ml-py``).

NVML never creates a CUDA context, so the supervisor may use it freely (and may fork after).
Optional queries (utilisation, ECC counters, retired pages, remapped rows, per-process memory on
some platforms) raise ``NVMLError_NotSupported`` on consumer cards, under WSL2, in some
containers and on MIG instances; they read as ``None`` here. Process ids come from the host's
pid namespace: inside a container they may not match ``os.getpid()`` of the workers.

Which GPUs, and how they are numbered. NVML counts every GPU of the machine, including those
the process may not open (Slurm ``ConstrainDevices``, containers): for those
``nvmlDeviceGetHandleByIndex`` raises ``NVMLError_NoPermission``. Such GPUs are left out and
listed in :attr:`NVMLBackend.unavailable` with the reason. The GPUs left are then narrowed to
the set the parent was given in ``CUDA_VISIBLE_DEVICES``, parsed as CUDA parses it (see
:func:`select_visible`), and mapped to NVML devices by UUID, because NVML order need not be
CUDA order. A GPU in MIG mode runs no CUDA work itself; each of its MIG instances is a device
of its own, with its own UUID (``MIG-...``) and memory. hpo's device ``n`` is the ``n``-th
device of that visible set, and a worker pinned to it gets ``CUDA_VISIBLE_DEVICES=<its UUID>``,
which names the same device whatever the order or the scheduler's numbering.

Errors. Any ``pynvml.NVMLError`` raised by a query about one device (``GpuIsLost``,
``Unknown``, ``NoPermission``...) leaves this module as a :class:`DeviceQueryError` naming the
device, so callers (the planner) quarantine that device instead of aborting the run.
"""

from __future__ import annotations

import importlib
import logging
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

from hpo.devices.base import (
    ENV_DEVICE_INDEX,
    ENV_DEVICE_UUID,
    DeviceError,
    DeviceQueryError,
    GPUInfo,
    Health,
    cpu_env,
)

log = logging.getLogger(__name__)

_MB = 1024 * 1024
_T = TypeVar("_T")


class NVMLUnavailable(RuntimeError):
    """``pynvml`` is not installed or ``nvmlInit`` failed (no driver, no library)."""


def _load_pynvml() -> ModuleType:
    try:
        return importlib.import_module("pynvml")
    except ImportError as exc:
        raise NVMLUnavailable(
            f"pynvml is not installed ({exc}); pip install nvidia-ml-py"
        ) from None


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class Target:
    """One device a trial can run on: a whole GPU, or one MIG instance of a GPU in MIG mode."""

    nvml_index: int  # the (parent) GPU's NVML index
    uuid: str | None  # GPU-... or MIG-...; None only where NVML cannot tell (then pin by index)
    mig_slot: int | None = None  # the instance's index on its GPU (MIG), else None

    @property
    def label(self) -> str:
        where = f"NVML GPU {self.nvml_index}"
        if self.mig_slot is not None:
            where += f" MIG {self.mig_slot}"
        return f"{where} ({self.uuid})" if self.uuid else where


def select_visible(
    gpus: Sequence[tuple[Target, Sequence[Target]]], cuda_visible: str | None
) -> tuple[list[Target], list[str]]:
    """The devices a process with ``CUDA_VISIBLE_DEVICES=cuda_visible`` may use, in CUDA order.

    ``gpus``: the accessible GPUs in NVML (PCI bus) order, each with its MIG instances (empty
    unless MIG mode is on: then the instances stand for the GPU). Returns the devices and the
    warnings worth a log line. Parsed as CUDA parses it: unset means every device; empty means
    none; otherwise comma-separated entries, each an index, ``GPU-<uuid>`` (a unique prefix
    suffices) or ``MIG-<uuid>``, and enumeration stops at the first entry that is invalid or
    names no device (CUDA ignores the rest). An index counts the accessible GPUs in PCI bus
    order, which is CUDA's order under ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (and on machines whose
    GPUs are all alike); a warning says so when the GPUs differ and the order is not PCI_BUS_ID.
    """
    expand = [list(migs) if migs else [gpu] for gpu, migs in gpus]
    if cuda_visible is None:
        return [t for group in expand for t in group], []
    out: list[Target] = []
    warnings: list[str] = []
    entries = [e.strip() for e in cuda_visible.split(",")] if cuda_visible.strip() else []
    for pos, entry in enumerate(entries):
        found: list[Target] = []
        if entry.isdigit():
            if int(entry) < len(expand):
                found = expand[int(entry)]
        elif entry.startswith("MIG-GPU-"):
            found = []  # the pre-R470 form: not mapped (CUDA 11.0 era)
        elif entry.startswith(("GPU-", "MIG-")):
            matches = [
                (g, m)
                for g, (gpu, migs) in enumerate(gpus)
                for m in [gpu, *migs]
                if m.uuid and m.uuid.lower().startswith(entry.lower())
            ]
            if len(matches) == 1:
                g, m = matches[0]
                found = expand[g] if m is gpus[g][0] else [m]
        if not found:
            rest = entries[pos:]
            warnings.append(
                f"CUDA_VISIBLE_DEVICES={cuda_visible}: entry {entry!r} names no device this "
                f"process may use, so CUDA ignores it and what follows ({', '.join(rest)})"
            )
            break
        out.extend(t for t in found if t not in out)
    return out, warnings


@dataclass
class _Handles:
    gpu: Any  # the (parent) GPU's handle: ECC, retired pages, PCI, reset
    own: Any  # the device's handle: memory, name, processes (the MIG instance's for MIG)


class NVMLBackend:
    """Real GPUs via NVML. ``NVMLBackend()`` raises :class:`NVMLUnavailable` when NVML can't start.

    ``cuda_visible``: the parent's ``CUDA_VISIBLE_DEVICES`` (default: this process's). After
    construction, :attr:`targets` are the devices hpo may use (index ``n`` is ``targets[n]``),
    :attr:`unavailable` maps NVML indices of GPUs left out to why, and :attr:`visible_from`
    says where the set came from. Thread-safe for the supervisor's loop plus a monitoring
    thread (NVML itself is thread-safe; the handle cache is guarded).
    """

    name = "nvml"

    def __init__(
        self,
        nvml: ModuleType | None = None,
        run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
        cuda_visible: str | None = None,
    ) -> None:
        self._run = run
        self._nvml = nvml if nvml is not None else _load_pynvml()
        try:
            self._nvml.nvmlInit()
        except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
            raise NVMLUnavailable(f"nvmlInit failed: {_text(exc) or type(exc).__name__}") from None
        self._open = True
        self._lock = threading.Lock()
        self._handles: dict[int, _Handles] = {}
        try:
            self.nvml_count = int(self._nvml.nvmlDeviceGetCount())
        except Exception as exc:
            self.close()
            raise NVMLUnavailable(f"nvmlDeviceGetCount failed: {_text(exc)}") from None
        self.unavailable: dict[int, str] = {}
        gpus = [g for g in (self._probe(i) for i in range(self.nvml_count)) if g is not None]
        if cuda_visible is None:
            cuda_visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        self.targets, warnings = select_visible(gpus, cuda_visible)
        if cuda_visible is not None:
            self.targets = [t for t in self.targets if t.uuid]  # an unnamed GPU can't be pinned
        for w in warnings:
            log.warning("%s", w)
        order = os.environ.get("CUDA_DEVICE_ORDER", "FASTEST_FIRST")
        if cuda_visible and any(e.strip().isdigit() for e in cuda_visible.split(",")):
            names = {self._name(g.nvml_index) for g, _ in gpus}
            if len(names) > 1 and order != "PCI_BUS_ID":
                log.warning(
                    "CUDA_VISIBLE_DEVICES=%s gives indices and the GPUs differ (%s): indices are "
                    "read in PCI bus order, which CUDA uses only with CUDA_DEVICE_ORDER=PCI_BUS_ID;"
                    " give UUIDs (nvidia-smi -L) to be sure",
                    cuda_visible,
                    ", ".join(sorted(names)),
                )
        self.visible_from = (
            "all GPUs NVML lets this process open"
            if cuda_visible is None
            else f"CUDA_VISIBLE_DEVICES={cuda_visible}"
        )
        self.count = len(self.targets)
        # Uncorrectable ECC errors already counted when we started: health() flags new ones only,
        # and a pending page retirement / row remap (which needs a reset) independently.
        self._ecc_baseline: dict[int, int | None] = {}
        for i in range(self.count):
            try:
                self._ecc_baseline[i] = self._ecc(self._handle(i).gpu)
            except Exception:  # a GPU that is already lost: health() will say so
                self._ecc_baseline[i] = None

    # -- enumeration -----------------------------------------------------------------------------
    def _probe(self, i: int) -> tuple[Target, list[Target]] | None:
        """GPU ``i`` and its MIG instances, or None (recorded in :attr:`unavailable`) when this
        process may not open it (``NoPermission``), it is lost, or NVML fails on it."""
        try:
            handle = self._nvml.nvmlDeviceGetHandleByIndex(i)
            uuid = self._optional("nvmlDeviceGetUUID", handle)
            gpu = Target(i, None if uuid is None else _text(uuid))
            migs = self._migs(i, handle)
        except Exception as exc:
            if not self._is_nvml(exc):
                raise
            self.unavailable[i] = _text(exc) or type(exc).__name__
            log.info("NVML GPU %d is not usable by this process: %s", i, self.unavailable[i])
            return None
        if migs == []:
            self.unavailable[i] = "MIG mode is on and the GPU has no MIG instance"
            return None
        return gpu, migs or []

    def _migs(self, i: int, handle: Any) -> list[Target] | None:
        """The MIG instances of a GPU in MIG mode (possibly none); None when MIG is off."""
        mode = self._optional("nvmlDeviceGetMigMode", handle)
        enabled = getattr(self._nvml, "NVML_DEVICE_MIG_ENABLE", 1)
        if mode is None or int(mode[0]) != enabled:
            return None
        out = []
        for slot in range(int(self._nvml.nvmlDeviceGetMaxMigDeviceCount(handle))):
            try:
                mig = self._nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
            except Exception as exc:
                if self._is(exc, "NVMLError_NotFound", "NVMLError_InvalidArgument"):
                    continue  # an empty slot
                raise
            out.append(Target(i, _text(self._nvml.nvmlDeviceGetUUID(mig)), slot))
        return out

    def _name(self, nvml_index: int) -> str:
        try:
            handle = self._nvml.nvmlDeviceGetHandleByIndex(nvml_index)
            return _text(self._nvml.nvmlDeviceGetName(handle))
        except Exception:
            return "?"

    # -- helpers ---------------------------------------------------------------------------------
    def _is(self, exc: BaseException, *names: str) -> bool:
        return any(
            isinstance(exc, cls)
            for cls in (getattr(self._nvml, n, None) for n in names)
            if isinstance(cls, type)
        )

    def _is_nvml(self, exc: BaseException) -> bool:
        return self._is(exc, "NVMLError", "NVMLLibraryMismatchError")

    def _query(self, index: int, fn: Callable[[], _T]) -> _T:
        """Run a query about device ``index``; an NVML error becomes a :class:`DeviceQueryError`."""
        try:
            return fn()
        except DeviceError:
            raise
        except Exception as exc:
            if not self._is_nvml(exc):
                raise
            what = _text(exc) or type(exc).__name__
            raise DeviceQueryError(
                f"GPU {index} ({self.targets[index].label}): NVML: {what}"
            ) from exc

    def _optional(self, fn_name: str, *args: Any) -> Any:
        """Call an optional NVML query; ``None`` when the GPU, driver or platform lacks it."""
        fn = getattr(self._nvml, fn_name, None)
        if fn is None:
            return None
        try:
            return fn(*args)
        except Exception as exc:
            if self._is(
                exc,
                "NVMLError_NotSupported",
                "NVMLError_NoPermission",
                "NVMLError_FunctionNotFound",
                "NVMLLibraryMismatchError",
            ):
                return None
            raise

    def _handle(self, index: int) -> _Handles:
        if not 0 <= index < self.count:
            raise DeviceError(
                f"GPU {index} does not exist (this process may use {self.count} GPU(s))"
            )
        with self._lock:
            handles = self._handles.get(index)
            if handles is None:
                t = self.targets[index]
                gpu = self._nvml.nvmlDeviceGetHandleByIndex(t.nvml_index)
                own = (
                    gpu
                    if t.mig_slot is None
                    else self._nvml.nvmlDeviceGetMigDeviceHandleByIndex(gpu, t.mig_slot)
                )
                handles = self._handles[index] = _Handles(gpu, own)
            return handles

    def _ecc(self, handle: Any) -> int | None:
        value = self._optional(
            "nvmlDeviceGetTotalEccErrors",
            handle,
            getattr(self._nvml, "NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1),
            getattr(self._nvml, "NVML_VOLATILE_ECC", 0),
        )
        return None if value is None else int(value)

    def _retired_pages(self, handle: Any) -> int | None:
        causes = (
            getattr(self._nvml, "NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS", 0),
            getattr(self._nvml, "NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR", 1),
        )
        total = 0
        for cause in causes:
            pages = self._optional("nvmlDeviceGetRetiredPages", handle, cause)
            if pages is None:
                return None
            total += len(pages)
        return total

    def _processes(self, handle: Any) -> list[Any]:
        # v3 (driver >= 510), v2, then the unversioned call; each may be missing from an older
        # pynvml (AttributeError) or from an older driver (FunctionNotFound / version mismatch).
        for fn_name in (
            "nvmlDeviceGetComputeRunningProcesses_v3",
            "nvmlDeviceGetComputeRunningProcesses_v2",
            "nvmlDeviceGetComputeRunningProcesses",
        ):
            fn = getattr(self._nvml, fn_name, None)
            if fn is None:
                continue
            try:
                return list(fn(handle))
            except Exception as exc:
                if self._is(exc, "NVMLError_FunctionNotFound", "NVMLLibraryMismatchError"):
                    continue
                if self._is(exc, "NVMLError_NotSupported", "NVMLError_NoPermission"):
                    return []
                raise
        return []

    # -- DeviceBackend ---------------------------------------------------------------------------
    def list(self) -> list[GPUInfo]:
        return [self.info(i) for i in range(self.count)]

    def info(self, index: int) -> GPUInfo:
        return self._query(index, lambda: self._info(index))

    def _info(self, index: int) -> GPUInfo:
        nvml = self._nvml
        h = self._handle(index)
        t = self.targets[index]
        mem = nvml.nvmlDeviceGetMemoryInfo(h.own)
        util = self._optional("nvmlDeviceGetUtilizationRates", h.own)
        pci = self._optional("nvmlDeviceGetPciInfo", h.gpu)
        return GPUInfo(
            index=index,
            name=_text(nvml.nvmlDeviceGetName(h.own)),
            uuid=t.uuid,
            total_mb=int(mem.total) // _MB,
            free_mb=int(mem.free) // _MB,
            used_mb=int(mem.used) // _MB,
            util_pct=None if util is None else int(util.gpu),
            ecc_uncorrected=self._ecc(h.gpu),
            retired_pages=self._retired_pages(h.gpu),
            pci_bus_id=None if pci is None else _text(pci.busId),
            nvml_index=t.nvml_index,
            mig_slot=t.mig_slot,
        )

    def free_mb(self, index: int) -> int:
        """Free memory of device ``index`` now, in MB (one NVML call)."""
        return (
            self._query(
                index, lambda: int(self._nvml.nvmlDeviceGetMemoryInfo(self._handle(index).own).free)
            )
            // _MB
        )

    def process_memory(self, index: int) -> dict[int, int]:
        out: dict[int, int] = {}
        for proc in self._query(index, lambda: self._processes(self._handle(index).own)):
            used = getattr(proc, "usedGpuMemory", None)  # None under WDDM (Windows/WSL2)
            out[int(proc.pid)] = out.get(int(proc.pid), 0) + (
                0 if used is None else int(used) // _MB
            )
        return out

    def health(self, index: int) -> Health:
        try:
            h = self._handle(index)
            self._nvml.nvmlDeviceGetMemoryInfo(h.own)  # fails on a GPU that fell off the bus
            ecc = self._ecc(h.gpu)
            pending = self._optional("nvmlDeviceGetRetiredPagesPendingStatus", h.gpu)
            remapped = self._optional("nvmlDeviceGetRemappedRows", h.gpu)
        except DeviceError as exc:
            return Health(False, str(exc))
        except Exception as exc:
            return Health(False, f"NVML query failed on GPU {index}: {_text(exc)}")
        base = self._ecc_baseline.get(index)
        if ecc is not None and ecc > (base or 0):
            return Health(
                False, f"{ecc - (base or 0)} new uncorrectable ECC error(s) on GPU {index}"
            )
        if pending:
            return Health(False, f"GPU {index} has retired pages pending: it needs a reset")
        if remapped is not None and len(remapped) >= 4:
            # (corrected rows, uncorrected rows, remap pending, remap failure)
            if remapped[3]:
                return Health(False, f"GPU {index} failed a row remapping: the GPU needs service")
            if remapped[2]:
                return Health(False, f"GPU {index} has a row remapping pending: it needs a reset")
        return Health(True)

    def env(self, index: int | None) -> dict[str, str]:
        """Pin a worker by UUID (``CUDA_VISIBLE_DEVICES=GPU-...`` or ``MIG-...``): the same
        device whatever CUDA's order or the scheduler's numbering. Only a GPU whose UUID NVML
        cannot read (and only when the parent's set was not narrowed) is pinned by NVML index."""
        if index is None:
            return cpu_env()
        if not 0 <= index < self.count:
            raise DeviceError(
                f"GPU {index} does not exist (this process may use {self.count} GPU(s))"
            )
        t = self.targets[index]
        return {
            "CUDA_VISIBLE_DEVICES": t.uuid or str(t.nvml_index),
            "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
            ENV_DEVICE_INDEX: str(index),
            ENV_DEVICE_UUID: t.uuid or "",
        }

    def describe(self) -> str:
        """One line: the devices this process may use, and those NVML sees that it may not."""
        shown = ", ".join(f"{i}: {t.label}" for i, t in enumerate(self.targets)) or "none"
        text = f"visible ({self.visible_from}): {shown}"
        if self.unavailable:
            text += "; not usable: " + ", ".join(
                f"NVML GPU {i} ({why})" for i, why in sorted(self.unavailable.items())
            )
        return text

    def reset(self, index: int) -> str:
        """``nvidia-smi --gpu-reset -i N``: needs root and an idle GPU; not possible under WSL2,
        and refused for a MIG instance (it would reset every instance of its GPU).

        Use :func:`hpo.devices.base.reset_gpu`, which checks that no process uses the GPU first.
        """
        self._handle(index)
        t = self.targets[index]
        if t.mig_slot is not None:
            raise DeviceError(
                f"GPU {index} not reset: it is a MIG instance of NVML GPU {t.nvml_index}, and a "
                "reset would take down every instance of that GPU"
            )
        exe = shutil.which("nvidia-smi") or "nvidia-smi"
        try:
            proc = self._run(
                [exe, "--gpu-reset", "-i", str(t.nvml_index)],
                capture_output=True,
                text=True,
                timeout=120,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DeviceError(f"GPU {index} not reset: nvidia-smi failed ({exc})") from None
        output = " ".join((proc.stdout + " " + proc.stderr).split())
        if proc.returncode != 0:
            raise DeviceError(
                f"GPU {index} not reset: nvidia-smi exited {proc.returncode}: {output}"
            )
        with self._lock:
            self._handles.pop(index, None)  # a reset GPU may get a new handle
        try:
            self._ecc_baseline[index] = self._ecc(self._handle(index).gpu)
        except Exception:
            self._ecc_baseline[index] = None
        return output or "reset"

    def driver_version(self) -> str | None:
        value = self._optional("nvmlSystemGetDriverVersion")
        return None if value is None else _text(value)

    def close(self) -> None:
        if not self._open:
            return
        self._open = False
        try:
            self._nvml.nvmlShutdown()
        except Exception as exc:  # shutting down must not hide the caller's error
            log.debug("nvmlShutdown failed: %s", exc)
