"""The NVML backend: real NVIDIA GPUs through ``pynvml`` (package ``nvidia-ml-py``).

NVML never creates a CUDA context, so the supervisor may use it freely (and may fork after).
Optional queries (utilisation, ECC counters, retired pages, remapped rows, per-process memory on
some platforms) raise ``NVMLError_NotSupported`` on consumer cards, under WSL2 and in some
containers; they read as ``None`` here. Process ids come from the host's pid namespace: inside a
container they may not match ``os.getpid()`` of the workers.
"""

from __future__ import annotations

import importlib
import logging
import shutil
import subprocess
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from hpo.devices.base import ENV_DEVICE_INDEX, DeviceError, GPUInfo, Health, cpu_env

log = logging.getLogger(__name__)

_MB = 1024 * 1024


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


class NVMLBackend:
    """Real GPUs via NVML. ``NVMLBackend()`` raises :class:`NVMLUnavailable` when NVML can't start.

    Thread-safe for the supervisor's loop plus a monitoring thread (NVML itself is thread-safe;
    the handle cache is guarded).
    """

    name = "nvml"

    def __init__(
        self,
        nvml: ModuleType | None = None,
        run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
    ) -> None:
        self._run = run
        self._nvml = nvml if nvml is not None else _load_pynvml()
        try:
            self._nvml.nvmlInit()
        except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
            raise NVMLUnavailable(f"nvmlInit failed: {_text(exc) or type(exc).__name__}") from None
        self._open = True
        self._lock = threading.Lock()
        self._handles: dict[int, Any] = {}
        try:
            self.count = int(self._nvml.nvmlDeviceGetCount())
        except Exception as exc:
            self.close()
            raise NVMLUnavailable(f"nvmlDeviceGetCount failed: {_text(exc)}") from None
        # Uncorrectable ECC errors already counted when we started: health() flags new ones only,
        # and a pending page retirement / row remap (which needs a reset) independently.
        self._ecc_baseline: dict[int, int | None] = {}
        for i in range(self.count):
            try:
                self._ecc_baseline[i] = self._ecc(self._handle(i))
            except Exception:  # a GPU that is already lost: health() will say so
                self._ecc_baseline[i] = None

    # -- helpers ---------------------------------------------------------------------------------
    def _is(self, exc: BaseException, *names: str) -> bool:
        return any(
            isinstance(exc, cls)
            for cls in (getattr(self._nvml, n, None) for n in names)
            if isinstance(cls, type)
        )

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

    def _handle(self, index: int) -> Any:
        if not 0 <= index < self.count:
            raise DeviceError(f"GPU {index} does not exist (NVML sees {self.count} GPU(s))")
        with self._lock:
            handle = self._handles.get(index)
            if handle is None:
                handle = self._nvml.nvmlDeviceGetHandleByIndex(index)
                self._handles[index] = handle
            return handle

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
        nvml = self._nvml
        handle = self._handle(index)
        mem = nvml.nvmlDeviceGetMemoryInfo(handle)
        util = self._optional("nvmlDeviceGetUtilizationRates", handle)
        pci = self._optional("nvmlDeviceGetPciInfo", handle)
        uuid = self._optional("nvmlDeviceGetUUID", handle)
        return GPUInfo(
            index=index,
            name=_text(nvml.nvmlDeviceGetName(handle)),
            uuid=None if uuid is None else _text(uuid),
            total_mb=int(mem.total) // _MB,
            free_mb=int(mem.free) // _MB,
            used_mb=int(mem.used) // _MB,
            util_pct=None if util is None else int(util.gpu),
            ecc_uncorrected=self._ecc(handle),
            retired_pages=self._retired_pages(handle),
            pci_bus_id=None if pci is None else _text(pci.busId),
        )

    def process_memory(self, index: int) -> dict[int, int]:
        out: dict[int, int] = {}
        for proc in self._processes(self._handle(index)):
            used = getattr(proc, "usedGpuMemory", None)  # None under WDDM (Windows/WSL2)
            out[int(proc.pid)] = out.get(int(proc.pid), 0) + (
                0 if used is None else int(used) // _MB
            )
        return out

    def health(self, index: int) -> Health:
        try:
            handle = self._handle(index)
            self._nvml.nvmlDeviceGetMemoryInfo(handle)  # fails on a GPU that fell off the bus
            ecc = self._ecc(handle)
            pending = self._optional("nvmlDeviceGetRetiredPagesPendingStatus", handle)
            remapped = self._optional("nvmlDeviceGetRemappedRows", handle)
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
        if index is None:
            return cpu_env()
        self._handle(index)  # validates the index
        return {
            "CUDA_VISIBLE_DEVICES": str(index),
            "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
            ENV_DEVICE_INDEX: str(index),
        }

    def reset(self, index: int) -> str:
        """``nvidia-smi --gpu-reset -i N``: needs root and an idle GPU; not possible under WSL2.

        Use :func:`hpo.devices.base.reset_gpu`, which checks that no process uses the GPU first.
        """
        self._handle(index)
        exe = shutil.which("nvidia-smi") or "nvidia-smi"
        try:
            proc = self._run(
                [exe, "--gpu-reset", "-i", str(index)],
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
            self._ecc_baseline[index] = self._ecc(self._handle(index))
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
