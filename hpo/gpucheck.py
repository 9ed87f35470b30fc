"""``make gpu-check`` (``python -m hpo.gpucheck``): the acceptance run for a real GPU.

In at most ten minutes on one GPU it runs six steps, each in its own process, and writes one
JSON verdict (``verdict.json``) and a readable summary (``summary.txt``) into a fresh folder
(default ``runs/gpu-check/<time>``, printed at the end):

====================  ==========================================================================
step                  passes when
====================  ==========================================================================
``pytest``            ``pytest -m gpu`` on the test files holding ``gpu`` tests: exit 0, none
                      failed, at least one ran (a GPU test skipped on a GPU machine is a finding)
``doctor``            ``hpo doctor --json``: no check FAILed, and the GPU checks (cuda,
                      gpu_memory, cudnn, transformer, expandable_segments) did not skip
``probe``             one trial of :func:`hpo.testing.gpu_objectives.probe`: COMPLETE, CUDA's UUID
                      is the one hpo pinned (NVML's), expandable segments in effect, and NVML's
                      memory for the worker's pid at least ``torch.cuda.max_memory_reserved``
``device_assert``     a real out-of-bounds index on a CUDA tensor: the trial FAILs as
                      ``cuda_context_corrupted`` (sticky), its worker is recycled, and its retry
                      (a fresh process) ends COMPLETE
``oom``               ``torch.empty(1 << 40, device="cuda")``: the trial ends PRUNED as ``oom``
``criteria``          the criteria task with the tiny BERT, 12 trials, 4 slots on one GPU,
                      ``trials_per_gpu: auto``, bf16 where native: every trial COMPLETE, 0 OOMs,
                      and at least 2 trials running at once
====================  ==========================================================================

The whole verdict is ``pass`` only if every step passed; the exit code is then 0, else 1 (2 for
bad arguments). On a machine without a GPU nothing runs: one line says why, and the exit code is
0. It never resets a GPU (the studies leave ``allow_gpu_reset`` off) and it installs nothing: it
runs with the Python that runs it, and that Python's torch.

The judges (``judge_*``) and :func:`overall` are pure functions of what the steps left (exit
codes, the trials in the storage, the event log), so they are tested from tables on CPU.
"""

from __future__ import annotations

import argparse
import datetime
import enum
import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from hpo import attrs
from hpo.errors import ConfigError, ExitCode

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial

BUDGET_S = 600.0
#: The most each step may take (the run stops each at what is left of :data:`BUDGET_S`).
CAPS_S: Mapping[str, float] = {
    "pytest": 150.0,
    "doctor": 90.0,
    "probe": 60.0,
    "device_assert": 75.0,
    "oom": 60.0,
    "criteria": 240.0,
}
STEPS: tuple[str, ...] = tuple(CAPS_S)
GPU_STEPS = ("probe", "device_assert", "oom", "criteria")
DOCTOR_GPU_CHECKS = ("cuda", "gpu_memory", "cudnn", "transformer", "expandable_segments")
CRITERIA_TRIALS = 12
CRITERIA_SLOTS = 4
PROBE_KEY = "gpucheck:probe"  # hpo.testing.gpu_objectives.PROBE (not imported: product code)
OBJECTIVES = "hpo.testing.gpu_objectives"


class Verdict(str, enum.Enum):
    """A step's verdict. The whole run passes only if every step is PASS."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


@dataclass
class StepResult:
    """One step: its verdict, one line saying why, and the figures it was judged on."""

    name: str
    verdict: Verdict
    reason: str
    figures: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "verdict": self.verdict.value}


def overall(results: Sequence[StepResult]) -> tuple[Verdict, str]:
    """PASS only if every step passed; otherwise FAIL, naming the steps that did not."""
    if not results:
        return Verdict.FAIL, "no step ran"
    bad = [r for r in results if r.verdict is not Verdict.PASS]
    if not bad:
        return Verdict.PASS, f"all {len(results)} steps passed"
    return Verdict.FAIL, "; ".join(f"{r.name} {r.verdict.value}: {r.reason}" for r in bad)


# =============================================================================================
# Is there a GPU at all? (cheap: NVML only, no torch, no CUDA context)
# =============================================================================================
def no_gpu_reason(
    environ: Mapping[str, str] | None = None, proc_gpus: Path = Path("/proc/driver/nvidia/gpus")
) -> str | None:
    """Why this machine has no GPU to check, or ``None`` when it has one."""
    env = os.environ if environ is None else environ
    if env.get("CUDA_VISIBLE_DEVICES") is not None and not env["CUDA_VISIBLE_DEVICES"].strip():
        return "CUDA_VISIBLE_DEVICES is empty: no GPU is visible to this process"
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            count = int(pynvml.nvmlDeviceGetCount())
        finally:
            pynvml.nvmlShutdown()
        return None if count else "NVML sees 0 GPUs"
    except Exception as exc:
        why = f"NVML: {exc}" if str(exc) else f"NVML: {type(exc).__name__}"
    # NVML itself may be what is broken on a GPU machine: then the steps say so, failing.
    if proc_gpus.is_dir() and any(proc_gpus.iterdir()):
        return None
    return f"no NVIDIA GPU on this machine ({why})"


# =============================================================================================
# Pure helpers and judges
# =============================================================================================
def max_concurrency(intervals: Iterable[tuple[float, float]]) -> int:
    """The most intervals ``(start, end)`` open at one instant (an end before a start at a tie)."""
    edges = sorted((t, d) for s, e in intervals for t, d in ((s, 1), (e, -1)))
    best = now = 0
    for _, delta in edges:
        now += delta
        best = max(best, now)
    return best


def run_intervals(trials: Sequence[FrozenTrial]) -> list[tuple[float, float]]:
    """When each finished trial's objective really ran: ``[complete - duration_s, complete]``.

    ``datetime_start`` is when the trial was asked, which with ``trials_per_gpu: auto`` may be
    long before it was placed on a GPU; ``hpo:duration_s`` is the objective's own wall time."""
    out = []
    for t in trials:
        if t.datetime_complete is None:
            continue
        end = t.datetime_complete.timestamp()
        duration = t.user_attrs.get(attrs.DURATION_S)
        if duration is None and t.datetime_start is not None:
            duration = end - t.datetime_start.timestamp()
        if duration is not None:
            out.append((end - float(duration), end))
    return out


def _state(t: FrozenTrial) -> str:
    return str(t.state.name)


def _states(trials: Sequence[FrozenTrial]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for t in trials:
        counts[_state(t)] = counts.get(_state(t), 0) + 1
    return counts


def judge_pytest(rc: int, counts: Mapping[str, int] | None, detail: str = "") -> StepResult:
    """``counts``: tests, failures, errors, skipped (from the JUnit XML); ``None`` if none."""
    figures: dict[str, Any] = {"exit_code": rc, **(counts or {})}
    if counts is None:
        return StepResult("pytest", Verdict.FAIL, f"pytest wrote no report (exit {rc}) {detail}")
    ran = counts["tests"] - counts["skipped"]
    passed = ran - counts["failures"] - counts["errors"]
    figures["passed"] = passed
    if rc != 0 or counts["failures"] or counts["errors"]:
        why = f"{counts['failures']} failed, {counts['errors']} errors (exit {rc}) {detail}"
        return StepResult("pytest", Verdict.FAIL, why.strip(), figures)
    if ran == 0:
        why = f"every gpu test skipped on a GPU machine {detail}".strip()
        return StepResult("pytest", Verdict.FAIL, why, figures)
    skipped = f", {counts['skipped']} skipped" if counts["skipped"] else ""
    return StepResult("pytest", Verdict.PASS, f"{passed} gpu tests passed{skipped}", figures)


def judge_doctor(rc: int, checks: Sequence[Mapping[str, str]] | None) -> StepResult:
    if checks is None:
        return StepResult("doctor", Verdict.FAIL, f"hpo doctor --json printed no JSON (exit {rc})")
    status = {c["name"]: c["status"] for c in checks}
    figures: dict[str, Any] = {"exit_code": rc, "checks": status}
    failed = [f"{c['name']}: {c['detail']}" for c in checks if c["status"] == "FAIL"]
    if failed:
        return StepResult("doctor", Verdict.FAIL, "FAIL " + "; ".join(failed), figures)
    skipped = [n for n in DOCTOR_GPU_CHECKS if status.get(n, "SKIP") == "SKIP"]
    if skipped:
        why = "GPU checks skipped on a GPU machine: " + ", ".join(skipped)
        return StepResult("doctor", Verdict.FAIL, why, figures)
    if rc != 0:
        return StepResult("doctor", Verdict.FAIL, f"hpo doctor exited {rc}", figures)
    warned = [n for n, s in status.items() if s == "WARN"]
    extra = f" (WARN: {', '.join(warned)})" if warned else ""
    return StepResult("doctor", Verdict.PASS, f"{len(status)} checks, none failed{extra}", figures)


def _one_trial(name: str, rc: int, trials: Sequence[FrozenTrial]) -> FrozenTrial | StepResult:
    if not trials:
        return StepResult(name, Verdict.FAIL, f"the study holds no trial (hpo run exited {rc})")
    return trials[0]


def judge_probe(rc: int, trials: Sequence[FrozenTrial]) -> StepResult:
    first = _one_trial("probe", rc, trials)
    if isinstance(first, StepResult):
        return first
    facts = dict(first.user_attrs.get(PROBE_KEY) or {})
    alloc = facts.get("allocator") or first.user_attrs.get(attrs.ALLOCATOR) or {}
    cuda_uuid = _bare(facts.get("cuda_uuid"))
    nvml_uuid = _bare(facts.get("nvml_uuid") or facts.get("pinned_uuid"))
    nvml_mb, reserved_mb = facts.get("nvml_process_mb"), facts.get("max_memory_reserved_mb")
    figures = {
        "state": _state(first),
        "exit_code": rc,
        "device_name": facts.get("device_name"),
        "capability": facts.get("capability"),
        "torch": facts.get("torch"),
        "torch_cuda": facts.get("torch_cuda"),
        "bf16_native": facts.get("bf16_native"),
        "allocator_backend": alloc.get("backend"),
        "allocator_settings": alloc.get("settings"),
        "expandable_segments": alloc.get("expandable_segments"),
        "segments_expandable": alloc.get("segments_expandable"),
        "cuda_uuid": facts.get("cuda_uuid"),
        "nvml_uuid": facts.get("nvml_uuid"),
        "pinned_uuid": facts.get("pinned_uuid"),
        "nvml_process_mb": nvml_mb,
        "max_memory_reserved_mb": reserved_mb,
        "overhead_mb": round(nvml_mb - reserved_mb, 1) if nvml_mb and reserved_mb else None,
        "nvml_note": facts.get("nvml_error"),
    }
    problems = []
    if _state(first) != "COMPLETE" or not facts:
        msg = first.user_attrs.get(attrs.ERROR_MSG, "")
        return StepResult("probe", Verdict.FAIL, f"probe trial {_state(first)} {msg}", figures)
    if not cuda_uuid or cuda_uuid != nvml_uuid:
        problems.append(f"CUDA's device UUID {cuda_uuid} is not the pinned one {nvml_uuid}")
    if alloc.get("expandable_segments") is not True:
        problems.append(f"expandable segments not in effect (allocator: {alloc or 'unknown'})")
    if nvml_mb is not None and reserved_mb is not None and nvml_mb < reserved_mb:
        problems.append(f"NVML's {nvml_mb} MB for the pid < max_memory_reserved {reserved_mb} MB")
    if problems:
        return StepResult("probe", Verdict.FAIL, "; ".join(problems), figures)
    mem = (
        f"NVML {nvml_mb} MB >= reserved {reserved_mb} MB"
        if nvml_mb is not None
        else f"NVML per-process memory unavailable ({facts.get('nvml_error')})"
    )
    why = f"UUIDs agree, {alloc.get('backend')} allocator with expandable segments, {mem}"
    return StepResult("probe", Verdict.PASS, why, figures)


def _bare(uuid: Any) -> str | None:
    if not uuid:
        return None
    text = str(uuid).strip().lower()
    return text[4:] if text.startswith(("gpu-", "mig-")) else text


def judge_device_assert(
    rc: int, trials: Sequence[FrozenTrial], events: Sequence[Mapping[str, Any]]
) -> StepResult:
    first = _one_trial("device_assert", rc, trials)
    if isinstance(first, StepResult):
        return first
    ua = first.user_attrs
    retries = [t for t in trials if t.user_attrs.get(attrs.RETRY_OF) == first.number]
    recycled = [e for e in events if e.get("event") == "worker_recycled"]
    pid = ua.get(attrs.WORKER_PID)
    figures: dict[str, Any] = {
        "exit_code": rc,
        "states": _states(trials),
        "failure_class": ua.get(attrs.FAILURE_CLASS),
        "sticky": ua.get(attrs.STICKY),
        "cuda_error_type": ua.get(attrs.CUDA_ERROR_TYPE),
        "error_code": ua.get(attrs.ERROR_CODE),
        "error_msg": str(ua.get(attrs.ERROR_MSG, ""))[:200],
        "recycled_pids": [e.get("pid") for e in recycled],
        "retry_state": _state(retries[0]) if retries else None,
        "retry_attempt": retries[0].user_attrs.get(attrs.ATTEMPT) if retries else None,
        "worker_pids": [pid, retries[0].user_attrs.get(attrs.WORKER_PID) if retries else None],
    }
    problems = []
    if _state(first) != "FAIL" or ua.get(attrs.FAILURE_CLASS) != "cuda_context_corrupted":
        problems.append(
            f"trial {first.number} ended {_state(first)} as {ua.get(attrs.FAILURE_CLASS)}, "
            "not FAIL as cuda_context_corrupted"
        )
    if ua.get(attrs.STICKY) is not True:
        problems.append("not classified sticky")
    if pid is None or pid not in figures["recycled_pids"]:
        problems.append(f"its worker (pid {pid}) was not recycled")
    if not retries or _state(retries[0]) != "COMPLETE":
        problems.append(f"its retry ended {figures['retry_state']}, not COMPLETE")
    elif retries[0].user_attrs.get(attrs.WORKER_PID) == pid:
        problems.append("its retry ran in the same worker process")
    if problems:
        return StepResult("device_assert", Verdict.FAIL, "; ".join(problems), figures)
    why = (
        f"trial {first.number}: {figures['cuda_error_type'] or 'device-side assert'} "
        f"(code {figures['error_code']}) sticky, worker recycled, retry "
        f"{retries[0].number} COMPLETE in a fresh worker"
    )
    return StepResult("device_assert", Verdict.PASS, why, figures)


def judge_oom(rc: int, trials: Sequence[FrozenTrial]) -> StepResult:
    """The exit code is not judged: a study whose only trial was pruned exits 6 (nothing
    learned), as it should."""
    first = _one_trial("oom", rc, trials)
    if isinstance(first, StepResult):
        return first
    ua = first.user_attrs
    figures = {
        "exit_code": rc,
        "states": _states(trials),
        "failure_class": ua.get(attrs.FAILURE_CLASS),
        "cuda_error_type": ua.get(attrs.CUDA_ERROR_TYPE),
        "exception_type": ua.get(attrs.EXCEPTION_TYPE),
        "error_msg": str(ua.get(attrs.ERROR_MSG, ""))[:200],
    }
    if _state(first) != "PRUNED" or ua.get(attrs.FAILURE_CLASS) != "oom":
        why = f"trial {first.number} ended {_state(first)} as {ua.get(attrs.FAILURE_CLASS)}"
        return StepResult("oom", Verdict.FAIL, why + ", not PRUNED as oom", figures)
    return StepResult("oom", Verdict.PASS, f"trial {first.number} PRUNED as oom", figures)


def judge_criteria(rc: int, trials: Sequence[FrozenTrial], n_trials: int) -> StepResult:
    states = _states(trials)
    ooms = sum(t.user_attrs.get(attrs.FAILURE_CLASS) == "oom" for t in trials)
    complete = [t for t in trials if _state(t) == "COMPLETE"]
    overlap = max_concurrency(run_intervals([t for t in trials if t.datetime_complete]))
    peaks = [t.user_attrs.get(attrs.PEAK_GPU_MEM_MB) for t in complete]
    values = [t.value for t in complete if t.value is not None]
    figures: dict[str, Any] = {
        "exit_code": rc,
        "states": states,
        "ooms": ooms,
        "max_running_at_once": overlap,
        "peak_gpu_mem_mb_max": max((p for p in peaks if p is not None), default=None),
        "best_val_macro_f1": round(max(values), 4) if values else None,
        "amp": sorted({str(t.user_attrs.get("amp")) for t in complete if "amp" in t.user_attrs}),
    }
    problems = []
    if len(complete) < n_trials:
        problems.append(f"{len(complete)} of {n_trials} trials COMPLETE ({states})")
    if ooms:
        problems.append(f"{ooms} OOMs")
    if overlap < 2:
        problems.append(f"at most {overlap} trial ran at once")
    if rc != 0:
        problems.append(f"hpo run exited {rc}")
    if problems:
        return StepResult("criteria", Verdict.FAIL, "; ".join(problems), figures)
    why = f"{len(complete)} COMPLETE, 0 OOMs, up to {overlap} trials at once"
    return StepResult("criteria", Verdict.PASS, why, figures)


# =============================================================================================
# The studies (written as YAML into the run folder, so each can be rerun with `hpo run`)
# =============================================================================================
def study_config(step: str, out: Path) -> dict[str, Any]:
    """The study config of a GPU step; every one on GPU 0, never resetting it."""
    run_dir = out / "studies" / step
    base: dict[str, Any] = {
        "study": f"gpu-check-{step}",
        "run_dir": str(run_dir),
        "storage": f"sqlite:///{run_dir / 'study.db'}",
        "device_backend": "nvml",
        "gpus": [0],
        "require_gpu": True,
        "allow_gpu_reset": False,
        "n_trials": 1,
        "workers": 1,
        "sampler": {"name": "random", "seed": 0},
        "pruner": {"name": "nop"},
        "timeout_per_trial": 60,
    }
    if step == "criteria":
        return {
            **base,
            "objective": "hpo.tasks.criteria:objective",
            "preflight": "hpo.tasks.criteria:preflight",
            "direction": "maximize",
            "n_trials": CRITERIA_TRIALS,
            "workers": CRITERIA_SLOTS,
            "trials_per_gpu": "auto",
            "gpu_mem_margin_mb": 512,
            "timeout_per_trial": 180,
            "cuda": {"amp": "bf16"},  # criteria falls back to fp32 where bf16 is not native
            "env": {"TOKENIZERS_PARALLELISM": "false"},
            "objective_kwargs": {
                "models": ["tiny-bert"],
                "batch_sizes": [16, 32],
                "lr": [1.0e-4, 1.0e-3],
                "dropout": [0.0, 0.2],
                "epochs": 2,
                "max_length": 64,
            },
        }
    objective = {"probe": "probe", "device_assert": "device_assert", "oom": "oom"}[step]
    direction = "minimize"
    return {**base, "objective": f"{OBJECTIVES}:{objective}", "direction": direction}


# =============================================================================================
# Running the steps
# =============================================================================================
@dataclass
class Ran:
    rc: int
    output: str
    timed_out: bool


def _run(cmd: list[str], timeout: float, cwd: Path, log: Path) -> Ran:
    """Run ``cmd`` in its own process group; on timeout SIGTERM the group, then SIGKILL."""
    with open(log, "w", encoding="utf-8") as fh:
        proc = subprocess.Popen(
            cmd, cwd=str(cwd), stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )
        timed_out = False
        try:
            rc = proc.wait(timeout=max(timeout, 1.0))
        except subprocess.TimeoutExpired:
            timed_out = True
            for sig, grace in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
            rc = proc.wait()
    return Ran(rc, log.read_text(encoding="utf-8", errors="replace"), timed_out)


def _tail(text: str, n: int = 3) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-n:])[-400:]


def _junit_counts(path: Path) -> dict[str, int] | None:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    keys = ("tests", "failures", "errors", "skipped")
    return {k: sum(int(s.get(k, 0)) for s in suites) for k in keys}


@dataclass
class Context:
    """Where the run writes, which Python runs the steps, and the clock of its budget."""

    out: Path
    repo: Path
    python: str = sys.executable
    deadline: float = field(default_factory=lambda: time.monotonic() + BUDGET_S)
    gpu_reason: str | None = None  # why the GPU steps cannot run (set by the machine check)
    #: NVML saw a GPU: a GPU step that cannot run FAILs. False only where a caller runs the steps
    #: on a machine without one (the tests): those steps then SKIP.
    gpu_expected: bool = True

    def timeout(self, step: str) -> float:
        return min(CAPS_S.get(step, BUDGET_S), self.deadline - time.monotonic())


def step_pytest(ctx: Context) -> StepResult:
    tests = ctx.repo / "tests"
    files = sorted(
        str(p.relative_to(ctx.repo))
        for p in tests.glob("test_*.py")
        if "pytest.mark.gpu" in p.read_text(encoding="utf-8", errors="replace")
    )
    if not files:
        return StepResult("pytest", Verdict.FAIL, f"no test file with gpu tests under {tests}")
    xml = ctx.out / "pytest.xml"
    cmd = [ctx.python, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider"]
    ran = _run(
        [*cmd, f"--junitxml={xml}", *files], ctx.timeout("pytest"), ctx.repo, _log(ctx, "pytest")
    )
    detail = "(timed out)" if ran.timed_out else ""
    result = judge_pytest(ran.rc, _junit_counts(xml), detail)
    if result.verdict is Verdict.FAIL:
        result.figures["tail"] = _tail(ran.output)
    return result


def step_doctor(ctx: Context) -> StepResult:
    cmd = [ctx.python, "-m", "hpo.cli", "doctor", "--json", "--run-dir", str(ctx.out / "doctor")]
    ran = _run(cmd, ctx.timeout("doctor"), ctx.repo, _log(ctx, "doctor"))
    return judge_doctor(ran.rc, doctor_json(ran.output))


def doctor_json(text: str) -> list[dict[str, str]] | None:
    """The list ``hpo doctor --json`` printed (from its line ``[`` to its line ``]``), whatever
    else the log holds around it."""
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.rstrip() == "["]
    ends = [i for i, ln in enumerate(lines) if ln.rstrip() == "]"]
    if not starts or not ends or ends[-1] < starts[0]:
        return None
    try:
        data = json.loads("\n".join(lines[starts[0] : ends[-1] + 1]))
    except ValueError:
        return None
    return data if isinstance(data, list) else None


def _log(ctx: Context, step: str) -> Path:
    return ctx.out / f"{step}.log"


def run_study(
    ctx: Context, name: str, cfg: Mapping[str, Any]
) -> tuple[Ran, list[FrozenTrial], list[dict[str, Any]]]:
    """``hpo run`` on ``cfg`` (written to ``studies/NAME.yaml``); its trials and events after."""
    from hpo import storage as st

    path = ctx.out / "studies" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(dict(cfg), sort_keys=False), encoding="utf-8")
    cmd = [ctx.python, "-m", "hpo.cli", "run", str(path), "--quiet"]
    ran = _run(cmd, ctx.timeout(name), ctx.repo, _log(ctx, name))
    trials: list[FrozenTrial] = []
    try:
        trials = st.trials(st.load_study(cfg["storage"], cfg["study"]))
    except Exception:
        pass  # no study: the judge says so, with the run's exit code
    events = []
    events_file = Path(cfg["run_dir"]) / "events.jsonl"
    if events_file.exists():
        for line in events_file.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    return ran, trials, events


def _study_step(step: str, judge: Callable[..., StepResult]) -> Callable[[Context], StepResult]:
    def run(ctx: Context) -> StepResult:
        ran, trials, events = run_study(ctx, step, study_config(step, ctx.out))
        result = judge(ran, trials, events)
        if ran.timed_out:
            result = StepResult(step, Verdict.FAIL, f"timed out; {result.reason}", result.figures)
        if result.verdict is Verdict.FAIL:
            result.figures["tail"] = _tail(ran.output)
        return result

    return run


STEP_FUNCS: dict[str, Callable[[Context], StepResult]] = {
    "pytest": step_pytest,
    "doctor": step_doctor,
    "probe": _study_step("probe", lambda r, t, e: judge_probe(r.rc, t)),
    "device_assert": _study_step("device_assert", lambda r, t, e: judge_device_assert(r.rc, t, e)),
    "oom": _study_step("oom", lambda r, t, e: judge_oom(r.rc, t)),
    "criteria": _study_step("criteria", lambda r, t, e: judge_criteria(r.rc, t, CRITERIA_TRIALS)),
}


_MACHINE = """
import json, torch
d = {"torch": torch.__version__, "torch_cuda": torch.version.cuda,
     "cuda_available": torch.cuda.is_available()}
if d["cuda_available"]:
    d["devices"] = torch.cuda.device_count()
    d["device_name"] = torch.cuda.get_device_name(0)
    d["capability"] = list(torch.cuda.get_device_capability(0))
    d["bf16_native"] = torch.cuda.is_bf16_supported(including_emulation=False)
print(json.dumps(d))
"""


def machine(ctx: Context) -> dict[str, Any]:
    """What torch says about the GPU, in a child process (the check itself never touches CUDA).
    Sets ``ctx.gpu_reason`` when the GPU steps cannot run."""
    ran = _run([ctx.python, "-c", _MACHINE], 120.0, ctx.repo, _log(ctx, "machine"))
    lines = ran.output.strip().splitlines()
    try:
        facts: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    except ValueError:
        facts = {}
    facts["python"] = ctx.python
    if not facts.get("torch"):
        ctx.gpu_reason = f"torch does not import in {ctx.python}: {_tail(ran.output, 1)}"
    elif not facts.get("torch_cuda"):
        ctx.gpu_reason = f"torch {facts['torch']} is a CPU build (torch.version.cuda is None)"
    elif not facts.get("cuda_available"):
        ctx.gpu_reason = f"torch {facts['torch']} (CUDA {facts['torch_cuda']}) sees no CUDA device"
    return facts


def run_steps(ctx: Context, steps: Sequence[str]) -> dict[str, Any]:
    """Run ``steps`` in order within the budget; the verdict as a JSON-ready dict."""
    started = time.time()
    facts = machine(ctx)
    results = []
    for name in steps:
        t0 = time.monotonic()
        if name in GPU_STEPS and ctx.gpu_reason:
            result = StepResult(
                name, Verdict.FAIL if ctx.gpu_expected else Verdict.SKIP, ctx.gpu_reason
            )
        elif ctx.deadline - time.monotonic() < 5:
            result = StepResult(name, Verdict.SKIP, f"the {BUDGET_S:.0f} s budget was spent")
        else:
            try:
                result = STEP_FUNCS[name](ctx)
            except Exception as exc:  # one broken step must not hide the others' verdicts
                result = StepResult(name, Verdict.FAIL, f"{type(exc).__name__}: {exc}")
        result.seconds = round(time.monotonic() - t0, 1)
        results.append(result)
    verdict, reason = overall(results)
    return {
        "verdict": verdict.value,
        "reason": reason,
        "started": datetime.datetime.fromtimestamp(started).isoformat(timespec="seconds"),
        "seconds": round(time.time() - started, 1),
        "machine": facts,
        "steps": [r.to_dict() for r in results],
    }


def summary(verdict: Mapping[str, Any]) -> str:
    """The readable summary: one line per step, then the verdict."""
    m = verdict.get("machine", {})
    lines = [
        f"gpu-check {verdict['started']}: {m.get('device_name', 'no device')} "
        f"(torch {m.get('torch')}, CUDA {m.get('torch_cuda')}, python {m.get('python')})"
    ]
    for s in verdict["steps"]:
        lines.append(
            f"  {s['name']:<14} {s['verdict'].upper():<5} {s['seconds']:>6.1f} s  {s['reason']}"
        )
    lines.append(
        f"verdict: {verdict['verdict'].upper()} ({verdict['seconds']:.0f} s): {verdict['reason']}"
    )
    return "\n".join(lines) + "\n"


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m hpo.gpucheck", description="The acceptance run for a real GPU."
    )
    parser.add_argument("--out", type=Path, help="a new folder (default runs/gpu-check/<time>)")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"default: {','.join(STEPS)}")
    parser.add_argument("--repo", type=Path, default=Path.cwd(), help="the hpo checkout (tests/)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    unknown = [s for s in steps if s not in STEP_FUNCS]
    if unknown or not steps:
        raise ConfigError(
            f"--steps: unknown step {unknown or args.steps!r}; steps: {', '.join(STEPS)}"
        )
    why = no_gpu_reason()
    if why is not None:
        print(f"gpu-check: skipped: {why}")
        return ExitCode.OK
    out = args.out or Path("runs/gpu-check") / datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"--out {out}: the folder is not empty; give a new one")
    out.mkdir(parents=True, exist_ok=True)
    print(f"gpu-check: running {', '.join(steps)} (at most {BUDGET_S / 60:.0f} min); in {out}/")
    verdict = run_steps(Context(out=out.resolve(), repo=args.repo.resolve()), steps)
    _write_atomic(out / "verdict.json", json.dumps(verdict, indent=2, default=str) + "\n")
    text = summary(verdict)
    _write_atomic(out / "summary.txt", text)
    print(text + f"verdict: {out / 'verdict.json'}; summary: {out / 'summary.txt'}")
    return ExitCode.OK if verdict["verdict"] == Verdict.PASS.value else ExitCode.ERROR


def _cli() -> int:
    try:
        return main()
    except ConfigError as exc:
        print(f"gpu-check: {exc}", file=sys.stderr)
        return int(exc.exit_code)


if __name__ == "__main__":
    sys.exit(_cli())
