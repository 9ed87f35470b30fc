"""A stand-in for the ``pynvml`` module (package ``nvidia-ml-py``) that behaves as the real one.

Every NVML call the backend makes exists here under its real name and raises what the real
binding raises: ``pynvml.NVMLError(code)``, which the real ``NVMLError.__new__`` maps to the
generated subclass (``NVMLError_GpuIsLost``, ``NVMLError_NoPermission``, ``NVMLError_Unknown``
... built by ``_extractNVMLErrorsAsClasses``), exactly as ``_nvmlCheckReturn`` does. The error
classes and constants are the installed ``pynvml``'s own, so ``except pynvml.NVMLError_...``
in product code is tested against the real hierarchy and the real messages ("GPU is lost",
"Insufficient Permissions"). Strings come back as ``str``, as ``convertStrBytes`` returns them.

A device is a dict (see :func:`fake_device`); it doubles as its handle. Behaviours that real
machines show and this fake reproduces:

* ``no_permission``: ``nvmlDeviceGetCount`` counts the GPU but ``nvmlDeviceGetHandleByIndex``
  raises ``NVMLError_NoPermission`` (NVML's documented behaviour for a device the process may
  not open: Slurm ``ConstrainDevices``, containers);
* ``lost``: every call taking the handle raises ``NVMLError_GpuIsLost`` (a GPU off the bus);
* ``errors``: ``{call name: NVML error code}`` raised by that call on that device, e.g.
  ``{"nvmlDeviceGetMemoryInfo": pynvml.NVML_ERROR_UNKNOWN}``;
* ``mig``: a list of MIG instances (:func:`fake_mig`): MIG mode is enabled, the GPU itself runs
  no CUDA work, and ``nvmlDeviceGetMigDeviceHandleByIndex`` returns the instances' handles
  (``NVMLError_NotFound`` for an empty slot up to ``nvmlDeviceGetMaxMigDeviceCount``). A MIG
  handle has its own UUID (``MIG-...``), name, memory and processes; ECC, utilisation and
  retired pages are ``NVMLError_NotSupported`` on it, as on real MIG device handles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import ModuleType, SimpleNamespace
from typing import Any

import pynvml

MB = 1024 * 1024

#: Calls that take a device handle as their first argument and are not supported on MIG handles.
_NOT_ON_MIG = {
    "nvmlDeviceGetUtilizationRates",
    "nvmlDeviceGetTotalEccErrors",
    "nvmlDeviceGetRetiredPages",
    "nvmlDeviceGetRetiredPagesPendingStatus",
    "nvmlDeviceGetRemappedRows",
    "nvmlDeviceGetMigMode",
    "nvmlDeviceGetMaxMigDeviceCount",
}


def fake_device(i: int, **kw: Any) -> dict[str, Any]:
    """A 24 GB GPU with NVML index ``i``; keyword arguments override any field."""
    dev: dict[str, Any] = {
        "name": "NVIDIA GeForce RTX 4090",
        "uuid": f"GPU-0000000{i}-aaaa-bbbb-cccc-dddddddddddd",
        "total": 24564 * MB,
        "free": 20000 * MB,
        "used": 4564 * MB,
        "util": 37,
        "ecc": 0,
        "retired": {0: [0x1000], 1: [0x2000, 0x3000]},
        "pending": 0,
        "remapped": (0, 0, 0, 0),
        "busId": f"00000000:0{i + 1}:00.0",
        "procs": [(4242, 3000 * MB), (4343, None)],
        "lost": False,
        "no_permission": False,
        "errors": {},
        "mig": None,
        "mig_max": 7,
        "is_mig": False,
    }
    dev.update(kw)
    return dev


def fake_mig(gpu: int, slot: int, total_mb: int = 4864, **kw: Any) -> dict[str, Any]:
    """A MIG instance (e.g. ``1g.5gb``) of GPU ``gpu`` in MIG slot ``slot``."""
    mig: dict[str, Any] = {
        "name": "NVIDIA A100-SXM4-40GB MIG 1g.5gb",
        "uuid": f"MIG-{gpu:04d}{slot:04d}-eeee-ffff-0000-111111111111",
        "total": total_mb * MB,
        "free": (total_mb - 13) * MB,
        "used": 13 * MB,
        "procs": [],
        "lost": False,
        "errors": {},
        "is_mig": True,
        "slot": slot,
    }
    mig.update(kw)
    return mig


def _raise(code: int) -> None:
    raise pynvml.NVMLError(code)  # the real mapping to NVMLError_<Name>


def make_pynvml(
    devices: list[dict[str, Any]],
    *,
    init_error: int | None = None,
    unsupported: Iterable[str] = (),
    missing: Iterable[str] = (),
    not_found: Iterable[str] = (),
) -> ModuleType:
    """A ``pynvml`` module over ``devices``. ``init_error``: an NVML code ``nvmlInit`` raises;
    ``unsupported`` / ``not_found``: calls that raise ``NotSupported`` / ``FunctionNotFound``
    everywhere; ``missing``: calls the module does not have (an older ``nvidia-ml-py``).

    ``mod.calls`` lists the calls made, in order; ``mod.devices`` is ``devices`` (mutable)."""
    unsupported, missing, not_found = set(unsupported), set(missing), set(not_found)
    mod = ModuleType("pynvml")
    calls: list[str] = []
    mod.calls = calls  # type: ignore[attr-defined]
    mod.devices = devices  # type: ignore[attr-defined]
    for name in dir(pynvml):  # the real constants and error classes
        if name.startswith(("NVML_", "NVMLError")) or name == "NVMLLibraryMismatchError":
            setattr(mod, name, getattr(pynvml, name))

    def api(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
            def wrapper(*args: Any) -> Any:
                calls.append(name)
                if name in unsupported:
                    _raise(pynvml.NVML_ERROR_NOT_SUPPORTED)
                if name in not_found:
                    _raise(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
                h = args[0] if args and isinstance(args[0], dict) else None
                if h is not None:
                    gpu = h.get("parent", h)
                    if gpu["lost"] or h["lost"]:
                        _raise(pynvml.NVML_ERROR_GPU_IS_LOST)
                    if name in h["errors"]:
                        _raise(h["errors"][name])
                    if h["is_mig"] and name in _NOT_ON_MIG:
                        _raise(pynvml.NVML_ERROR_NOT_SUPPORTED)
                return fn(*args)

            if name not in missing:
                setattr(mod, name, wrapper)
            return wrapper

        return deco

    @api("nvmlInit")
    def _init() -> None:
        if init_error is not None:
            _raise(init_error)

    @api("nvmlShutdown")
    def _shutdown() -> None:
        return None

    @api("nvmlDeviceGetCount")
    def _count() -> int:
        return len(devices)

    @api("nvmlDeviceGetHandleByIndex")
    def _handle(i: int) -> dict[str, Any]:
        if not 0 <= i < len(devices):
            _raise(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        dev = devices[i]
        if dev["no_permission"]:
            _raise(pynvml.NVML_ERROR_NO_PERMISSION)
        if "nvmlDeviceGetHandleByIndex" in dev["errors"]:
            _raise(dev["errors"]["nvmlDeviceGetHandleByIndex"])
        return dev

    @api("nvmlDeviceGetHandleByUUID")
    def _by_uuid(uuid: str) -> dict[str, Any]:
        for dev in devices:
            if dev["uuid"] == uuid and not dev["no_permission"]:
                return dev
            for mig in dev.get("mig") or []:
                if mig["uuid"] == uuid:
                    return _mig_handle(dev, mig)
        _raise(pynvml.NVML_ERROR_NOT_FOUND)
        raise AssertionError  # unreachable

    @api("nvmlDeviceGetName")
    def _name(h: dict[str, Any]) -> str:
        return str(h["name"])

    @api("nvmlDeviceGetUUID")
    def _uuid(h: dict[str, Any]) -> str:
        return str(h["uuid"])

    @api("nvmlDeviceGetMemoryInfo")
    def _mem(h: dict[str, Any]) -> Any:
        return SimpleNamespace(total=h["total"], free=h["free"], used=h["used"])

    @api("nvmlDeviceGetUtilizationRates")
    def _util(h: dict[str, Any]) -> Any:
        return SimpleNamespace(gpu=h["util"], memory=10)

    @api("nvmlDeviceGetTotalEccErrors")
    def _ecc(h: dict[str, Any], err_type: int, counter: int) -> int:
        assert (err_type, counter) == (1, 0)  # uncorrected, volatile
        return int(h["ecc"])

    @api("nvmlDeviceGetRetiredPages")
    def _retired(h: dict[str, Any], cause: int) -> list[int]:
        return list(h["retired"][cause])

    @api("nvmlDeviceGetRetiredPagesPendingStatus")
    def _pending(h: dict[str, Any]) -> int:
        return int(h["pending"])

    @api("nvmlDeviceGetRemappedRows")
    def _remapped(h: dict[str, Any]) -> tuple[int, int, int, int]:
        return tuple(h["remapped"])

    @api("nvmlDeviceGetPciInfo")
    def _pci(h: dict[str, Any]) -> Any:
        return SimpleNamespace(busId=h.get("parent", h)["busId"])

    def procs(h: dict[str, Any]) -> list[Any]:
        return [SimpleNamespace(pid=p, usedGpuMemory=m) for p, m in h["procs"]]

    api("nvmlDeviceGetComputeRunningProcesses_v3")(procs)
    api("nvmlDeviceGetComputeRunningProcesses_v2")(procs)
    api("nvmlDeviceGetComputeRunningProcesses")(procs)

    @api("nvmlDeviceGetMigMode")
    def _mig_mode(h: dict[str, Any]) -> list[int]:
        if h.get("mig") is None and not h.get("mig_capable"):
            _raise(pynvml.NVML_ERROR_NOT_SUPPORTED)  # a GPU without MIG (not A100/H100/...)
        on = pynvml.NVML_DEVICE_MIG_ENABLE if h.get("mig") is not None else 0
        return [on, on]

    @api("nvmlDeviceGetMaxMigDeviceCount")
    def _mig_max(h: dict[str, Any]) -> int:
        return int(h["mig_max"]) if h.get("mig") is not None else 0

    def _mig_handle(gpu: dict[str, Any], mig: dict[str, Any]) -> dict[str, Any]:
        mig["parent"] = gpu
        return mig

    @api("nvmlDeviceGetMigDeviceHandleByIndex")
    def _mig_by_index(h: dict[str, Any], index: int) -> dict[str, Any]:
        if h.get("mig") is None or not 0 <= index < int(h["mig_max"]):
            _raise(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        for mig in h["mig"]:
            if mig["slot"] == index:
                return _mig_handle(h, mig)
        _raise(pynvml.NVML_ERROR_NOT_FOUND)  # no instance in this slot
        raise AssertionError  # unreachable

    @api("nvmlSystemGetDriverVersion")
    def _driver() -> str:
        return "550.54.14"

    return mod
