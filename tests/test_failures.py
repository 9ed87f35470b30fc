"""The failure classifier against real error texts, the policy, and properties of classify.

Two corpora of real outputs, each row with its source: the shared dev corpus
(``../shared/cuda-errors-dev.jsonl``, skipped when absent) and ``tests/corpus/cuda_errors.jsonl``.
Every row must get its expected class, and its stickiness where the row gives one.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpo.failures import (
    DEFAULT_POLICY,
    Action,
    Diagnosis,
    FailureClass,
    Policy,
    classify,
    diagnosis_for,
)
from hpo.failures import rules as rules_module
from hpo.failures.classes import CLASS_INFO
from hpo.failures.rules import RULES, Evidence, literal_anchor, match_rules

HERE = Path(__file__).resolve().parent
OWN_CORPUS = HERE / "corpus" / "cuda_errors.jsonl"
DEV_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "cuda-errors-dev.jsonl"
FIELDS = {
    "id",
    "text",
    "exception_type",
    "signal",
    "expected_class",
    "sticky",
    "source",
    "note",
}


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


OWN_ROWS = load(OWN_CORPUS)
DEV_ROWS = load(DEV_CORPUS) if DEV_CORPUS.exists() else []
DEV_MISSING = pytest.mark.skipif(
    not DEV_ROWS, reason=f"shared dev corpus not found at {DEV_CORPUS}"
)


# classify accepts anything; tests that pass bytes or junk call it through this alias.
loose_classify: Callable[..., Diagnosis] = classify


def diagnose(row: dict[str, Any]) -> Diagnosis:
    return classify(row["exception_type"], row["text"], signal=row["signal"])


def check_row(row: dict[str, Any]) -> None:
    diagnosis = diagnose(row)
    assert diagnosis.failure_class.value == row["expected_class"], (
        f"{row['id']}: got {diagnosis.failure_class} via rule {diagnosis.rule} ({row['source']})"
    )
    if row["sticky"] is not None:
        assert diagnosis.sticky == row["sticky"], f"{row['id']}: sticky via {diagnosis.rule}"


# ----------------------------------------------------------------------------- corpora


@pytest.mark.parametrize("row", OWN_ROWS, ids=[r["id"] for r in OWN_ROWS])
def test_own_corpus(row: dict[str, Any]) -> None:
    check_row(row)


@DEV_MISSING
@pytest.mark.parametrize("row", DEV_ROWS, ids=[r["id"] for r in DEV_ROWS])
def test_dev_corpus(row: dict[str, Any]) -> None:
    check_row(row)


def accuracy(rows: list[dict[str, Any]]) -> tuple[int, int]:
    right = 0
    for row in rows:
        diagnosis = diagnose(row)
        sticky_ok = row["sticky"] is None or diagnosis.sticky == row["sticky"]
        right += diagnosis.failure_class.value == row["expected_class"] and sticky_ok
    return right, len(rows)


@DEV_MISSING
def test_dev_corpus_accuracy_is_total() -> None:
    right, total = accuracy(DEV_ROWS)
    assert right == total, f"dev corpus: {right}/{total}"


def test_own_corpus_is_well_formed() -> None:
    assert len(OWN_ROWS) >= 100
    ids = [row["id"] for row in OWN_ROWS]
    assert len(ids) == len(set(ids)), "duplicate ids"
    known = {c.value for c in FailureClass}
    for row in OWN_ROWS:
        assert set(row) == FIELDS, row["id"]
        assert row["text"].strip() and row["source"].strip() and row["note"].strip(), row["id"]
        assert row["expected_class"] in known, row["id"]
        assert row["sticky"] in (True, False, None), row["id"]
    # every class a text can show (supervisor_lost is only observed by the supervisor)
    present = {row["expected_class"] for row in OWN_ROWS}
    assert known - present <= {FailureClass.SUPERVISOR_LOST.value}


@DEV_MISSING
def test_own_corpus_does_not_copy_the_dev_corpus() -> None:
    dev_texts = {row["text"] for row in DEV_ROWS}
    dev_ids = {row["id"] for row in DEV_ROWS}
    for row in OWN_ROWS:
        assert row["text"] not in dev_texts and row["id"] not in dev_ids, row["id"]


# ----------------------------------------------------------------------------- API


def test_acceptance_example() -> None:
    d = classify("torch.AcceleratorError", "CUDA error: an illegal memory access was encountered")
    assert f"{d.failure_class} {d.action} {d.sticky}" == "cuda_context_corrupted retry True"
    assert str(d.failure_class) == "cuda_context_corrupted"
    assert d.cuda and d.cuda_error_type == "illegal_memory_access"
    assert d.rule == "cuda-illegal-memory-access"


def test_enums_print_their_values() -> None:
    for member in (*FailureClass, *Action):
        assert str(member) == member.value == f"{member}"
        assert member == member.value  # str enums compare to plain strings
    assert [c.value for c in FailureClass] == [
        "oom",
        "cuda_context_corrupted",
        "cudnn",
        "cublas",
        "nccl",
        "device_unavailable",
        "numerical",
        "host_oom",
        "segfault",
        "timeout",
        "data_error",
        "user_error",
        "worker_lost",
        "supervisor_lost",
        "interrupted",
    ]
    assert [a.value for a in Action] == ["prune", "retry", "fail", "quarantine", "stop"]


def test_default_policy() -> None:
    expected = {
        "oom": "prune",
        "cuda_context_corrupted": "retry",
        "cudnn": "retry",
        "cublas": "retry",
        "nccl": "retry",
        "device_unavailable": "quarantine",
        "numerical": "prune",
        "host_oom": "prune",
        "segfault": "retry",
        "timeout": "fail",
        "data_error": "fail",
        "user_error": "fail",
        "worker_lost": "retry",
        "supervisor_lost": "retry",
        "interrupted": "retry",
    }
    assert {c.value: a.value for c, a in DEFAULT_POLICY.items()} == expected
    with pytest.raises(TypeError):
        DEFAULT_POLICY[FailureClass.OOM] = Action.RETRY  # type: ignore[index]


def test_diagnosis_to_dict_is_json() -> None:
    d = classify("torch.cuda.OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB")
    data = d.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["failure_class"] == "oom" and data["action"] == "prune"
    assert data["sticky"] is False and data["cuda_error_type"] == "out_of_memory"
    assert set(data) == {f.name for f in dataclasses.fields(Diagnosis)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.sticky = True  # type: ignore[misc]


@pytest.mark.parametrize("failure_class", list(FailureClass))
def test_diagnosis_for_every_class(failure_class: FailureClass) -> None:
    d = diagnosis_for(failure_class)
    assert d.failure_class is failure_class
    assert d.action is DEFAULT_POLICY[failure_class]
    assert d.summary and d.hint and d.rule is None
    assert d.sticky == CLASS_INFO[failure_class].sticky
    custom = diagnosis_for(failure_class, summary="trial 7 ran for 3600 s", hint="raise timeout")
    assert (custom.summary, custom.hint) == ("trial 7 ran for 3600 s", "raise timeout")
    assert diagnosis_for(failure_class.value).failure_class is failure_class  # type: ignore[arg-type]


def test_supervisor_observed_failures() -> None:
    timeout = diagnosis_for(FailureClass.TIMEOUT, "trial exceeded 600 s")
    assert (timeout.action, timeout.sticky, timeout.cuda) == (Action.FAIL, False, False)
    assert diagnosis_for(FailureClass.HOST_OOM).action is Action.PRUNE
    assert diagnosis_for(FailureClass.SUPERVISOR_LOST).action is Action.RETRY
    assert diagnosis_for(FailureClass.INTERRUPTED).action is Action.RETRY  # not the trial's fault


# ----------------------------------------------------------------------------- Policy


def test_policy_defaults_and_overrides() -> None:
    assert Policy().as_dict() == {c.value: a.value for c, a in DEFAULT_POLICY.items()}
    assert Policy(None) == Policy({}) == Policy()
    policy = Policy({"oom": "retry", "Numerical": "FAIL", "cuda-context-corrupted": "quarantine"})
    assert policy.action_for(FailureClass.OOM) is Action.RETRY
    assert policy.action_for(FailureClass.NUMERICAL) is Action.FAIL
    assert policy.action_for(FailureClass.CUDA_CONTEXT_CORRUPTED) is Action.QUARANTINE
    assert policy.action_for(FailureClass.USER_ERROR) is Action.FAIL  # untouched default
    assert policy.action_for("oom") is Action.RETRY  # type: ignore[arg-type]
    assert policy.overrides() == {
        "oom": "retry",
        "numerical": "fail",
        "cuda_context_corrupted": "quarantine",
    }
    assert len(policy.as_dict()) == len(FailureClass)
    assert Policy({FailureClass.OOM: Action.STOP}).action_for(FailureClass.OOM) is Action.STOP
    assert "oom" in repr(policy)
    assert hash(Policy({"oom": "retry"})) == hash(Policy({"OOM": "retry"}))


def test_policy_rejects_unknown_class() -> None:
    with pytest.raises(ValueError) as info:
        Policy({"oomm": "retry"})
    message = str(info.value)
    assert message.startswith("on_failure: unknown failure class 'oomm' (known: oom, ")
    assert "\n" not in message and "interrupted" in message


def test_policy_rejects_unknown_action() -> None:
    with pytest.raises(ValueError) as info:
        Policy({"oom": "skip"})
    assert str(info.value) == (
        "on_failure.oom: unknown action 'skip' (known: prune, retry, fail, quarantine, stop)"
    )


@pytest.mark.parametrize(
    "overrides",
    [["oom"], "oom: retry", {"oom": 3}, {3: "retry"}, {None: "retry"}, {"oom": None}],
)
def test_policy_rejects_malformed(overrides: Any) -> None:
    with pytest.raises(ValueError, match=r"^on_failure"):
        Policy(overrides)


# ----------------------------------------------------------------------------- signals and exits


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"signal": 11}, FailureClass.SEGFAULT),
        ({"signal": "SIGSEGV"}, FailureClass.SEGFAULT),
        ({"signal": "SEGV"}, FailureClass.SEGFAULT),
        ({"signal": "Signals.SIGBUS"}, FailureClass.SEGFAULT),
        ({"signal": signal.SIGABRT}, FailureClass.SEGFAULT),
        ({"signal": "SIGIOT"}, FailureClass.SEGFAULT),
        ({"signal": 4}, FailureClass.SEGFAULT),
        ({"signal": -7}, FailureClass.SEGFAULT),
        ({"signal": "6"}, FailureClass.SEGFAULT),
        ({"signal": 9}, FailureClass.HOST_OOM),
        ({"signal": "SIGKILL"}, FailureClass.HOST_OOM),
        ({"signal": "SIGTERM"}, FailureClass.INTERRUPTED),
        ({"signal": 2}, FailureClass.INTERRUPTED),
        ({"signal": "SIGHUP"}, FailureClass.INTERRUPTED),
        ({"exit_code": -9}, FailureClass.HOST_OOM),
        ({"exit_code": 137}, FailureClass.HOST_OOM),
        ({"exit_code": -11}, FailureClass.SEGFAULT),
        ({"exit_code": 139}, FailureClass.SEGFAULT),
        ({"exit_code": 134}, FailureClass.SEGFAULT),
        ({"exit_code": -15}, FailureClass.INTERRUPTED),
        ({"exit_code": 143}, FailureClass.INTERRUPTED),
        ({"exit_code": 1}, FailureClass.WORKER_LOST),
        ({"exit_code": 0}, FailureClass.WORKER_LOST),
        ({"exit_code": 255}, FailureClass.WORKER_LOST),
        ({"signal": 10}, FailureClass.WORKER_LOST),  # SIGUSR1: no rule, no evidence
        ({}, FailureClass.WORKER_LOST),
    ],
)
def test_signals_and_exit_codes(kwargs: dict[str, Any], expected: FailureClass) -> None:
    assert classify(**kwargs).failure_class is expected


def test_explicit_signal_beats_exit_code() -> None:
    assert classify(exit_code=137, signal="SIGSEGV").failure_class is FailureClass.SEGFAULT


# ----------------------------------------------------------------------------- precedence


def test_text_evidence_beats_the_signal() -> None:
    nccl = "terminate called after throwing an instance of 'std::runtime_error'\n  what():  NCCL error in: ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.18.1"
    assert classify(None, "", nccl, signal="SIGABRT").failure_class is FailureClass.NCCL
    dsa = "terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: device-side assert triggered"
    d = classify(None, "", dsa, signal=6)
    assert d.failure_class is FailureClass.CUDA_CONTEXT_CORRUPTED and d.sticky
    shm = "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)."
    assert classify(None, shm, signal="SIGBUS").failure_class is FailureClass.HOST_OOM


def test_chained_traceback_finds_the_cause() -> None:
    traceback = """Traceback (most recent call last):
  File "train.py", line 40, in step
    loss.backward()
RuntimeError: CUDA error: an illegal memory access was encountered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "objective.py", line 12, in objective
    raise TrialError("step failed") from exc
objective.TrialError: step failed
"""
    d = classify("objective.TrialError", "step failed", traceback)
    assert d.failure_class is FailureClass.CUDA_CONTEXT_CORRUPTED and d.sticky


def test_log_tail_cut_mid_line() -> None:
    tail = "epoch 3: 100%|█████| 50/50\nRuntimeError: CUDA out of memory. Tried to alloc"
    assert classify(None, "", tail, exit_code=1).failure_class is FailureClass.OOM
    lost = classify(None, "", "epoch 3: 100%|█████| 50/50\nsaving checkpoi", exit_code=1)
    assert lost.failure_class is FailureClass.WORKER_LOST


def test_unknown_exception_is_user_error_with_its_line() -> None:
    d = classify("KeyError", "'accuracy'", "Traceback ...\nKeyError: 'accuracy'")
    assert d.failure_class is FailureClass.USER_ERROR and d.rule is None
    assert d.summary == "KeyError: 'accuracy'"
    tail = "Traceback (most recent call last):\n  File 'x.py'\nAttributeError: 'NoneType' object has no attribute 'shape'\n"
    assert classify(None, "", tail, exit_code=1).failure_class is FailureClass.USER_ERROR


@pytest.mark.parametrize(
    ("exception_type", "message", "expected"),
    [
        ("ValueError", "The objective returned nan, which is not a finite number", "numerical"),
        ("ValueError", "The objective returned inf, which is not a finite number", "numerical"),
        ("ValueError", "The objective returned -inf, which is not a finite number", "numerical"),
        (None, "[W 2026-01-01 00:00:00,000] Trial 3 failed with value nan.", "numerical"),
        (None, "The value nan is not acceptable.", "numerical"),
        ("TypeError", "The objective returned None; it must return a float", "user_error"),
        ("TypeError", "The objective returned a str ('x'); it must return a float", "user_error"),
        (None, "[W 2026-01-01 00:00:00,000] Trial 3 failed with value None.", "user_error"),
        ("hpo.guards.DataError", "labels contain 12 but num_labels is 10", "data_error"),
        ("hpo.guards.NumericalError", "loss is nan at step 40", "numerical"),
        ("hpo.guards.DataError", "token id 50257 >= vocab size; CUDA would assert", "data_error"),
        ("KeyboardInterrupt", "", "interrupted"),
        ("MemoryError", "", "host_oom"),
        ("ray.exceptions.OutOfMemoryError", "Task was killed", "host_oom"),
        ("OutOfMemoryError", "CUDA out of memory. Tried to allocate 20.00 MiB", "oom"),
        ("torch.OutOfMemoryError", "", "oom"),
        ("torch.AcceleratorError", "CUDA error: out of memory", "oom"),
        ("torch.AcceleratorError", "CUDA error: invalid argument", "cuda_context_corrupted"),
        (
            "RuntimeError",
            "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
            "oom",
        ),
        (
            "RuntimeError",
            "Expected all tensors to be on the same device, but found cuda:0 and cpu!",
            "user_error",
        ),
    ],
)
def test_specific_cases(exception_type: str | None, message: str, expected: str) -> None:
    assert classify(exception_type, message).failure_class.value == expected


def test_cuda_error_type_from_status_codes() -> None:
    d = classify("RuntimeError", "cuDNN error: CUDNN_STATUS_BAD_PARAM")
    assert (d.failure_class, d.cuda_error_type) == (FailureClass.CUDNN, "cudnn_bad_param")
    assert "CUDNN_STATUS_BAD_PARAM" in d.summary
    d = classify("torch.AcceleratorError", "CUDA error: invalid configuration argument\nSearch for")
    # cudaErrorInvalidConfiguration (9): a launch that never ran; the context stays usable.
    assert d.cuda_error_type == "invalid_configuration_argument" and not d.sticky
    assert (d.failure_class, d.error_code) == (FailureClass.USER_ERROR, 9)
    d = classify("RuntimeError", "FIND was unable to find an engine to execute this computation")
    assert d.cuda_error_type == "cudnn_find_no_engine" and "workspace" in d.hint


def test_hints_name_the_remedies() -> None:
    oom = classify("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 1.00 GiB")
    assert "expandable_segments:True" in oom.hint and "batch" in oom.hint
    assert "accumulation" in oom.hint
    dsa = classify("RuntimeError", "CUDA error: device-side assert triggered")
    assert "CUDA_LAUNCH_BLOCKING=1" in dsa.hint and "hpo replay" in dsa.hint
    assert "labels" in dsa.hint
    device = classify("RuntimeError", "CUDA error: no CUDA-capable device is detected")
    assert "nvidia-smi" in device.hint and "hpo doctor" in device.hint
    assert device.action is Action.QUARANTINE


# ----------------------------------------------------------------------------- the rules table


def test_rules_table_is_well_formed() -> None:
    ids = [rule.id for rule in RULES]
    assert len(ids) == len(set(ids))
    for rule in RULES:
        assert rule.summary and (rule.text or rule.types or rule.signals), rule.id
        assert rule.failure_class in CLASS_INFO
        if rule.code_type or "{code}" in rule.summary:
            assert any("(?P<code>" in p for p in rule.text) or rule.signals, rule.id


def test_literal_anchor() -> None:
    assert literal_anchor(r"CUDA error: (?P<code>\w+)") == "cuda error: "
    assert literal_anchor(r"a|b") is None  # top-level alternation: no mandatory literal
    assert literal_anchor(r"devices? busy") == "device"  # the optional "s" ends the run
    assert literal_anchor(r"x(?:abc)y") == "xabcy"
    assert literal_anchor(r"(?:Aborted|Bus error)\s*\(core dumped\)") == "(core dumped)"
    assert literal_anchor(r"\bXid\b[^\n]{0,40}\b79\b") == "xid"
    # Two characters only when one is rare in tracebacks: the terminal's "^C", not "[(" or "is".
    assert literal_anchor(r"\S\^C$") == "^c"
    assert literal_anchor(r"[\s:]\[\(-?\d") is None
    assert literal_anchor(r"\bis\b") is None
    # A backreference matches what its group matched, not its name.
    assert literal_anchor(r"\[(?P<n>\d+)\] index (?P=n) is out of bounds") == " is out of bounds"


def test_every_text_cue_has_a_literal_anchor() -> None:
    """A cue without one is run over every text. Two such cues, with one anchored only on
    " error " and one only on "nan", cost 0.3 ms of the 1.4 ms mean on 12 KB texts
    (bench/classify_speed.py) until each was split into alternatives with a literal."""
    assert [(r.id, p) for r in RULES for p in r.text if literal_anchor(p) is None] == []


def test_the_word_of_an_anchor_is_delimited_inside_it() -> None:
    """The prefilter's word is one the text's split() must hold wherever the anchor occurs."""
    word_of = rules_module._word_of
    assert word_of("ran out of memory in memory space ") == "memory"
    assert word_of("cuda error: ") == "error:"  # whitespace on both sides within the anchor
    assert word_of("misaligned address") is None  # either word may run on in the text
    assert word_of("xid") is None
    assert word_of(None) is None
    for anchor in ("cuda error: ", "ran out of memory in memory space "):
        word = word_of(anchor)
        for text in (f"x{anchor}y", f"RuntimeError:{anchor}\n", f"\t{anchor}"):
            assert word in text.split(), (anchor, text)


def test_anchor_prefilter_never_changes_a_result() -> None:
    rows = OWN_ROWS + DEV_ROWS
    without = tuple(dataclasses.replace(c, anchors=()) for c in rules_module._COMPILED)
    for row in rows:
        text = row["text"]
        folded = text.casefold()
        words = set(folded.split())
        for compiled in rules_module._COMPILED:
            for anchor, word, pattern, _blind in compiled.parts:
                if anchor is not None and pattern.search(text):
                    assert anchor in folded, (compiled.rule.id, row["id"])
                    assert word is None or word in words, (compiled.rule.id, row["id"], word)
    expected = [diagnose(row) for row in rows]
    original = rules_module._COMPILED
    try:
        rules_module._COMPILED = without
        assert [diagnose(row) for row in rows] == expected
    finally:
        rules_module._COMPILED = original


def _reference_search_near(
    anchor: str, pattern: re.Pattern[str], text: str, folded: str
) -> re.Match[str] | None:
    """Every window around every occurrence, in order, no shortcut: what _search_near must
    return."""
    index = folded.find(anchor)
    while index >= 0:
        low, high = rules_module._window(anchor, text, index)
        found = pattern.search(text, low, high)
        if found is not None:
            return found
        index = folded.find(anchor, max(high, index + 1))
    return None


def test_every_cue_match_fits_the_lines_around_its_anchor() -> None:
    """_search_near searches the lines around each occurrence of a cue's anchor, and past
    _MAX_DISTINCT windows scans the rest of the text: the two agree only if every match of a
    cue lies within the window of an anchor occurrence inside it. A cue that reaches further
    (an unbounded ``\\s*`` across blank lines, a run of lines) would match in one and not the
    other, depending on what else the log repeats. Checked on every corpus text."""
    reaching = set()
    for row in OWN_ROWS + DEV_ROWS:
        text = row["text"]
        folded = text.casefold()
        if len(folded) != len(text):
            continue
        for compiled in rules_module._COMPILED:
            for part in compiled.parts:
                if part.anchor is None or part.anchor not in folded:
                    continue
                for found in part.pattern.finditer(text):
                    index = folded.find(part.anchor, found.start())
                    fits = False
                    while 0 <= index < found.end():
                        low, high = rules_module._window(part.anchor, text, index)
                        if low <= found.start() and found.end() <= high:
                            fits = True
                            break
                        index = folded.find(part.anchor, index + 1)
                    if not fits:
                        reaching.add((compiled.rule.id, part.pattern.pattern[:60], row["id"]))
    assert reaching == set()


def test_distinct_windows_have_the_bounds_of_window() -> None:
    """_distinct_windows finds each window's bounds by bisecting the newlines' positions; they
    must be _window's, on texts with blank lines, anchors at either end, and anchors that
    hold a newline."""
    rng = random.Random(7)
    pieces = ["nan", "\n", "a", "1", "x nan\n", "\n\n", "nan\nnan", "na"]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
        folded = text.casefold()
        for anchor in ("nan", "\nnan", "nan\n", "a\n"):
            index = folded.find(anchor)
            bounds = []
            while index >= 0:
                low, high = rules_module._window(anchor, text, index)
                bounds.append((index, low, high))
                index = folded.find(anchor, max(high, index + 1))
            got = rules_module._distinct_windows(anchor, text, folded)
            # Every window it keeps is _window's; the ones it skips repeat an earlier text.
            assert set(got) <= set(bounds), (text, anchor)
            kept = {text[max(0, low - rules_module._LOOKBEHIND) : high] for _, low, high in got}
            for _, low, high in bounds:
                assert text[max(0, low - rules_module._LOOKBEHIND) : high] in kept


def _lookbehind_widths(sub: Any) -> list[int]:
    """The widest match of every lookbehind in a parsed pattern (``re._parser``)."""
    from re import _constants, _parser

    found = []
    for op, av in sub:
        if op in (_constants.ASSERT, _constants.ASSERT_NOT) and av[0] == -1:
            found.append(av[1].getwidth()[1])
        stack = [av]
        while stack:
            item = stack.pop()
            if isinstance(item, _parser.SubPattern):
                found += _lookbehind_widths(item)
            elif isinstance(item, (tuple, list)):
                stack.extend(item)
    return found


def test_no_lookbehind_sees_past_what_a_repeated_window_keeps() -> None:
    """Windows are called repeats when their text and the _LOOKBEHIND characters before them
    are the same; a cue whose lookbehind reached further could differ between them."""
    from re import _parser

    widths = {
        (compiled.rule.id, part.pattern.pattern): max(found)
        for compiled in rules_module._COMPILED
        for part in compiled.parts
        if (found := _lookbehind_widths(_parser.parse(part.pattern.pattern, part.pattern.flags)))
    }
    assert widths  # the walk finds them (cuda-no-device has one of 30 characters)
    assert {k: w for k, w in widths.items() if w >= rules_module._LOOKBEHIND} == {}


def test_repeated_windows_are_searched_once_and_nothing_is_missed() -> None:
    """Past _MAX_WINDOWS occurrences of an anchor, a window whose text (and what a lookbehind
    sees before it) an earlier window had is skipped, and for a digit-blind cue one that had
    it but for its digits: texts that repeat lines (some with a counter on each), with matches
    late, between copies, or only in one copy's context, give what a search of every window
    gives."""
    rng = random.Random(16)
    lines = [
        "loss: 0.25 nan-free step",
        "ValueError: x no NaNs detected in y",
        "Epoch 3: loss = nan",
        "CUDA error: an illegal memory access was encountered",
        "return : nan-",
        "Error Error Error",
        "RuntimeError: CUDA error: out of memory",
        '  File "/app/train.py", line 3, in step',
        "[rank0]: NCCL WARN Cuda failure 'out of memory'",
        "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old",
        "Traceback (most recent call last):",
        "",
    ]
    # Lines whose digits change from copy to copy, some of them read by cues that tell digits
    # apart (exit codes, CUDA error numbers, a literal index against the one in the error).
    counted = [
        "ValueError: x{i} no NaNs detected in y",
        "episode {i} return : nan-",
        "step {i} loss = nan lr 1e-4",
        "exitcode  : -{i} (pid: 4{i})",
        "CUDA error {i}: an illegal memory access was encountered",
        "    y = x[{i}]\nIndexError: index {j} is out of bounds for dimension 0 with size 1",
        "Job 12{i} exited with exit code 1{i}",
        "[{i}]\ttrain-rmse:nan",
    ]
    for case in range(80):
        if case % 2:
            filler = rng.choice(lines[:2] + lines[4:6])
            body = [filler] * rng.randint(20, 120)
        else:
            template = rng.choice(counted)
            body = [
                template.format(i=i % rng.choice((7, 10, 13, 100)), j=rng.choice((1, 2, i)))
                for i in range(rng.randint(20, 160))
            ]
        for _ in range(rng.randint(0, 3)):
            body.insert(rng.randint(0, len(body)), rng.choice(lines))
        text = "\n".join(body)
        folded = text.casefold()
        windows = rules_module._Windows()
        for compiled in rules_module._COMPILED:
            for anchor, _word, pattern, blind in compiled.parts:
                if anchor is None or anchor not in folded:
                    continue
                got = rules_module._search_near(anchor, pattern, text, folded, windows, blind)
                want = _reference_search_near(anchor, pattern, text, folded)
                assert (got and got.span()) == (want and want.span()), (compiled.rule.id, anchor)


def test_match_rules_takes_the_highest_priority() -> None:
    text = "CUDA error: unspecified launch failure\nSegmentation fault (core dumped)"
    found = match_rules(Evidence(text=text, signal="SIGSEGV"))
    assert found is not None and found.rule.id == "cuda-unspecified-launch-failure"
    assert match_rules(Evidence(text="all good")) is None


def test_huge_log_tail_is_fast() -> None:
    noise = "step 1 loss 0.25 lr 1e-4 (all fine)\n" * 300_000  # ~11 MB
    tail = noise + "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    start = time.perf_counter()
    d = classify(None, "", tail, exit_code=1)
    elapsed = time.perf_counter() - start
    assert d.failure_class is FailureClass.CUDA_CONTEXT_CORRUPTED
    assert elapsed < 1.0, f"classify took {elapsed:.2f} s on an 11 MB tail"
    start = time.perf_counter()
    loose_classify("RuntimeError", noise.encode() + b"\xff\xfe", noise, 1, "SIGSEGV")
    assert time.perf_counter() - start < 1.0


# ----------------------------------------------------------------------------- properties

ANYTHING = st.one_of(
    st.none(),
    st.text(),
    st.binary(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.sampled_from([RuntimeError, ValueError("x"), object(), b"\x80\x81", "\udcff"]),
)
CUES = [
    "CUDA error: ",
    "device-side assert triggered",
    "an illegal memory access was encountered",
    "CUDA out of memory. Tried to allocate 2.00 GiB",
    "CUBLAS_STATUS_",
    "CUDNN_STATUS_",
    "NCCL error",
    "Watchdog caught collective operation timeout",
    "Segmentation fault (core dumped)",
    "killed by signal: ",
    "exitcode: -9",
    "Killed",
    "Traceback (most recent call last):\n",
    "RuntimeError: ",
    "ValueError: ",
    "returned nan",
    "Target 3 is out of bounds",
    "\n",
    " ",
    "(",
    "`",
    "\x00",
    "\udcff",
    "é",
]
CUE_TEXT = st.lists(st.one_of(st.sampled_from(CUES), st.text(max_size=20)), max_size=30).map(
    "".join
)


def assert_valid(d: Diagnosis) -> None:
    assert isinstance(d, Diagnosis)
    assert isinstance(d.failure_class, FailureClass)
    assert d.action is DEFAULT_POLICY[d.failure_class]
    assert d.summary.strip() and d.hint.strip()
    assert "\n" not in d.summary
    json.dumps(d.to_dict())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ANYTHING, ANYTHING, ANYTHING, ANYTHING, ANYTHING)
def test_classify_never_raises_on_anything(
    exception_type: Any, message: Any, traceback: Any, exit_code: Any, sig: Any
) -> None:
    assert_valid(loose_classify(exception_type, message, traceback, exit_code, sig))


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.none(), st.sampled_from(["RuntimeError", "torch.AcceleratorError", ""])),
    CUE_TEXT,
    CUE_TEXT,
    st.one_of(st.none(), st.integers(min_value=-300, max_value=300)),
    st.one_of(st.none(), st.integers(min_value=-70, max_value=70), st.text(max_size=12)),
)
def test_classify_is_total_and_deterministic_on_error_like_text(
    exception_type: str | None, message: str, traceback: str, exit_code: int | None, sig: Any
) -> None:
    first = classify(exception_type, message, traceback, exit_code, sig)
    assert_valid(first)
    assert classify(exception_type, message, traceback, exit_code, sig) == first
    as_bytes = loose_classify(
        exception_type,
        message.encode("utf-8", "surrogatepass"),
        traceback.encode("utf-8", "surrogatepass"),
        exit_code,
        sig,
    )
    assert_valid(as_bytes)


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=1, max_size=2000))
def test_non_utf8_bytes_are_read_leniently(raw: bytes) -> None:
    assert_valid(loose_classify(b"RuntimeError", raw + b"\xff" + raw, raw))


def test_huge_inputs_of_every_kind() -> None:
    huge = "x" * 10_000_000
    for args in [
        (huge, huge, huge, huge, huge),
        (None, huge.encode(), b"\xff" * 10_000_000, None, None),
        (None, "", "", 10**100, -(10**100)),
        (None, "", "", float("nan"), float("inf")),
    ]:
        assert_valid(loose_classify(*args))
