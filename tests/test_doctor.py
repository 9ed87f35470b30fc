"""``hpo doctor``: exits 0 with SKIPs on a CPU-only machine, JSON output, each check's logic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hpo import doctor
from hpo.doctor import CheckResult, Status

ROOT = Path(__file__).resolve().parents[1]
NAMES = [
    "torch",
    "driver",
    "cuda",
    "gpu_memory",
    "cudnn",
    "transformer",
    "alloc_conf",
    "expandable_segments",
    "wsl",
    "shm",
    "disk",
]


def _cuda_available() -> bool:
    import torch

    return torch.version.cuda is not None and torch.cuda.is_available()


def _run_doctor(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "hpo.doctor", "--run-dir", str(tmp_path / "run"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.timeout(600)
def test_doctor_json_one_entry_per_check(tmp_path: Path) -> None:
    proc = _run_doctor("--json", tmp_path=tmp_path)
    data = json.loads(proc.stdout)
    assert [d["name"] for d in data] == NAMES
    for d in data:
        assert set(d) == {"name", "status", "detail", "hint"}
        assert d["status"] in {"PASS", "WARN", "FAIL", "SKIP"}
        assert d["detail"]
    failed = [d for d in data if d["status"] == "FAIL"]
    assert proc.returncode == (1 if failed else 0)
    if not _cuda_available():
        assert proc.returncode == 0, failed
        by_name = {d["name"]: d for d in data}
        for name in ("cuda", "gpu_memory", "cudnn", "transformer", "expandable_segments"):
            assert by_name[name]["status"] == "SKIP"
            assert by_name[name]["detail"] in (doctor.REASON_CPU_BUILD, doctor.REASON_NO_DEVICE)
        assert by_name["torch"]["status"] == "PASS"
        assert by_name["disk"]["status"] in ("PASS", "WARN")


@pytest.mark.timeout(600)
def test_doctor_table_exits_zero_without_gpu(tmp_path: Path) -> None:
    if _cuda_available():
        pytest.skip("this machine has a CUDA GPU: see test_doctor_on_gpu")
    proc = _run_doctor(tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hpo doctor" in proc.stdout
    assert "SKIP" in proc.stdout


@pytest.mark.gpu
@pytest.mark.timeout(900)
@pytest.mark.skipif(
    not _cuda_available(), reason="no CUDA device: torch.cuda.is_available() is False"
)
def test_doctor_on_gpu(tmp_path: Path) -> None:
    results = doctor.run_checks(tmp_path)
    by_name = {r.name: r for r in results}
    for name in ("cuda", "gpu_memory", "cudnn", "transformer"):
        assert by_name[name].status in (Status.PASS, Status.WARN), by_name[name]
    assert by_name["expandable_segments"].status in (Status.PASS, Status.WARN, Status.SKIP)


# -- child mechanics ---------------------------------------------------------------------------
def test_child_check_prints_one_result(capsys: pytest.CaptureFixture[str]) -> None:
    assert doctor._cli(["--check", "driver"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith(doctor.RESULT_MARK)
    data = json.loads(line[len(doctor.RESULT_MARK) :])
    assert data["name"] == "driver"
    assert data["status"] in {"PASS", "SKIP", "FAIL"}


def test_child_exception_is_a_fail(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom() -> CheckResult:
        raise RuntimeError("CUDA error: uncorrectable ECC error encountered\nmore")

    monkeypatch.setitem(doctor.CHILD_CHECKS, "cuda", boom)
    doctor._child_main("cuda")
    data = json.loads(capsys.readouterr().out.split(doctor.RESULT_MARK, 1)[1])
    assert data["status"] == "FAIL"
    assert data["detail"] == "RuntimeError: CUDA error: uncorrectable ECC error encountered more"
    assert "gpu-reset" in data["hint"]


def _fake_python(tmp_path: Path, body: str) -> str:
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(0o755)
    return str(script)


@pytest.mark.timeout(60)
def test_run_child_crash_is_a_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        doctor.sys, "executable", _fake_python(tmp_path, "echo oops >&2; kill -SEGV $$")
    )
    result = doctor.run_child("cudnn")
    assert result.status is Status.FAIL
    assert result.detail == "the check's process died with SIGSEGV: oops"


@pytest.mark.timeout(60)
def test_run_child_without_result_is_a_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        doctor.sys, "executable", _fake_python(tmp_path, "echo 'driver too old' >&2; exit 3")
    )
    result = doctor.run_child("cuda")
    assert result.status is Status.FAIL
    assert "exited with code 3 and no result: driver too old" in result.detail
    assert "driver" in result.hint


@pytest.mark.timeout(60)
def test_run_child_timeout_kills_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = tmp_path / "pid"
    monkeypatch.setattr(
        doctor.sys, "executable", _fake_python(tmp_path, f"echo $$ > {pid_file}; sleep 30")
    )
    monkeypatch.setitem(doctor.CHILD_TIMEOUT_S, "transformer", 0.5)
    result = doctor.run_child("transformer")
    assert result.status is Status.FAIL
    assert "hung" in result.detail
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


# -- orchestration ----------------------------------------------------------------------------------
def _fake_children(monkeypatch: pytest.MonkeyPatch, results: dict[str, CheckResult]) -> list[str]:
    ran: list[str] = []

    def fake(name: str, extra_env: dict[str, str] | None = None) -> CheckResult:
        ran.append(name)
        if name == "expandable_segments":
            assert extra_env == {k: "expandable_segments:True" for k in doctor.ALLOC_ENV}
        return results[name]

    monkeypatch.setattr(doctor, "run_child", fake)
    return ran


def test_cpu_torch_on_a_gpu_machine_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_children(
        monkeypatch,
        {
            "torch": CheckResult(
                "torch",
                Status.PASS,
                "torch 2.5 (CPU build)",
                facts={"version": "2.5.0", "cuda": None},
            ),
            "driver": CheckResult(
                "driver", Status.PASS, "driver 550", facts={"cuda": "12.4", "gpus": 2}
            ),
        },
    )
    results = {r.name: r for r in doctor.run_checks(tmp_path)}
    assert results["torch"].status is Status.FAIL
    assert "NVML sees 2 GPU(s)" in results["torch"].detail
    assert results["cuda"].detail == doctor.REASON_CPU_BUILD


def test_old_driver_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    ran = _fake_children(
        monkeypatch,
        {
            "torch": CheckResult(
                "torch", Status.PASS, "torch", facts={"version": "2.5.0", "cuda": "12.4"}
            ),
            "driver": CheckResult(
                "driver", Status.PASS, "driver 470", facts={"cuda": "11.4", "gpus": 1}
            ),
            "cuda": CheckResult(
                "cuda", Status.SKIP, doctor.REASON_NO_DEVICE, facts={"cuda_available": False}
            ),
        },
    )
    results = {r.name: r for r in doctor.run_checks(tmp_path)}
    assert results["driver"].status is Status.FAIL
    assert "built for CUDA 12.4" in results["driver"].detail
    assert results["cuda"].status is Status.FAIL  # NVML sees a GPU that torch cannot use
    assert results["cudnn"].status is Status.SKIP
    assert ran == ["torch", "driver", "cuda"]


def test_gpu_checks_run_in_children_when_cuda_works(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ok = {
        n: CheckResult(n, Status.PASS, "ok", facts={"cuda_available": True})
        for n in ("cuda", "gpu_memory", "cudnn", "transformer", "expandable_segments")
    }
    ok["torch"] = CheckResult(
        "torch", Status.PASS, "torch", facts={"version": "2.5.0", "cuda": "12.4"}
    )
    ok["driver"] = CheckResult("driver", Status.PASS, "d", facts={"cuda": "12.6", "gpus": 1})
    ran = _fake_children(monkeypatch, ok)
    monkeypatch.setattr(doctor.sys, "platform", "linux")
    results = doctor.run_checks(tmp_path)
    assert [r.name for r in results] == NAMES
    assert ran == [
        "torch",
        "driver",
        "cuda",
        "gpu_memory",
        "cudnn",
        "transformer",
        "expandable_segments",
    ]


def test_torch_import_failure_skips_gpu_checks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_children(
        monkeypatch,
        {
            "torch": CheckResult("torch", Status.FAIL, "the check's process died with SIGSEGV: x"),
            "driver": CheckResult("driver", Status.SKIP, "no NVIDIA driver"),
        },
    )
    results = {r.name: r for r in doctor.run_checks(tmp_path)}
    assert results["cuda"].status is Status.SKIP
    assert "torch does not import" in results["cuda"].detail
    assert doctor.main(as_json=True, run_dir=tmp_path) == 1


# -- host checks ----------------------------------------------------------------------------------
def test_wsl_detection(tmp_path: Path) -> None:
    version = tmp_path / "version"
    version.write_text("Linux version 5.15.153.1-microsoft-standard-WSL2 (root@1c602f52c2e4)")
    result = doctor.check_wsl(version)
    assert result.status is Status.WARN
    assert "WSL2" in result.detail
    version.write_text("Linux version 6.8.0-45-generic")
    assert doctor.check_wsl(version).status is Status.PASS
    assert doctor.check_wsl(tmp_path / "missing").status is Status.PASS


@pytest.mark.parametrize(
    ("env", "torch_version", "status"),
    [
        ({}, "2.5.1+cu124", Status.PASS),
        (
            {
                "PYTORCH_ALLOC_CONF": "expandable_segments:True",
                "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
            },
            "2.5.1",
            Status.PASS,
        ),
        ({"PYTORCH_ALLOC_CONF": "expandable_segments:True"}, "2.9.1", Status.WARN),
        (
            {
                "PYTORCH_ALLOC_CONF": "expandable_segments:True",
                "PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128",
            },
            "2.9.1",
            Status.WARN,
        ),
        (
            {
                "PYTORCH_ALLOC_CONF": "expandable_segments:True",
                "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
            },
            "2.0.1",
            Status.WARN,
        ),
    ],
)
def test_alloc_conf(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], torch_version: str, status: Status
) -> None:
    for key in doctor.ALLOC_ENV:
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(doctor.sys, "platform", "linux")
    result = doctor.check_alloc_conf(torch_version)
    assert result.status is status, result
    assert result.facts["supported"] is (torch_version >= "2.1")


def test_shm_and_disk(tmp_path: Path) -> None:
    assert doctor.check_shm(tmp_path / "nope").status is Status.WARN
    assert doctor.check_shm(tmp_path).status in (Status.PASS, Status.WARN)
    result = doctor.check_disk(tmp_path / "not" / "yet" / "created")
    assert str(tmp_path) in result.detail
    assert result.status in (Status.PASS, Status.WARN)


@pytest.mark.parametrize(
    ("cap", "archs", "ok"),
    [
        ((8, 6), ["sm_50", "sm_80", "sm_90"], True),  # sm_80 code runs on sm_86
        ((8, 9), ["sm_50", "sm_60", "sm_70", "sm_75"], False),  # the cublas arch mismatch
        ((12, 0), ["sm_80", "sm_90", "compute_90"], True),  # PTX JIT
        ((7, 5), [], True),
        ((9, 0), ["sm_90a"], True),
    ],
)
def test_arch_ok(cap: tuple[int, int], archs: list[str], ok: bool) -> None:
    assert doctor._arch_ok(cap, archs) is ok


@pytest.mark.parametrize(("kernel", "status"), [("wsl2", "WARN"), ("linux", "FAIL")])
def test_expandable_segments_probe_recognises_the_wsl2_failure(
    kernel: str,
    status: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """pytorch#192330 through the real check: a CUDA torch (faked on the CPU build) whose first
    allocation under expandable segments fails with the driver's text, on a WSL2 kernel."""
    import torch

    from hpo import allocator
    from hpo.testing.objectives import WSL2_PROC_VERSION

    def empty(*args: object, device: str | None = None, **kw: object) -> object:
        if device is not None and device.startswith("cuda"):
            raise RuntimeError("CUDA driver error: unknown error")
        return torch.zeros(1)

    version = tmp_path / "version"
    version.write_text(WSL2_PROC_VERSION if kernel == "wsl2" else "Linux version 6.8.0-45-generic")
    monkeypatch.setattr(allocator, "PROC_VERSION", version)
    monkeypatch.setattr("platform.release", lambda: "6.8.0-45-generic")
    monkeypatch.setattr(torch.version, "cuda", "12.4")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch, "empty", empty)
    doctor._child_main("expandable_segments")
    data = json.loads(capsys.readouterr().out.split(doctor.RESULT_MARK, 1)[1])
    assert data["status"] == status
    if kernel == "wsl2":
        assert "pytorch#192330" in data["detail"] and "without them" in data["hint"]
        assert data["facts"] == {"wsl_fallback": True}
    else:
        assert "CUDA driver error: unknown error" in data["detail"]
