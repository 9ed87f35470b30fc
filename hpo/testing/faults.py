"""Realistic ways for a trial to die, shared by chaos mode (``hpo run --chaos``) and the tests.

Each :class:`Fault` is injected inside the worker, either before the objective starts or while
it runs (a timer interrupts it), so the whole path — worker, outcome channel, classification,
tags — is exercised exactly as by a real failure.
"""

from __future__ import annotations

import enum
import os
import signal
import subprocess
import sys
import time
from typing import Any

ILLEGAL_ACCESS = (
    "CUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)
DEVICE_ASSERT = (
    "CUDA error: device-side assert triggered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)
CUDNN_FAILED = "cuDNN error: CUDNN_STATUS_EXECUTION_FAILED"
OOM_TEXT = (
    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 11.76 GiB of "
    "which 1.13 GiB is free. Including non-PyTorch memory, this process has 10.61 GiB memory in "
    "use. Of the allocated memory 9.87 GiB is allocated by PyTorch, and 512.00 MiB is reserved by "
    "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
    "for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
)


class Fault(str, enum.Enum):
    """A fault kind. The value is its name in ``chaos_faults`` and in the ``chaos_fault`` tag."""

    CUDA_ILLEGAL_ACCESS = "cuda_illegal_access"  # torch.AcceleratorError / RuntimeError text
    DEVICE_ASSERT = "device_assert"  # device-side assert text (sticky)
    CUDNN = "cudnn"  # cuDNN execution failure
    OOM = "oom"  # torch.OutOfMemoryError with the real allocator message
    RAISE = "raise"  # an ordinary bug: ValueError
    SIGSEGV = "sigsegv"  # a real segmentation fault (NULL dereference through ctypes)
    SIGKILL = "sigkill"  # the process is SIGKILLed (as by the kernel's OOM killer)
    EXIT = "exit"  # os._exit(7): the process vanishes without a result
    HANG = "hang"  # sleeps forever: needs timeout_per_trial
    HOST_OOM = "host_oom"  # allocates host memory without bound: needs max_host_mem_mb
    GRANDCHILD = "grandchild"  # leaves a grandchild in its own session, then dies
    NAN = "nan"  # the objective returns NaN

    def __str__(self) -> str:
        return self.value


def _cuda_error(text: str) -> BaseException:
    try:
        import torch

        accel = getattr(torch, "AcceleratorError", None)
        if accel is not None:
            try:
                return accel(text)
            except TypeError:
                pass
    except ImportError:
        pass
    return RuntimeError(text)


def _oom() -> BaseException:
    try:
        import torch

        return torch.OutOfMemoryError(OOM_TEXT)
    except (ImportError, AttributeError):
        return MemoryError(OOM_TEXT)


def inject(fault: Fault | str) -> Any:
    """Make the calling process fail as ``fault``. Returns only for NAN (returns the value)."""
    fault = Fault(fault)
    blocking = os.environ.get("CUDA_LAUNCH_BLOCKING", "0")
    print(
        f"[hpo chaos] injecting {fault.value} (CUDA_LAUNCH_BLOCKING={blocking})",
        file=sys.stderr,
        flush=True,
    )
    if fault is Fault.CUDA_ILLEGAL_ACCESS:
        raise _cuda_error(ILLEGAL_ACCESS)
    if fault is Fault.DEVICE_ASSERT:
        print(
            "/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: "
            "block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.",
            file=sys.stderr,
            flush=True,
        )
        raise _cuda_error(DEVICE_ASSERT)
    if fault is Fault.CUDNN:
        raise RuntimeError(CUDNN_FAILED)
    if fault is Fault.OOM:
        raise _oom()
    if fault is Fault.RAISE:
        raise ValueError("injected bug: invalid literal for int() with base 10: 'abc'")
    if fault is Fault.SIGSEGV:
        import ctypes

        ctypes.string_at(0)
    if fault is Fault.SIGKILL:
        os.kill(os.getpid(), signal.SIGKILL)
    if fault is Fault.EXIT:
        os._exit(7)
    if fault is Fault.HANG:
        while True:
            time.sleep(3600)
    if fault is Fault.HOST_OOM:
        hog = []
        while True:
            hog.append(bytearray(64 * 1024 * 1024))
            for i in range(0, len(hog[-1]), 4096):  # touch the pages so they are resident
                hog[-1][i] = 1
    if fault is Fault.GRANDCHILD:
        subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(3600)"], start_new_session=True
        )
        time.sleep(0.05)
        os._exit(9)
    if fault is Fault.NAN:
        return float("nan")
    raise AssertionError(f"unhandled fault {fault}")  # pragma: no cover
