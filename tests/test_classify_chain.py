"""Wrapped errors, the chain of causes, "not recognised", speed and never raising."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpo.failures import FailureClass, classify
from hpo.failures.classify import (
    NOT_RECOGNISED,
    exception_chain,
    exception_error_code,
)

CORPUS = Path(__file__).resolve().parent / "corpus"


# ----------------------------------------------------------------------------- the chain


def _raise_chain() -> BaseException:
    try:
        try:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        except RuntimeError as inner:
            raise ValueError("while computing the metric") from inner
    except ValueError as outer:
        try:
            raise KeyError("lost")  # __context__, not __cause__
        except KeyError as last:
            assert last.__context__ is outer
            return last


def test_exception_chain_outermost_first() -> None:
    chain = exception_chain(_raise_chain())
    assert [name for name, _ in chain] == ["KeyError", "ValueError", "RuntimeError"]
    assert "illegal memory access" in chain[-1][1]


def test_exception_chain_cuts_cycles_and_suppressed_context() -> None:
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__cause__, b.__cause__ = b, a
    assert len(exception_chain(a)) == 2
    try:
        try:
            raise OSError("hidden")
        except OSError:
            raise TypeError("shown") from None
    except TypeError as exc:
        assert exception_chain(exc) == [("TypeError", "shown")]


def test_exception_chain_never_raises() -> None:
    class Nasty(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no str for you")

    [(name, message)] = exception_chain(Nasty())
    assert name.endswith("Nasty") and message == ""


def test_chain_is_evidence() -> None:
    chain = exception_chain(_raise_chain())
    d = classify("KeyError", "'lost'", "", chain=chain)
    assert (d.failure_class, d.sticky) == (FailureClass.CUDA_CONTEXT_CORRUPTED, True)
    # Junk chains are ignored, not fatal.
    for junk in ("not a chain", [1, None, ()], [("RuntimeError",)], 42):
        assert classify("KeyError", "'x'", chain=junk).failure_class is FailureClass.USER_ERROR  # type: ignore[arg-type]


def test_exception_error_code() -> None:
    class AcceleratorError(RuntimeError):
        error_code = 700

    try:
        try:
            raise AcceleratorError("CUDA error: an illegal memory access was encountered")
        except AcceleratorError as exc:
            raise ValueError("wrapped") from exc
    except ValueError as outer:
        assert exception_error_code(outer) == 700
    assert exception_error_code(ValueError("x")) is None


# ----------------------------------------------------------------------------- wrappers


def test_wrapped_types_are_evidence() -> None:
    ray = "ray.exceptions.RayTaskError(OutOfMemoryError): ray::train() (pid=1, ip=10.0.0.1)"
    assert classify(None, ray).failure_class is FailureClass.OOM


def test_pool_worker_death_is_worker_lost_not_segfault() -> None:
    loky = (
        "joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed "
        "by the executor was unexpectedly terminated. This could be caused by a segmentation "
        "fault while calling the function or by an excessive memory usage causing the "
        "Operating System to kill the worker.\n\nThe exit codes of the workers are {SIGSEGV(-11)}"
    )
    d = classify(None, loky)
    assert d.failure_class is FailureClass.WORKER_LOST and "SIGSEGV(-11)" in d.summary
    assert "pool" in d.hint and "PyTorch" not in d.hint


def test_wrapper_fallback_names_what_it_wraps() -> None:
    chain = [("torch.multiprocessing.spawn.ProcessRaisedException", "-- Process 0 ..."),
             ("KeyError", "'accuracy'")]  # fmt: skip
    d = classify("torch.multiprocessing.spawn.ProcessRaisedException", "", chain=chain)
    assert d.failure_class is FailureClass.USER_ERROR and d.summary.startswith("KeyError")


# ----------------------------------------------------------------------------- recognised


def test_unrecognised_text_says_so() -> None:
    d = classify("RuntimeError", "the flux capacitor melted")
    assert d.failure_class is FailureClass.USER_ERROR and not d.recognised
    assert d.summary.startswith(f"{NOT_RECOGNISED}: ") and d.to_dict()["recognised"] is False
    tail = classify(None, "", "epoch 3: 100%|█████| 50/50\nsaving checkpoi", exit_code=1)
    assert tail.failure_class is FailureClass.WORKER_LOST and not tail.recognised
    # A CUDA error whose code is unknown: still assumed sticky, but flagged.
    cuda = classify("RuntimeError", "CUDA error: a brand new failure")
    assert cuda.sticky and not cuda.recognised and cuda.summary.startswith(NOT_RECOGNISED)


def test_plain_bugs_and_known_failures_are_recognised() -> None:
    assert classify("KeyError", "'accuracy'").recognised
    assert classify("torch.OutOfMemoryError", "CUDA out of memory.").recognised
    assert classify(exit_code=-9).recognised  # no text: nothing to send
    assert classify().recognised


# ----------------------------------------------------------------------------- speed


def _corpus_texts() -> list[str]:
    texts = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        texts += [json.loads(line)["text"] for line in path.read_text().splitlines() if line]
    return texts


def test_twelve_kilobyte_tracebacks_classify_like_their_tail() -> None:
    """A 12 KB traceback (bench/classify_speed.py times these against the 5 ms goal) is classified
    as its own error text is: the padding frames, which mention "cuda error nccl" in a comment,
    never decide the class."""
    from bench.classify_speed import padded

    for text in _corpus_texts()[::3]:
        alone = classify("RuntimeError", text.splitlines()[-1] if text else "", text)
        full = padded(text)
        assert len(full) == 12 * 1024 or len(text) >= 12 * 1024
        got = classify("RuntimeError", full.splitlines()[-1], full)
        assert got.failure_class == alone.failure_class, text[:200]


# ----------------------------------------------------------------------------- properties

ANYTHING = st.one_of(
    st.none(),
    st.text(),
    st.binary(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.one_of(st.tuples(st.text(), st.text()), st.text(), st.none()), max_size=4),
    st.sampled_from([ValueError("x"), object(), b"\x80", "\udcff", [(b"\xff", 3)]]),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ANYTHING, ANYTHING, ANYTHING, ANYTHING, ANYTHING)
def test_new_parameters_never_raise(
    exception_type: Any, message: Any, traceback: Any, error_code: Any, chain: Any
) -> None:
    d = classify(exception_type, message, traceback, error_code=error_code, chain=chain)
    assert isinstance(d.failure_class, FailureClass) and d.summary.strip()
    assert "\n" not in d.summary and isinstance(d.recognised, bool)
    json.dumps(d.to_dict())


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=0, max_size=4000), st.integers(min_value=-(2**70), max_value=2**70))
def test_binary_input_with_codes(raw: bytes, code: int) -> None:
    d = classify(b"RuntimeError", raw, raw, error_code=code, chain=[(raw, raw)])  # type: ignore[arg-type, list-item]
    json.dumps(d.to_dict())
