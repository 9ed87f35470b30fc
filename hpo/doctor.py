"""``hpo doctor``: diagnose a training machine in one command.

Each check ends PASS, WARN, FAIL or SKIP with the reason and a hint. Checks that touch the GPU
(and the torch import itself, which can crash on broken CUDA libraries) run in a child process
(``python -m hpo.doctor --check NAME``) with a timeout, so a check that hangs, crashes or
corrupts the CUDA context is reported as that check's FAIL and the next check starts clean.
Host checks (WSL2, allocator settings, shared memory, disk) run in-process. The exit code is 1
if any check FAILed, else 0.

Order: torch, driver, cuda, gpu_memory, cudnn, transformer, alloc_conf, expandable_segments,
wsl, shm, disk.
"""

from __future__ import annotations

import argparse
import contextlib
import enum
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_GIB = 1024**3
_MIB = 1024**2
RESULT_MARK = "HPO_DOCTOR_RESULT "
ALLOC_ENV = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF")

REASON_CPU_BUILD = "torch is a CPU build (torch.version.cuda is None)"
REASON_NO_DEVICE = "no CUDA device: torch.cuda.is_available() is False"


class Status(str, enum.Enum):
    """Outcome of one check. Only FAIL makes ``hpo doctor`` exit non-zero."""

    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass
class CheckResult:
    """One line of the report. ``facts`` feed later checks and are not printed."""

    name: str
    status: Status
    detail: str
    hint: str = ""
    facts: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict[str, str]:
        return {
            "name": self.name,
            "status": self.status.value,
            "detail": self.detail,
            "hint": self.hint,
        }


# =============================================================================================
# Checks run in a child process (each gets a fresh interpreter and CUDA context)
# =============================================================================================
def _gpu_devices() -> list[int]:
    import torch

    return list(range(torch.cuda.device_count()))


def check_torch() -> CheckResult:
    import torch

    cuda = torch.version.cuda
    hip = getattr(torch.version, "hip", None)
    cudnn = torch.backends.cudnn.version() if cuda else None
    build = f"CUDA {cuda}" if cuda else (f"ROCm {hip}" if hip else "CPU build")
    detail = f"torch {torch.__version__} ({build})"
    if cuda:
        detail += f", cuDNN {cudnn if cudnn is not None else 'not found'}"
    facts = {"version": torch.__version__, "cuda": cuda, "cudnn": cudnn}
    return CheckResult("torch", Status.PASS, detail, facts=facts)


def check_driver() -> CheckResult:
    try:
        import pynvml
    except ImportError:
        return CheckResult(
            "driver",
            Status.SKIP,
            "pynvml is not installed: cannot read the driver version",
            "pip install nvidia-ml-py",
        )
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        return CheckResult(
            "driver",
            Status.SKIP,
            f"no NVIDIA driver: nvmlInit failed ({exc})",
            "on a GPU machine: install the NVIDIA driver (nvidia-smi must work)",
        )
    try:
        driver = _str(pynvml.nvmlSystemGetDriverVersion())
        cuda_int = int(pynvml.nvmlSystemGetCudaDriverVersion())
        count = int(pynvml.nvmlDeviceGetCount())
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()
    cuda = f"{cuda_int // 1000}.{(cuda_int % 1000) // 10}"
    return CheckResult(
        "driver",
        Status.PASS,
        f"NVIDIA driver {driver}, supports CUDA up to {cuda}; NVML sees {count} GPU(s)",
        facts={"driver": driver, "cuda": cuda, "gpus": count},
    )


def _str(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _arch_ok(cap: tuple[int, int], arch_list: list[str]) -> bool:
    """Whether this torch build has kernels for compute capability ``cap`` (SASS or PTX)."""
    if not arch_list:
        return True
    major, minor = cap
    for arch in arch_list:
        kind, _, num = arch.partition("_")
        digits = "".join(ch for ch in num if ch.isdigit())
        if len(digits) < 2:
            continue
        a_major, a_minor = int(digits[:-1]), int(digits[-1])
        if kind == "sm" and a_major == major and a_minor <= minor:
            return True
        if kind == "compute" and (a_major, a_minor) <= (major, minor):
            return True
    return False


def _cuda_preflight() -> CheckResult | None:
    import torch

    if torch.version.cuda is None:
        return CheckResult("", Status.SKIP, REASON_CPU_BUILD, facts={"cuda_available": False})
    if not torch.cuda.is_available():
        return CheckResult("", Status.SKIP, REASON_NO_DEVICE, facts={"cuda_available": False})
    return None


def check_cuda() -> CheckResult:
    import torch

    pre = _cuda_preflight()
    if pre is not None:
        pre.name = "cuda"
        return pre
    parts, bad = [], []
    for i in _gpu_devices():
        cap = torch.cuda.get_device_capability(i)
        name = torch.cuda.get_device_name(i)
        parts.append(f"cuda:{i} {name} (sm_{cap[0]}{cap[1]})")
        if not _arch_ok(cap, torch.cuda.get_arch_list()):
            bad.append(f"cuda:{i} sm_{cap[0]}{cap[1]}")
            continue
        x = torch.arange(1 << 20, device=f"cuda:{i}", dtype=torch.float32)
        total = float((x * 2).sum().item())
        torch.cuda.synchronize(i)
        expected = float((1 << 20) * ((1 << 20) - 1))
        if abs(total - expected) > expected * 1e-3:
            return CheckResult(
                "cuda",
                Status.FAIL,
                f"wrong result on cuda:{i}: {total} != {expected}",
                "the GPU computes wrong results: check it with nvidia-smi -q and the vendor tests",
                facts={"cuda_available": True},
            )
    facts = {"cuda_available": True, "device_count": len(parts)}
    if bad:
        return CheckResult(
            "cuda",
            Status.FAIL,
            f"torch {torch.__version__} has no kernels for {', '.join(bad)} "
            f"(built for {' '.join(torch.cuda.get_arch_list())})",
            "install a torch build for this GPU generation (a newer CUDA wheel)",
            facts=facts,
        )
    return CheckResult(
        "cuda", Status.PASS, "; ".join(parts) + "; a basic CUDA op works", facts=facts
    )


def check_gpu_memory() -> CheckResult:
    import torch

    pre = _cuda_preflight()
    if pre is not None:
        pre.name = "gpu_memory"
        return pre
    parts, busy = [], []
    for i in _gpu_devices():
        free, total = torch.cuda.mem_get_info(i)
        parts.append(f"cuda:{i} {free // _MIB} of {total // _MIB} MiB free")
        if free < 0.8 * total:
            busy.append(f"cuda:{i}")
    if busy:
        return CheckResult(
            "gpu_memory",
            Status.WARN,
            "; ".join(parts),
            f"other processes hold memory on {', '.join(busy)}: nvidia-smi shows which",
        )
    return CheckResult("gpu_memory", Status.PASS, "; ".join(parts))


def check_cudnn() -> CheckResult:
    import torch

    pre = _cuda_preflight()
    if pre is not None:
        pre.name = "cudnn"
        return pre
    if not torch.backends.cudnn.is_available():
        return CheckResult(
            "cudnn",
            Status.FAIL,
            "cuDNN is not available to this torch build",
            "reinstall torch with its bundled cuDNN (pip wheels ship it)",
        )
    for i in _gpu_devices():
        for benchmark in (False, True):
            with torch.backends.cudnn.flags(enabled=True, benchmark=benchmark):
                conv = torch.nn.Conv2d(3, 16, 3, padding=1).to(f"cuda:{i}")
                x = torch.randn(8, 3, 64, 64, device=f"cuda:{i}", requires_grad=True)
                y = conv(x)
                y.float().square().mean().backward()
                torch.cuda.synchronize(i)
                if x.grad is None or not bool(torch.isfinite(x.grad).all()):
                    return CheckResult(
                        "cudnn",
                        Status.FAIL,
                        f"conv2d backward on cuda:{i} gave non-finite gradients",
                        "update the driver; try cudnn_benchmark: false",
                    )
    return CheckResult(
        "cudnn",
        Status.PASS,
        f"cuDNN {torch.backends.cudnn.version()}: conv2d forward and backward work "
        f"(benchmark off and on) on {len(_gpu_devices())} GPU(s)",
    )


def check_transformer() -> CheckResult:
    import torch

    pre = _cuda_preflight()
    if pre is not None:
        pre.name = "transformer"
        return pre
    amp = (
        torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16
    )
    for i in _gpu_devices():
        dev = f"cuda:{i}"
        layer = torch.nn.TransformerEncoderLayer(
            d_model=64, nhead=4, dim_feedforward=128, batch_first=True
        ).to(dev)
        x = torch.randn(4, 16, 64, device=dev)
        layer(x).square().mean().backward()
        with torch.autocast("cuda", dtype=amp):
            layer(x).float().square().mean().backward()
        torch.cuda.synchronize(i)
        grads = [p.grad for p in layer.parameters() if p.grad is not None]
        if not grads or not all(bool(torch.isfinite(g).all()) for g in grads):
            return CheckResult(
                "transformer",
                Status.FAIL,
                f"a tiny TransformerEncoderLayer gave non-finite gradients on {dev}",
                "update the driver and torch; try amp: none",
            )
    return CheckResult(
        "transformer",
        Status.PASS,
        f"TransformerEncoderLayer forward and backward work (fp32 and {str(amp).split('.')[-1]} "
        f"autocast) on {len(_gpu_devices())} GPU(s)",
    )


def check_expandable_segments() -> CheckResult:
    """Run with both allocator variables set to ``expandable_segments:True`` (by the parent):
    a first allocation on every GPU, then what the allocator says it runs with."""
    import torch

    from hpo import allocator
    from hpo.failures import expandable_segments_failure

    pre = _cuda_preflight()
    if pre is not None:
        pre.name = "expandable_segments"
        return pre
    allocator.apply("expandable_segments:True")  # as a worker of hpo run does
    wsl = allocator.is_wsl()
    ok: list[str] = []
    off: list[str] = []
    for i in _gpu_devices():
        try:
            x = torch.empty(64 * _MIB, dtype=torch.uint8, device=f"cuda:{i}")
        except Exception as exc:
            if expandable_segments_failure(str(exc), wsl=wsl, expandable=True):
                return CheckResult(
                    "expandable_segments",
                    Status.WARN,
                    f"cuda:{i}: the first allocation fails with expandable segments under WSL2 "
                    f"({str(exc).splitlines()[0][:80]}; pytorch#192330)",
                    "hpo run restarts this GPU's workers without them (said once, recorded on "
                    "the study); a newer NVIDIA WSL driver (R615+) fixes it",
                    facts={"wsl_fallback": True},
                )
            raise
        in_effect = allocator.in_effect() or {}
        (ok if in_effect.get("expandable_segments") else off).append(f"cuda:{i}")
        del x
    if not off:
        return CheckResult(
            "expandable_segments",
            Status.PASS,
            f"expandable segments work on {', '.join(ok)} (allocator_settings and the allocated "
            "segments agree)",
        )
    return CheckResult(
        "expandable_segments",
        Status.WARN,
        f"PYTORCH_ALLOC_CONF=expandable_segments:True had no effect on {', '.join(off)}",
        "this driver/platform lacks the CUDA virtual memory API (e.g. WSL2 or an old driver): "
        "fragmentation can only be fought by recycling workers (recycle_every)",
    )


CHILD_CHECKS: dict[str, Callable[[], CheckResult]] = {
    "torch": check_torch,
    "driver": check_driver,
    "cuda": check_cuda,
    "gpu_memory": check_gpu_memory,
    "cudnn": check_cudnn,
    "transformer": check_transformer,
    "expandable_segments": check_expandable_segments,
}
CHILD_TIMEOUT_S: dict[str, float] = {
    "torch": 120.0,
    "driver": 30.0,
    "cuda": 120.0,
    "gpu_memory": 60.0,
    "cudnn": 180.0,
    "transformer": 180.0,
    "expandable_segments": 60.0,
}


def _child_main(name: str) -> int:
    try:
        result = CHILD_CHECKS[name]()
    except Exception as exc:
        text = f"{type(exc).__name__}: {exc}".strip().splitlines()
        result = CheckResult(name, Status.FAIL, " ".join(text)[:500], _hint_for(str(exc)))
    payload = {**result.to_dict(), "facts": result.facts}
    print(RESULT_MARK + json.dumps(payload, default=str), flush=True)
    return 0


def _hint_for(text: str) -> str:
    low = text.lower()
    if "out of memory" in low:
        return "the GPU is full: other processes hold its memory (nvidia-smi)"
    if "no kernel image" in low or "not compatible" in low:
        return "install a torch build compiled for this GPU generation"
    if "ecc" in low:
        return "hardware memory error: reset the GPU (nvidia-smi --gpu-reset) or take it out"
    if "cudnn" in low:
        return "cuDNN failed: update the driver; try cudnn_benchmark: false"
    if "driver" in low:
        return "the NVIDIA driver is too old for this torch build: update it"
    return "run the failing snippet by hand with CUDA_LAUNCH_BLOCKING=1 to see where it breaks"


def run_child(name: str, extra_env: dict[str, str] | None = None) -> CheckResult:
    """Run check ``name`` in ``python -m hpo.doctor --check NAME`` with its timeout."""
    import hpo

    env = dict(os.environ)
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    root = str(Path(hpo.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    env.update(extra_env or {})
    timeout = CHILD_TIMEOUT_S.get(name, 120.0)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hpo.doctor", "--check", name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return CheckResult(
            name,
            Status.FAIL,
            f"the check hung for {timeout:.0f} s and was killed",
            "a CUDA call that never returns points at the driver or the GPU: "
            "check nvidia-smi and dmesg (Xid errors)",
        )
    for line in reversed(out.splitlines()):
        if line.startswith(RESULT_MARK):
            data = json.loads(line[len(RESULT_MARK) :])
            return CheckResult(
                name, Status(data["status"]), data["detail"], data["hint"], data.get("facts", {})
            )
    tail = " | ".join(err.strip().splitlines()[-3:])[:500]
    if proc.returncode < 0:
        sig = signal.Signals(-proc.returncode).name
        what = f"the check's process died with {sig}"
    else:
        what = f"the check's process exited with code {proc.returncode} and no result"
    return CheckResult(name, Status.FAIL, f"{what}: {tail or 'no output'}", _hint_for(tail))


# =============================================================================================
# Host checks (in-process; no torch import)
# =============================================================================================
def _torch_version_tuple(version: str) -> tuple[int, int]:
    nums = version.split("+")[0].split(".")
    try:
        return int(nums[0]), int(nums[1])
    except (IndexError, ValueError):
        return (0, 0)


def check_alloc_conf(torch_version: str | None) -> CheckResult:
    values = {k: os.environ.get(k) for k in ALLOC_ENV}
    shown = "; ".join(f"{k}={v!r}" if v is not None else f"{k} unset" for k, v in values.items())
    supported = (
        torch_version is not None
        and _torch_version_tuple(torch_version) >= (2, 1)
        and sys.platform.startswith("linux")
    )
    support = (
        f"expandable segments supported (torch {torch_version}, Linux)"
        if supported
        else f"expandable segments not supported (torch {torch_version}, {sys.platform})"
    )
    facts = {"supported": supported}
    set_values = {v for v in values.values() if v is not None}
    if len(set_values) == 1 and None in values.values():
        return CheckResult(
            "alloc_conf",
            Status.WARN,
            f"{shown}; {support}",
            "set PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF to the same value: some torch "
            "versions read only one of them (pytorch#183387)",
            facts,
        )
    if len(set_values) > 1:
        return CheckResult(
            "alloc_conf",
            Status.WARN,
            f"{shown}; {support}",
            "the two variables disagree: give both the same value",
            facts,
        )
    wants = any(
        "expandable_segments:true" in (v or "").lower().replace(" ", "") for v in set_values
    )
    if wants and not supported:
        return CheckResult(
            "alloc_conf",
            Status.WARN,
            f"{shown}; {support}",
            "expandable_segments is requested but this torch/platform ignores it",
            facts,
        )
    return CheckResult("alloc_conf", Status.PASS, f"{shown}; {support}", facts=facts)


def check_wsl(proc_version: Path = Path("/proc/version")) -> CheckResult:
    try:
        text = proc_version.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return CheckResult("wsl", Status.PASS, f"not WSL ({sys.platform}, no /proc/version)")
    if "microsoft" in text.lower():
        return CheckResult(
            "wsl",
            Status.WARN,
            "WSL2 detected: " + text[:120],
            "under WSL2 NVML reports no per-process GPU memory, GPU resets are impossible, "
            "pinned memory is limited and /dev/shm is small; keep data on the Linux file system",
            {"wsl": True},
        )
    return CheckResult("wsl", Status.PASS, "not WSL: " + text[:80], facts={"wsl": False})


def check_shm(path: Path = Path("/dev/shm")) -> CheckResult:
    try:
        st = os.statvfs(path)
    except OSError as exc:
        return CheckResult(
            "shm",
            Status.WARN,
            f"{path} is missing ({exc.strerror})",
            "DataLoader workers share batches through /dev/shm: use num_workers=0 or mount it",
        )
    total = st.f_blocks * st.f_frsize
    free = st.f_bavail * st.f_frsize
    detail = f"{path}: {total / _GIB:.1f} GiB ({free / _GIB:.1f} GiB free)"
    if total < _GIB:
        return CheckResult(
            "shm",
            Status.WARN,
            detail + ", under 1 GiB",
            "DataLoader workers may die with 'bus error': docker run --shm-size=8g "
            "(or --ipc=host), or num_workers=0",
        )
    return CheckResult("shm", Status.PASS, detail)


def check_disk(run_dir: Path) -> CheckResult:
    path = Path(run_dir).resolve()
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    usage = shutil.disk_usage(probe)
    detail = f"{usage.free / _GIB:.1f} GiB free at {probe}"
    if usage.free < 100 * _MIB:
        return CheckResult(
            "disk",
            Status.FAIL,
            detail,
            "the run folder's disk is full: logs, the study database and checkpoints need room",
        )
    if usage.free < _GIB:
        return CheckResult("disk", Status.WARN, detail, "under 1 GiB free for logs and the study")
    return CheckResult("disk", Status.PASS, detail)


# =============================================================================================
# Orchestration
# =============================================================================================
def _skip(name: str, reason: str, hint: str = "") -> CheckResult:
    return CheckResult(name, Status.SKIP, reason, hint)


def run_checks(run_dir: Path) -> list[CheckResult]:
    """Run every check in order and return their results (never raises for a failed check)."""
    torch_r = run_child("torch")
    driver = run_child("driver")
    gpus = int(driver.facts.get("gpus", 0)) if driver.status is Status.PASS else 0
    torch_cuda = torch_r.facts.get("cuda")

    if torch_r.status is Status.PASS and torch_cuda is None and gpus:
        torch_r = CheckResult(
            "torch",
            Status.FAIL,
            torch_r.detail + f", but NVML sees {gpus} GPU(s)",
            "install a CUDA build of torch (see https://pytorch.org/get-started/locally/)",
            torch_r.facts,
        )
    if driver.status is Status.PASS and torch_cuda:
        drv = _torch_version_tuple(str(driver.facts.get("cuda", "0.0")))
        need = _torch_version_tuple(str(torch_cuda))
        if drv[0] < need[0]:
            driver = CheckResult(
                "driver",
                Status.FAIL,
                driver.detail + f", but torch was built for CUDA {torch_cuda}",
                f"update the NVIDIA driver to one supporting CUDA {torch_cuda}, or install a "
                f"torch build for CUDA {drv[0]}.x",
                driver.facts,
            )

    results = [torch_r, driver]
    if torch_r.status is Status.FAIL and "version" not in torch_r.facts:
        reason = "torch does not import (see the torch check)"
        gpu_names = ("cuda", "gpu_memory", "cudnn", "transformer")
        results += [_skip(n, reason) for n in gpu_names]
    elif torch_cuda is None:
        results += [
            _skip(n, REASON_CPU_BUILD) for n in ("cuda", "gpu_memory", "cudnn", "transformer")
        ]
    else:
        cuda = run_child("cuda")
        if cuda.status is Status.SKIP and gpus:
            cuda = CheckResult(
                "cuda",
                Status.FAIL,
                f"NVML sees {gpus} GPU(s) but {cuda.detail}",
                "CUDA_VISIBLE_DEVICES hides them, or the driver is too old for torch's CUDA "
                f"{torch_cuda}",
            )
        results.append(cuda)
        if cuda.facts.get("cuda_available"):
            results += [run_child(n) for n in ("gpu_memory", "cudnn", "transformer")]
        else:
            reason = cuda.detail if cuda.status is Status.SKIP else "CUDA is not available"
            results += [_skip(n, reason) for n in ("gpu_memory", "cudnn", "transformer")]

    alloc = check_alloc_conf(torch_r.facts.get("version"))
    results.append(alloc)
    if not alloc.facts.get("supported"):
        results.append(_skip("expandable_segments", "not supported by this torch or platform"))
    elif not results[2].facts.get("cuda_available"):
        reason = results[2].detail if results[2].status is Status.SKIP else "CUDA is not available"
        results.append(_skip("expandable_segments", reason))
    else:
        on = {k: "expandable_segments:True" for k in ALLOC_ENV}
        results.append(run_child("expandable_segments", on))

    results += [check_wsl(), check_shm(), check_disk(run_dir)]
    return results


_STYLE = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "bold red", Status.SKIP: "dim"}


def main(as_json: bool = False, run_dir: Path = Path("runs")) -> int:
    """Print the report (a table, or a JSON list with ``--json``); 1 if any check FAILed."""
    results = run_checks(run_dir)
    if as_json:
        print(json.dumps([r.to_dict() for r in results], indent=2))
    else:
        from hpo.report import print_table

        rows = [[r.name, r.status.value, r.detail, r.hint] for r in results]
        styled = [
            [r.name, f"[{_STYLE[r.status]}]{r.status.value}[/]", r.detail, r.hint] for r in results
        ]
        print_table("hpo doctor", ["check", "status", "detail", "hint"], rows, markup=styled)
    return 1 if any(r.status is Status.FAIL for r in results) else 0


def _cli(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hpo.doctor", description=__doc__)
    parser.add_argument("--check", choices=sorted(CHILD_CHECKS), help="run one child check")
    parser.add_argument("--json", action="store_true", help="print a JSON list")
    parser.add_argument("--run-dir", type=Path, default=Path("runs"), help="where logs go")
    args = parser.parse_args(argv)
    if args.check:
        return _child_main(args.check)
    return main(as_json=args.json, run_dir=args.run_dir)


if __name__ == "__main__":
    sys.exit(_cli())
