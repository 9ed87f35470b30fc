"""Module-level objectives for tests, demos and benchmarks (importable by spawned workers)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

import optuna

from hpo.testing.faults import inject


def null_objective(trial: optuna.Trial) -> float:
    """The cheapest real objective: one suggestion, no work (overhead benchmarks)."""
    return trial.suggest_float("x", -10.0, 10.0)


def quadratic(trial: optuna.Trial, sleep_s: float = 0.0) -> float:
    """A small real objective with two parameters and intermediate reports."""
    x = trial.suggest_float("x", -10.0, 10.0)
    y = trial.suggest_int("y", -5, 5)
    for step in range(3):
        trial.report((x - 2) ** 2 + y * y + 1.0 / (step + 1), step)
        if sleep_s:
            time.sleep(sleep_s / 3)
    return (x - 2) ** 2 + y * y


def fault_objective(
    trial: optuna.Trial,
    fault: str | None = None,
    fault_trials: Sequence[int] = (),
    first_attempt_only: bool = True,
    sleep_s: float = 0.0,
    prune_trials: Sequence[int] = (),
) -> float:
    """Returns normally except on ``fault_trials`` (by trial number), where it fails as ``fault``.

    Before failing it writes a user attr and an intermediate value, which the runner must keep.
    With ``first_attempt_only``, a retry (a trial carrying ``retry_of``) does not fail again.
    """
    x = trial.suggest_float("x", 0.0, 1.0)
    trial.set_user_attr("progress", "started")
    trial.report(x, 0)
    if sleep_s:
        time.sleep(sleep_s)
    if trial.number in prune_trials:
        raise optuna.TrialPruned("pruned on purpose")
    retried = "retry_of" in trial.user_attrs
    if fault and trial.number in fault_trials and not (first_attempt_only and retried):
        value = inject(fault)
        return float(value)
    return x


def always_raises(trial: optuna.Trial) -> float:
    trial.suggest_float("x", 0.0, 1.0)
    raise ValueError("bad config value: expected a positive learning rate")


def returns_bad(trial: optuna.Trial, kind: str = "none") -> object:
    trial.suggest_float("x", 0.0, 1.0)
    return {"none": None, "str": "0.5", "nan": math.nan, "inf": math.inf}[kind]


def spawns_grandchild(trial: optuna.Trial, pid_file: str, sleep_s: float = 60.0) -> float:
    """Leaves a grandchild (same process group) running and then hangs: for orphan tests."""
    trial.suggest_float("x", 0.0, 1.0)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    with open(pid_file, "a") as fh:
        fh.write(f"{os.getpid()} {child.pid}\n")
    time.sleep(sleep_s)
    return 0.0


def _pid_after(sleep_s: float) -> int:
    time.sleep(sleep_s)
    return os.getpid()


def _running(pid: int) -> bool:
    try:
        import psutil

        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except Exception:
        return False


def joblib_pool_and_leak(
    trial: optuna.Trial, pid_file: str, n_jobs: int = 2, fail_trials: Sequence[int] = ()
) -> float:
    """Runs tasks on joblib's reusable (loky) pool, then leaves a plain ``sleep`` behind; fails
    after that on ``fail_trials``. User attrs: ``pool_pids`` (the pool processes that ran the
    tasks), ``sleep_pid``, and ``earlier_sleeps_alive`` (sleeps of earlier trials still running
    when this one started: the worker must have killed them)."""
    from joblib import Parallel, delayed

    x = trial.suggest_float("x", 0.0, 1.0)
    path = os.path.abspath(pid_file)
    earlier = []
    if os.path.exists(path):
        with open(path) as fh:
            earlier = [int(line.split()[1]) for line in fh if line.strip()]
    trial.set_user_attr("earlier_sleeps_alive", [p for p in earlier if _running(p)])
    tasks = (delayed(_pid_after)(0.05) for _ in range(4 * n_jobs))
    trial.set_user_attr("pool_pids", sorted(set(Parallel(n_jobs=n_jobs)(tasks))))
    leak = subprocess.Popen(["sleep", "3600"])
    with open(path, "a") as fh:
        fh.write(f"{os.getpid()} {leak.pid}\n")
    trial.set_user_attr("sleep_pid", leak.pid)
    if trial.number in fail_trials:
        raise ValueError("failed on purpose after using the pool")
    return x


def holds_the_gil(trial: optuna.Trial, pid_file: str) -> float:
    """Leaves a grandchild, then blocks in C while holding the GIL (a hung extension)."""
    import ctypes

    trial.suggest_float("x", 0.0, 1.0)
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(3600)"], start_new_session=True
    )
    with open(pid_file, "a") as fh:
        fh.write(f"{os.getpid()} {child.pid}\n")
    ctypes.PyDLL(None).sleep(3600)  # libc sleep through PyDLL: the GIL stays held
    return 0.0


def sets_runner_named_attrs(trial: optuna.Trial, fail: bool = True) -> float:
    """Sets user attributes whose names the runner also uses, then fails (or returns 1.0):
    the runner must leave the objective's values alone."""
    trial.suggest_float("x", 0.0, 1.0)
    for key in ("attempt", "device", "host", "failure_class", "cuda_error"):
        trial.set_user_attr(key, f"mine:{key}")
    if fail:
        raise ValueError("the objective failed on purpose")
    return 1.0


def always_crashes(trial: optuna.Trial, how: str = "sigsegv") -> float:
    """Dies the same way on every trial, after its first suggestion (a systematic crash)."""
    trial.suggest_float("x", 0.0, 1.0)
    inject(how)
    return 0.0


def always_cuda_error(
    trial: optuna.Trial, text: str = "CUDA error: an illegal instruction was encountered"
) -> float:
    """Raises a CUDA error on every trial, as a driver that cannot run the first backward pass."""
    trial.suggest_float("lr", 1e-5, 1e-2, log=True)
    try:
        import torch

        raise torch.AcceleratorError(text)
    except (ImportError, AttributeError, TypeError):
        raise RuntimeError(text) from None


def returns_a_pair(trial: optuna.Trial) -> tuple[float, float]:
    """A multi-objective objective run in a study with one direction."""
    x = trial.suggest_float("x", 0.0, 1.0)
    return x, 1.0 - x


def suggests_slowly(trial: optuna.Trial, n: int = 40, sleep_s: float = 0.05) -> float:
    """Spends its time inside ``suggest_*`` round trips, so a supervisor killed meanwhile dies
    in the middle of a call."""
    total = 0.0
    for i in range(n):
        total += trial.suggest_float(f"p{i}", 0.0, 1.0)
        time.sleep(sleep_s)
    return total


def raises_on_first_trials(trial: optuna.Trial, texts: Sequence[str] = ()) -> float:
    """Trial ``i`` (for each text) raises ``RuntimeError(texts[i])``; later trials complete."""
    x = trial.suggest_float("x", 0.0, 1.0)
    if trial.number < len(texts):
        text = texts[trial.number]
        if text.startswith("CUDA error"):
            import torch

            raise torch.AcceleratorError(text)
        raise RuntimeError(text)
    return x


def binh_korn(trial: optuna.Trial) -> tuple[float, float]:
    """Optuna's constrained multi-objective example (Binh and Korn, as in ``NSGAIISampler``'s
    docs): two objectives to minimise; the constraint values are kept as a user attr."""
    x = trial.suggest_float("x", 0, 5)
    y = trial.suggest_float("y", 0, 3)
    c0 = (x - 5) ** 2 + y**2 - 25
    c1 = -((x - 8) ** 2) - (y + 3) ** 2 + 7.7
    trial.set_user_attr("constraint", (c0, c1))
    return 4 * x**2 + 4 * y**2, (x - 5) ** 2 + (y - 5) ** 2


def binh_korn_constraints(trial: optuna.trial.FrozenTrial) -> Sequence[float]:
    """The example's ``constraints_func``: values <= 0 are satisfied."""
    return trial.user_attrs["constraint"]


def constraints_raising(trial: optuna.trial.FrozenTrial) -> Sequence[float]:
    """A buggy constraints function: it raises on even trial numbers."""
    if trial.number % 2 == 0:
        raise KeyError("no constraint for this trial")
    return trial.user_attrs["constraint"]


def constraints_scalar(trial: optuna.trial.FrozenTrial) -> float:
    """A buggy constraints function: it returns one number, not a sequence."""
    return float(trial.user_attrs["constraint"][0])


def logs_like_lightning(trial: optuna.Trial) -> float:
    """Logs one line through a library that, like Lightning (``lightning/__init__.py``), gives
    its top logger its own stream handler and leaves it propagating; and one line through a
    logger nobody configured, as objectives do."""
    import logging

    top = logging.getLogger("lightning_like")
    if not top.handlers:
        top.setLevel(logging.INFO)
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        top.addHandler(handler)
    logging.getLogger("lightning_like.trainer").info("library line of trial %d", trial.number)
    logging.getLogger("my_objective").info("objective line of trial %d", trial.number)
    return trial.suggest_float("x", 0.0, 1.0)


#: A real WSL2 kernel's /proc/version (pytorch#192330's machine).
WSL2_PROC_VERSION = (
    "Linux version 6.18.33.2-microsoft-standard-WSL2 (root@a7c1b5f7d3e2) (gcc (GCC) 11.2.0, "
    "GNU ld (GNU Binutils) 2.37) #1 SMP PREEMPT_DYNAMIC Tue Jul 29 18:20:56 UTC 2026\n"
)


def wsl2_expandable(trial: optuna.Trial, proc_version: str) -> float:
    """A worker on WSL2 (``proc_version``: a file with a WSL2 kernel string, read instead of
    /proc/version) whose first allocation fails under expandable segments as in pytorch#192330,
    with torch's text; with the allocator really running without them, the trial completes."""
    from pathlib import Path

    from hpo import allocator

    allocator.PROC_VERSION = Path(proc_version)
    x = trial.suggest_float("x", 0.0, 1.0)
    if (allocator.in_effect() or {}).get("expandable_segments"):
        raise RuntimeError("CUDA driver error: unknown error")
    return x


def cuda_error_on_device(
    trial: optuna.Trial,
    device: str = "0",
    text: str = "CUDA error: an illegal memory access was encountered",
    sleep_s: float = 0.0,
) -> float:
    """Raises a sticky CUDA error on every trial its worker runs pinned to GPU ``device``
    (``HPO_DEVICE_INDEX``), as a GPU gone bad; completes elsewhere, after ``sleep_s``."""
    x = trial.suggest_float("x", 0.0, 1.0)
    if os.environ.get("HPO_DEVICE_INDEX") == device:
        raise RuntimeError(text)
    time.sleep(sleep_s)
    return x


_KEPT: list[Any] = []  # what leaks_memory keeps alive across trials, as a leaking objective would


def leaks_memory(trial: optuna.Trial, rss_mb: int = 0, gpu_mb: int = 0) -> float:
    """Leak ``rss_mb`` of host memory (touched, so it is resident) and ``gpu_mb`` of simulated
    GPU memory per trial, into a module global that outlives the trial (the bug class
    :mod:`hpo.growth` recycles on). Records the worker's pid."""
    trial.set_user_attr("pid", os.getpid())
    x = trial.suggest_float("x", 0.0, 1.0)
    if rss_mb:
        _KEPT.append(bytearray(b"\x01" * (rss_mb << 20)))
    if gpu_mb:
        from hpo.devices import simulated

        hold = simulated.allocate(gpu_mb)
        hold.__enter__()
        _KEPT.append(hold)
    return x
