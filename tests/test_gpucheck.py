"""`make gpu-check` (hpo.gpucheck) on CPU: the skip path, the judges and the verdict from tables,
the orchestration with the GPU steps skipped, and the judges against what the real supervisor
writes (CUDA faults raised with their real texts and types on CPU)."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import optuna
import pynvml
import pytest
from optuna.distributions import FloatDistribution
from optuna.trial import FrozenTrial, TrialState

from hpo import attrs, gpucheck
from hpo.errors import ConfigError, ExitCode
from hpo.gpucheck import StepResult, Verdict
from hpo.testing.fake_nvml import fake_device, make_pynvml
from tests.conftest import ROOT, assert_no_run_processes

T0 = datetime.datetime(2026, 1, 1, 12, 0, 0)


def trial(
    number: int, state: TrialState, user_attrs: dict[str, Any] | None = None, **kw: Any
) -> FrozenTrial:
    t = optuna.trial.create_trial(
        state=state,
        value=kw.pop("value", 1.0) if state == TrialState.COMPLETE else None,
        params={"x": 0.5},
        distributions={"x": FloatDistribution(0.0, 1.0)},
        user_attrs=user_attrs or {},
    )
    t.number = number
    if "start" in kw:
        t.datetime_start = T0 + datetime.timedelta(seconds=kw["start"])
    if "end" in kw:
        t.datetime_complete = T0 + datetime.timedelta(seconds=kw["end"])
    return t


# -- the skip path -----------------------------------------------------------------------------
def test_without_a_gpu_it_exits_zero_at_once_with_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(
        [sys.executable, "-m", "hpo.gpucheck"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "gpu-check: skipped: CUDA_VISIBLE_DEVICES is empty: no GPU is visible to this process"
    ]
    assert not (tmp_path / "runs").exists()  # nothing written


def test_no_gpu_reason_reads_nvml_then_the_driver(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    proc = tmp_path / "gpus"
    monkeypatch.setitem(
        sys.modules, "pynvml", make_pynvml([], init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)
    )
    why = gpucheck.no_gpu_reason({}, proc)
    assert why == "no NVIDIA GPU on this machine (NVML: NVML Shared Library Not Found)"
    (proc / "0000:3b:00.0").mkdir(parents=True)  # the driver has a GPU NVML cannot open
    assert gpucheck.no_gpu_reason({}, proc) is None
    monkeypatch.setitem(sys.modules, "pynvml", make_pynvml([]))
    assert gpucheck.no_gpu_reason({}, tmp_path / "none") == "NVML sees 0 GPUs"
    monkeypatch.setitem(sys.modules, "pynvml", make_pynvml([fake_device(0)]))
    assert gpucheck.no_gpu_reason({}, tmp_path / "none") is None
    assert "empty" in str(gpucheck.no_gpu_reason({"CUDA_VISIBLE_DEVICES": " "}, proc))


def test_unknown_step_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="--steps: unknown step \\['gpu'\\]"):
        gpucheck.main(["--steps", "probe,gpu"])


# -- the verdict and the figures from tables ----------------------------------------------------
@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        (["pass", "pass", "pass"], "pass"),
        (["pass", "fail", "pass"], "fail"),
        (["pass", "skip", "pass"], "fail"),  # a step that did not run proves nothing
        ([], "fail"),
    ],
)
def test_overall_passes_only_if_every_step_passed(verdicts: list[str], expected: str) -> None:
    results = [StepResult(f"s{i}", Verdict(v), f"why {i}") for i, v in enumerate(verdicts)]
    verdict, reason = gpucheck.overall(results)
    assert verdict.value == expected
    if expected == "fail" and verdicts:
        bad = [i for i, v in enumerate(verdicts) if v != "pass"]
        assert reason == "; ".join(f"s{i} {verdicts[i]}: why {i}" for i in bad)


@pytest.mark.parametrize(
    ("intervals", "most"),
    [
        ([], 0),
        ([(0, 10)], 1),
        ([(0, 10), (10, 20)], 1),  # one ends as the next starts
        ([(0, 10), (5, 20), (6, 7), (30, 40)], 3),
        ([(0, 10), (11, 20), (12, 13)], 2),
    ],
)
def test_max_concurrency(intervals: list[tuple[float, float]], most: int) -> None:
    assert gpucheck.max_concurrency(intervals) == most


def test_overlap_counts_when_objectives_ran_not_when_trials_were_asked() -> None:
    # Both asked at 0 (the second waited for room on the GPU): they never ran at once.
    a = trial(0, TrialState.COMPLETE, {attrs.DURATION_S: 10.0}, start=0, end=10)
    b = trial(1, TrialState.COMPLETE, {attrs.DURATION_S: 10.0}, start=0, end=21)
    assert gpucheck.max_concurrency(gpucheck.run_intervals([a, b])) == 1
    c = trial(2, TrialState.COMPLETE, {}, start=5, end=15)  # no duration: asked-to-complete
    assert gpucheck.max_concurrency(gpucheck.run_intervals([a, b, c])) == 2


def test_judge_pytest() -> None:
    ok = {"tests": 3, "failures": 0, "errors": 0, "skipped": 1}
    assert gpucheck.judge_pytest(0, ok).verdict is Verdict.PASS
    assert gpucheck.judge_pytest(0, ok).reason == "2 gpu tests passed, 1 skipped"
    assert gpucheck.judge_pytest(1, {**ok, "failures": 1}).verdict is Verdict.FAIL
    all_skipped = gpucheck.judge_pytest(0, {**ok, "skipped": 3})
    assert all_skipped.verdict is Verdict.FAIL and "skipped" in all_skipped.reason
    assert gpucheck.judge_pytest(2, None).verdict is Verdict.FAIL


def _check(name: str, status: str, detail: str = "d") -> dict[str, str]:
    return {"name": name, "status": status, "detail": detail, "hint": ""}


def test_judge_doctor() -> None:
    gpu_ok = [_check(n, "PASS") for n in gpucheck.DOCTOR_GPU_CHECKS]
    passed = gpucheck.judge_doctor(0, [*gpu_ok, _check("shm", "WARN")])
    assert passed.verdict is Verdict.PASS and "WARN: shm" in passed.reason
    failed = gpucheck.judge_doctor(1, [*gpu_ok, _check("disk", "FAIL", "0 GB free")])
    assert failed.verdict is Verdict.FAIL and failed.reason == "FAIL disk: 0 GB free"
    skipped = [_check("cuda", "SKIP"), *gpu_ok[1:]]
    assert gpucheck.judge_doctor(0, skipped).verdict is Verdict.FAIL
    assert gpucheck.judge_doctor(1, None).verdict is Verdict.FAIL


def test_doctor_json_is_found_among_log_lines() -> None:
    data = [_check("torch", "PASS")]
    text = "a log line [with brackets]\n" + json.dumps(data, indent=2) + "\ntrailing line\n"
    assert gpucheck.doctor_json(text) == data
    assert gpucheck.doctor_json("Traceback ...\nRuntimeError: boom\n") is None


PROBE_OK = {
    "cuda_uuid": "8f3c0b1e-aaaa-bbbb-cccc-000000000001",
    "nvml_uuid": "GPU-8f3c0b1e-aaaa-bbbb-cccc-000000000001",
    "pinned_uuid": "GPU-8f3c0b1e-aaaa-bbbb-cccc-000000000001",
    "allocator": {"backend": "native", "expandable_segments": True, "settings": "x"},
    "nvml_process_mb": 1012.0,
    "max_memory_reserved_mb": 512.0,
}


@pytest.mark.parametrize(
    ("change", "verdict", "says"),
    [
        ({}, "pass", "NVML 1012.0 MB >= reserved 512.0 MB"),
        ({"nvml_process_mb": None, "nvml_error": "no pid"}, "pass", "unavailable (no pid)"),
        ({"cuda_uuid": "0000"}, "fail", "is not the pinned one"),
        ({"allocator": {"backend": "native", "expandable_segments": False}}, "fail", "not in"),
        ({"nvml_process_mb": 100.0}, "fail", "< max_memory_reserved"),
    ],
)
def test_judge_probe(change: dict[str, Any], verdict: str, says: str) -> None:
    t = trial(0, TrialState.COMPLETE, {gpucheck.PROBE_KEY: {**PROBE_OK, **change}})
    result = gpucheck.judge_probe(0, [t])
    assert result.verdict.value == verdict and says in result.reason, result.reason
    if verdict == "pass" and change == {}:
        assert result.figures["overhead_mb"] == 500.0


def test_judge_probe_failed_trial() -> None:
    t = trial(0, TrialState.FAIL, {attrs.ERROR_MSG: "CUDA error: no kernel image"})
    assert "FAIL CUDA error: no kernel image" in gpucheck.judge_probe(1, [t]).reason
    assert gpucheck.judge_probe(2, []).verdict is Verdict.FAIL


def _assert_trials(
    cls: str = "cuda_context_corrupted", retry: TrialState = TrialState.COMPLETE, same_pid=False
) -> list[FrozenTrial]:
    first = trial(
        0, TrialState.FAIL, {attrs.FAILURE_CLASS: cls, attrs.STICKY: True, attrs.WORKER_PID: 11}
    )
    again = trial(
        1, retry, {attrs.RETRY_OF: 0, attrs.ATTEMPT: 2, attrs.WORKER_PID: 11 if same_pid else 12}
    )
    return [first, again]


RECYCLED = [{"event": "worker_started", "pid": 11}, {"event": "worker_recycled", "pid": 11}]


@pytest.mark.parametrize(
    ("trials", "events", "says"),
    [
        (_assert_trials(), RECYCLED, ""),
        (_assert_trials(cls="user_error"), RECYCLED, "not FAIL as cuda_context_corrupted"),
        (_assert_trials(), RECYCLED[:1], "was not recycled"),
        (_assert_trials(retry=TrialState.FAIL), RECYCLED, "retry ended FAIL"),
        (_assert_trials(same_pid=True), RECYCLED, "same worker process"),
        (_assert_trials()[:1], RECYCLED, "retry ended None"),
    ],
)
def test_judge_device_assert(
    trials: list[FrozenTrial], events: list[dict[str, Any]], says: str
) -> None:
    result = gpucheck.judge_device_assert(0, trials, events)
    assert result.verdict is (Verdict.FAIL if says else Verdict.PASS), result.reason
    assert says in result.reason


def test_judge_oom() -> None:
    pruned = trial(0, TrialState.PRUNED, {attrs.FAILURE_CLASS: "oom"})
    assert gpucheck.judge_oom(0, [pruned]).verdict is Verdict.PASS
    failed = trial(0, TrialState.FAIL, {attrs.FAILURE_CLASS: "user_error"})
    assert gpucheck.judge_oom(0, [failed]).reason == (
        "trial 0 ended FAIL as user_error, not PRUNED as oom"
    )


def _criteria(n: int, overlap: bool, oom_at: int | None = None) -> list[FrozenTrial]:
    out = []
    for i in range(n):
        end = (i // 2 * 20 + 10) if overlap else (i * 20 + 10)
        ua: dict[str, Any] = {attrs.DURATION_S: 10.0, attrs.PEAK_GPU_MEM_MB: 300.0 + i}
        state = TrialState.COMPLETE
        if i == oom_at:
            ua[attrs.FAILURE_CLASS], state = "oom", TrialState.PRUNED
        out.append(trial(i, state, ua, start=0, end=end))
    return out


def test_judge_criteria() -> None:
    good = gpucheck.judge_criteria(0, _criteria(12, overlap=True), 12)
    assert good.verdict is Verdict.PASS, good.reason
    assert good.figures["max_running_at_once"] == 2 and good.figures["ooms"] == 0
    serial = gpucheck.judge_criteria(0, _criteria(12, overlap=False), 12)
    assert serial.reason == "at most 1 trial ran at once"
    oom = gpucheck.judge_criteria(0, _criteria(12, overlap=True, oom_at=3), 12)
    assert "1 OOMs" in oom.reason and "11 of 12 trials COMPLETE" in oom.reason


def test_study_configs_never_reset_and_pin_one_gpu(tmp_path: Path) -> None:
    from hpo.config import load_config

    for step in gpucheck.GPU_STEPS:
        cfg = gpucheck.study_config(step, tmp_path)
        assert cfg["allow_gpu_reset"] is False and cfg["gpus"] == [0]
        load_config(overrides=cfg)  # a valid study config
    crit = gpucheck.study_config("criteria", tmp_path)
    assert (crit["n_trials"], crit["workers"], crit["trials_per_gpu"]) == (12, 4, "auto")
    assert crit["cuda"]["amp"] == "bf16" and crit["objective_kwargs"]["models"] == ["tiny-bert"]


# -- orchestration on CPU: the GPU steps skip, the verdict is written, nothing passes -----------
@pytest.mark.timeout(300)
def test_run_steps_on_cpu_skips_gpu_steps(tmp_path: Path) -> None:
    ctx = gpucheck.Context(out=tmp_path, repo=ROOT, gpu_expected=False)
    verdict = gpucheck.run_steps(ctx, ["probe", "oom", "criteria"])
    assert verdict["machine"]["torch"] and verdict["machine"]["cuda_available"] is False
    assert [s["verdict"] for s in verdict["steps"]] == ["skip", "skip", "skip"]
    assert all(s["reason"] == ctx.gpu_reason for s in verdict["steps"])
    assert verdict["verdict"] == "fail"
    json.dumps(verdict)  # JSON-ready
    text = gpucheck.summary(verdict)
    assert text.splitlines()[-1].startswith("verdict: FAIL")


# -- the judges against what the real supervisor writes -----------------------------------------
def _fault_study(tmp_path: Path, name: str, fault: str) -> dict[str, Any]:
    run_dir = tmp_path / name
    return {
        "study": name,
        "run_dir": str(run_dir),
        "storage": f"sqlite:///{run_dir / 'study.db'}",
        "objective": "hpo.testing.objectives:fault_objective",
        "objective_kwargs": {"fault": fault, "fault_trials": [0]},
        "direction": "minimize",
        "n_trials": 1,
        "workers": 1,
        "gpus": "none",
        "sampler": {"name": "random", "seed": 0},
    }


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("fault", ["device_assert", "oom"])
def test_judges_read_what_the_runner_writes(tmp_path: Path, fault: str) -> None:
    ctx = gpucheck.Context(out=tmp_path, repo=ROOT)
    cfg = _fault_study(tmp_path, fault, fault)
    ran, trials, events = gpucheck.run_study(ctx, fault, cfg)
    # The OOM study has no COMPLETE trial: hpo run says so with exit 6, which judge_oom allows.
    assert ran.rc == (ExitCode.NOTHING_LEARNED if fault == "oom" else 0), ran.output[-2000:]
    if fault == "oom":
        result = gpucheck.judge_oom(ran.rc, trials)
    else:
        result = gpucheck.judge_device_assert(ran.rc, trials, events)
    assert result.verdict is Verdict.PASS, (result.reason, result.figures)
    assert_no_run_processes(Path(cfg["run_dir"]))
