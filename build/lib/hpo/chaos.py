"""Chaos mode (``hpo run --chaos``): realistic ways for a trial to die, on purpose.

Three parts, used by three processes:
- :func:`pick` (supervisor) draws whether a trial gets a fault, which, and when;
- :func:`call_with_fault` (worker) calls the objective so that the fault always happens, before
  the objective, while it runs (a timer interrupts it), or at its end if it finished first;
- :func:`inject` makes the calling process fail as the :class:`Fault` says.

So the whole path (worker, outcome channel, classification, tags) is exercised exactly as by a
real failure. The tests use the same faults (``hpo.testing``).
"""

from __future__ import annotations

import enum
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
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


#: A hang needs a deadline: chaos hangs are killed after this many seconds when the study sets
#: no ``timeout_per_trial``.
HANG_TIMEOUT_S = 5.0
#: A host-memory blow-up needs a limit: the worker's current RSS plus this, when the study sets
#: no ``max_host_mem_mb``.
MEM_HEADROOM_MB = 512


def pick(
    rng: random.Random, rate: float, names: Sequence[str] | None
) -> tuple[str | None, float | None]:
    """Whether the next trial gets a fault (probability ``rate``): ``(fault, delay_s)``.

    ``delay_s`` is None for a fault before the objective starts, else seconds into the trial.
    """
    if rate <= 0 or rng.random() >= rate:
        return None, None
    fault = rng.choice(list(names) if names else [f.value for f in Fault])
    delay = None if rng.random() < 0.5 else rng.uniform(0.0, 0.05)
    return fault, delay


class FaultReturn(BaseException):
    """Carries the value a fault returned (NAN) out of the objective, past its ``except``."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value


def call_with_fault(
    objective: Callable[[Any], Any], trial: Any, fault: str, delay_s: float | None
) -> Any:
    """Call ``objective(trial)`` so that ``fault`` always happens; raises :class:`FaultReturn`
    with the fault's value where the fault returns instead of killing the process."""
    if delay_s is None:
        raise FaultReturn(inject(fault))
    fired = False

    def on_alarm(*_: Any) -> None:
        nonlocal fired
        fired = True
        raise FaultReturn(inject(fault))

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(delay_s, 0.001))
    try:
        objective(trial)
    except BaseException:
        if fired:
            raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    raise FaultReturn(inject(fault))


def limits(
    fault: str | None,
    timeout_s: float | None,
    mem_mb: float | None,
    rss_mb: Callable[[], float],
) -> tuple[float | None, float | None]:
    """The trial's (timeout, host-memory limit): a chaos hang needs a deadline and a chaos
    memory blow-up a limit, when the study sets none (``rss_mb`` is the worker's current RSS)."""
    if fault == Fault.HANG.value and timeout_s is None:
        timeout_s = HANG_TIMEOUT_S
    if fault == Fault.HOST_OOM.value and mem_mb is None:
        mem_mb = rss_mb() + MEM_HEADROOM_MB
    return timeout_s, mem_mb
