"""The CUDA caching allocator's settings: what workers are given, what is in effect, and the one
platform where expandable segments break.

Mechanism only, and torch is never imported here: :func:`in_effect` and :func:`apply` use the
torch a worker has already loaded (``sys.modules``), so the supervisor and ``hpo doctor`` can
import this module for free.

- Both ``PYTORCH_ALLOC_CONF`` and ``PYTORCH_CUDA_ALLOC_CONF`` are set to the same value (torch
  2.9.1 ignored the new name alone for expandable segments, pytorch#183387).
- They must be in the environment before torch is imported: a CUDA build parses them when the
  library loads, so the forkserver (which preloads torch) gets them in its own environment, and
  each worker also applies its value explicitly (:func:`apply`), which is how a worker started
  from that forkserver can run *without* expandable segments after the WSL2 fallback.
- Expandable segments fail outright on WSL2 with GPUs that advertise GPUDirect RDMA with CUDA
  VMM (pytorch#192330): the first allocation raises ``CUDA driver error: unknown error``
  (``cuMemSetAccess`` returns ``CUDA_ERROR_UNKNOWN``). The signature is in the rules table
  (:func:`hpo.failures.expandable_segments_failure`) and the verdict in the policy; workers
  report the allocator in effect and whether this is WSL (:func:`is_wsl`), and the runner
  then restarts that GPU's workers without expandable segments.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import Any

ENV_NAMES = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
WSL_FALLBACK = (
    "expandable segments fail under WSL2 (pytorch#192330): its workers restart without them"
)
EXPANDABLE = "expandable_segments:True"


def merge(existing: str | None, expandable: bool = True) -> str:
    """The user's allocator config with expandable segments added (``expandable``) or removed.

    A user's own ``expandable_segments`` or ``backend:cudaMallocAsync`` choice is kept when
    ``expandable`` is true; when false, any ``expandable_segments`` option is dropped and
    ``expandable_segments:False`` appended (the fallback overrides the user's request)."""
    parts = [p.strip() for p in (existing or "").split(",") if p.strip()]
    if expandable:
        if any(p.startswith("expandable_segments") or "cudaMallocAsync" in p for p in parts):
            return ",".join(parts)
        return ",".join([*parts, EXPANDABLE])
    parts = [p for p in parts if not p.startswith("expandable_segments")]
    return ",".join([*parts, "expandable_segments:False"])


def env(existing: str | None, expandable: bool = True) -> dict[str, str]:
    """Both variable names set to :func:`merge`'s value."""
    value = merge(existing, expandable)
    return {name: value for name in ENV_NAMES}


def user_value(*sources: Any) -> str | None:
    """The first allocator config found in ``sources`` (mappings), either name, CUDA name first."""
    for name in ENV_NAMES:
        for src in sources:
            if src.get(name):
                return str(src[name])
    return None


def _torch() -> Any:
    return sys.modules.get("torch")


def apply(conf: str) -> bool:
    """Make ``conf`` the allocator settings of this process, if torch is already loaded (a
    worker forked from a forkserver that parsed another value at import). True if applied.

    Must run before the first CUDA allocation: expandable segments cannot change afterwards."""
    torch = _torch()
    setter = getattr(getattr(torch, "_C", None), "_accelerator_setAllocatorSettings", None)
    if setter is None:  # torch < 2.9: the CUDA-only spelling
        setter = getattr(getattr(torch, "cuda", None), "memory", None)
        setter = getattr(setter, "_set_allocator_settings", None)
    if setter is None:
        return False
    try:
        setter(conf)
        return True
    except Exception:
        return False


def in_effect() -> dict[str, Any] | None:
    """What the allocator of this process runs with, without initialising CUDA; ``None`` where
    torch is not loaded. ``settings`` is the string torch parsed; ``backend`` is ``native`` or
    ``cudaMallocAsync``; ``expandable_segments`` is read from the CUDA allocator's own snapshot
    once CUDA is initialised (its segments say whether they really are expandable), else from
    the parsed settings."""
    torch = _torch()
    if torch is None:
        return None
    out: dict[str, Any] = {}
    getter = getattr(torch._C, "_accelerator_getAllocatorSettings", None)
    if getter is not None:
        try:
            out["settings"] = str(getter())
        except Exception:
            pass
    try:
        out["backend"] = str(torch._C._cuda_getAllocatorBackend())
    except Exception:
        pass
    expandable: bool | None = None
    if "settings" in out:
        expandable = _parse_expandable(out["settings"])
    try:
        if torch.cuda.is_initialized():
            snap = torch.cuda.memory._snapshot()
            settings = snap.get("allocator_settings") or {}
            if "expandable_segments" in settings:
                expandable = bool(settings["expandable_segments"])
            segments = snap.get("segments") or []
            if segments:
                out["segments_expandable"] = all(s.get("is_expandable") for s in segments)
    except Exception:
        pass
    out["expandable_segments"] = expandable
    return out


def _parse_expandable(settings: str) -> bool | None:
    for part in settings.split(","):
        key, _, value = part.strip().partition(":")
        if key == "expandable_segments":
            return value.strip().lower() == "true"
    return None


#: Where the kernel says what it is (a test's fake WSL2 kernel string replaces it).
PROC_VERSION = Path("/proc/version")


def is_wsl(proc_version: Path | None = None, release: str | None = None) -> bool:
    """True under WSL (its kernel names Microsoft: ``6.18.33.2-microsoft-standard-WSL2``)."""
    texts = [platform.release() if release is None else release]
    try:
        texts.append((proc_version or PROC_VERSION).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        pass
    return any("microsoft" in t.lower() or "wsl" in t.lower() for t in texts)
