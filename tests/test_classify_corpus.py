"""The corpus behind the rules and its held-out split.

``tests/corpus/cuda_errors.jsonl`` holds the rows the rules were written and tuned on;
``tests/corpus/heldout.jsonl`` holds a split that the rules were never tuned on (collected
after the rules were last changed, labelled before the classifier was run on it, evaluated
once). Every row is a real error output copied verbatim from a public bug report, with that
report's URL in ``source``.

Once a split has been evaluated and its misses looked at, it can no longer be held out: it is
moved into the training file (ids kept), its misses are fixed with general cues, and a fresh
split is collected blind. v3 (211 rows), v4 (78 rows) and v5 (63 rows, class 52/63 = 82.5%,
stickiness 62/63 at 1b9a4eb) went that way.

v6 (118 rows, class 104/118 = 88.1%, stickiness 118/118 at 0e7543b) went the same way: it
joined the training file with four labels brought into line with the house conventions (see
docs/failures.md), and its misses were fixed with the cues in tests/test_classify_cues.py.

The held-out rows are measured, not required to pass one by one: issue 16 asks for class
accuracy >= 97% and stickiness accuracy >= 98% on a stratified fifth of the corpus (see the
tests below and docs/failures.md). ``MEASURED_CLASS_FLOOR`` keeps a rule change from losing
ground on the split in the repository once it has been measured.

v7 (336 rows, a stratified fifth, class 269/336 = 80.1%, stickiness 334/336 = 99.4% at
fa8bd05) joined the training file with the 61 rows drawn out of it to keep it a fifth; its misses
were fixed with the cues in tests/test_classify_cues.py.

v8 (428 rows, a stratified fifth, class 310/428 = 72.4%, stickiness 422/428 = 98.6% at
b42b6f8) went the same way, with the 55 rows drawn out of it.

v9 (360 rows collected blind by eight helpers, 13.9% of the corpus and uneven: their search
budget ran out, so about half of it came from error output kept in repositories rather than
issue threads; class 276/360 = 76.7%, stickiness 354/360 = 98.3% at 63a52ed) went the same
way: three labels were brought into line with the house conventions, one row that shows two
causes (a ModuleNotFoundError, then the Slurm job cancelled) was dropped as ambiguous, and its
misses were fixed with the cues in tests/test_classify_cues.py (table ``v9``).

v10 (653 rows collected blind by nine helpers in two waves, a stratified fifth: 20.2% of the
corpus, every class 17-22% of its rows; class 504/653 = 77.2%, stickiness 651/653 = 99.7% at
3b57263) went the same way: two older rows were relabelled to a new convention (a library's
finiteness check on its input is numerical), two rows that show two causes were dropped, and
its misses were fixed with the cues in tests/test_classify_cues.py (table ``v10``).

v11 (225 rows collected blind by four helpers while v10's misses were being fixed, 6.5% of the
corpus and uneven; class 198/225 = 88.0%, stickiness 224/225 = 99.6% at 19aec37) went the same
way: one row's signal was corrected (the merge had read macOS's signal 10, SIGBUS, as Linux's
SIGUSR1), and its misses were fixed with the cues in tests/test_classify_cues.py (table
``v11``).

The split in the repository is v12: 693 rows collected blind by ten helpers in two waves while
v11's misses were being fixed, committed before the rules (frozen at 21b5fdd) were run on it.
It is 16.7% of the corpus; nccl (19 rows, 7.5%) and timeout (22 rows, 10.6%) fall short of a
fifth, because nearly every public thread with those errors is already in the corpus. Its
overlap rule is tighter than before (docs/failures.md, "Method"). The stratified-fifth test is
a strict xfail that records this. Measured once: class 562/693 = 81.1%, stickiness 685/693 =
98.8%.

v12 was then cut in two by source, stratified by class: half A (350 rows) joined the training
file and its misses were fixed (table ``v12`` in tests/test_classify_cues.py); half B (343 rows,
class 277/343 = 80.8% at 21b5fdd) stays here, its texts unread, to measure how far those fixes
carry. Measured once more at 2c414c8, after those fixes: class 289/343 = 84.3%, stickiness
341/343 = 99.4%.

v13 (77 rows collected blind by two helpers, rules frozen at 9b8e5fd) was added to the
held-out file next to half B and committed before the rules were run on it. Measured once at
9b8e5fd: v13 class 72/77 = 93.5%, stickiness 77/77; half B unchanged at 289/343; the file
361/420 = 86.0%, stickiness 418/420.

Half B and v13 then joined the training file (417 rows) while v14 was collected blind: one
older row relabelled to a new convention (an NCCL library that cannot be loaded is user_error),
three rows that name no failure dropped (two progress logs whose loss reads nan or 8.6e16, one
reporter's own printout of a cuDNN status number), and the other 56 misses fixed with the cues
in tests/test_classify_cues.py (table ``v12b``). ``MEASURED_CLASS_FLOOR`` applies to the next
split once it has been measured.

The split in the repository is v14: 302 rows collected blind by seven helpers (one pair of
classes each) while half B's and v13's misses were being fixed, committed before the rules
(frozen at af5fa01) were run on it. It is 6.7% of the corpus, 12-30 rows per class: the public
threads for most classes are used up, and 77 of the 379 rows collected were dropped because
their source or text was already in the training file or the dev corpus. Measured once at
af5fa01: class 258/302 = 85.4%, stickiness 298/302 = 98.7%.

v14 then joined the training file (301 rows) while v15 was collected blind: two labels brought
into line with the house conventions after measurement (pytest-xdist's node down is a pool
worker's death; a loss given labels of the wrong dtype is data_error), one row that names two
failures (cuBLAS's and cuDNN's EXECUTION_FAILED in one log) dropped, and the other misses fixed
with the cues in tests/test_classify_cues.py (table ``v14``). ``MEASURED_CLASS_FLOOR`` applies
to the next split once it has been measured.

v15 (154 rows collected blind by five helpers while v14's misses were being fixed, committed
before the rules, frozen at 936301c, were run on it; 3.3% of the corpus, 3-17 rows per class;
class 140/154 = 90.9%, stickiness 154/154) went the same way: one older row (v9) was relabelled
to a new convention (sklearn's metrics given a mix of target types is user_error), and its
misses were fixed with the cues in tests/test_classify_cues.py (table ``v15``).

v16: 223 rows collected blind by seven helpers (one pair of
classes each, sent to the issue's own ecosystem: PyTorch, transformers, Lightning, accelerate,
DeepSpeed, vLLM, NCCL and their users) while v15's misses were being fixed, committed before
the rules (frozen at 5f2414a) were run on it. It is 4.5% of the corpus, 6-32 rows per class:
51 of the 274 rows collected were dropped because their text was inside, or half made of,
training texts. Measured once at 5f2414a: class 196/223 = 87.9%, stickiness 222/223 = 99.6%.
It then joined the training file (no label changed) and its misses were fixed with the cues in
tests/test_classify_cues.py (table ``v16``).

v17: 191 rows collected blind by seven helpers (one pair of
classes each, sent to the same ecosystem) while v16's misses were being fixed, committed before
the rules (frozen at 595d680) were run on it. It is 3.7% of the corpus, 4-22 rows per
class: 47 of the 238 rows collected were dropped (31 overlapping training texts, 12 whose
source was already used, 3 past four log files from one repository, 1 whose label came from
its issue's title rather than its text). Measured once at 595d680: class 184/191 = 96.3%,
stickiness 191/191. It then joined the training file, with one row relabelled to a convention
written down after measurement (a pool's worker death after a memory monitor's kill is
host_oom) and 25 older rows to another (a cuDNN library that cannot be loaded is user_error),
and its misses were fixed with the cues in tests/test_classify_cues.py (table ``v17``).

v18: 93 rows collected blind by four helpers while v17's
misses and a review's findings were being fixed, committed before the rules (frozen at 97e4f21)
were run on it. It is small and uneven (1.8% of the corpus; host_oom has 1 row): the
session's search budget was nearly spent, so most rows came from repository snapshots already
on the machine. 31 of the 124 rows collected were dropped (23 overlapping training texts, 8
whose source was already used); no row needed the conventions written after the helpers'
class table was cut. Measured once at 97e4f21: class 90/93 = 96.8%, stickiness 93/93. It
then joined the training file (no label changed) and its misses were fixed with the cues in
tests/test_classify_cues.py (table ``v18``).

v19: 52 rows collected blind by three helpers in 20 minutes
from the repository snapshots already on the machine (the session's search budget was spent),
committed before the rules (frozen at cc79a56) were run on it. It is small and uneven
(1.0% of the corpus; cublas, cudnn, numerical and segfault have no row): strict xfails
record that. 6 of the 58 rows collected were dropped (5 overlapping training texts, 1 whose
source was already used). Measured once at cc79a56: class 50/52 = 96.2%, stickiness 49/49.
It then joined the training file (no label changed) and its two misses were fixed with the
cues in tests/test_classify_cues.py (table ``v19``). The held-out file is empty until the next
split is collected blind; ``MEASURED_CLASS_FLOOR`` applies to it once it has been measured.

v20: 224 rows collected blind by seven helpers (one pair of
classes each) with the rules frozen at 0c63714, committed before the rules were run on it.
75 of the 299 rows collected were dropped (27 whose source was already used, 43 overlapping
training texts, 5 past four log files from one repository). It is 4.1% of the corpus, 7-35
rows per class: not a stratified fifth (a strict xfail records that), but at least 60 rows
with every class at least 3 times. Measured once at 0c63714: class 200/224 = 89.3%,
stickiness 95/97. It then joined the training file and its misses were fixed with the cues in
tests/test_classify_cues.py (table ``v20``); one row was relabelled to the corpus's convention
(a communicator aborted after a timed-out collective is sticky) and eight older rows to
conventions written down then (a cuDNN of another version is user_error; a Ray actor's fatal
signal echoed by the driver is worker_lost; vLLM naming no failed engine process is not a
death). The held-out file is empty until the next split is collected blind;
``MEASURED_CLASS_FLOOR`` applies to it once it has been measured.

v21: 177 rows collected blind by seven helpers while v20's
misses were being fixed, committed before the rules (frozen at 7266992) were run on it. 37 of
the 214 rows collected were dropped (34 overlapping training texts, 2 whose text was an
issue's title, 1 whose source was already used). It is 3.1% of the corpus, 2-26 rows per
class: numerical has 2 rows, which a strict xfail records with the strata. Measured once at
7266992: class 164/177 = 92.7%, stickiness 81/83 = 97.6% (both below the bars, strict xfails).
It then joined the training file and its misses were fixed with the cues in
tests/test_classify_cues.py (table ``v21``); one row was relabelled to the index convention and
five older rows to the cuDNN one. The held-out file is empty until the next split is collected
blind; ``MEASURED_CLASS_FLOOR`` applies to it once it has been measured.

v22: 99 rows grepped by four helpers from the repository
snapshots on the machine (no look-ups were left), committed before the rules (frozen at
b08c144) were run on it. 8 of the 107 rows collected were dropped (overlapping training
texts). It is 1.7% of the corpus with no nccl, cublas or worker_lost row: strict xfails
record that. Measured once at b08c144: class 90/99 = 90.9%, stickiness 26/27 (both below the
bars, strict xfails). It then joined the training file and its misses were fixed with the cues
in tests/test_classify_cues.py (table ``v22``); one row whose excerpt stops before the error
line was relabelled user_error. The held-out file is empty until the next split is collected
blind; ``MEASURED_CLASS_FLOOR`` applies to it once it has been measured.

v23: 57 rows collected blind by four helpers on the session's
last look-ups while v22's misses were being fixed, committed before the rules (frozen at
df32eef) were run on it. 19 of the 76 rows collected were dropped (17 overlapping training
texts, 1 issue title, 1 with a reproduction script added to the error text). It is 1.0% of the
corpus with no cudnn, host_oom, timeout or worker_lost row. Measured once at df32eef: class
47/57 = 82.5%, stickiness 16/16. It then joined the training file (no label changed) and its
misses were fixed with the cues in tests/test_classify_cues.py (table ``v23``).

v24: 318 rows collected blind by thirteen helpers in two waves
(one pair of classes each), committed before the rules (frozen at d1fb33e, after v23's fixes)
were run on it. 117 of the 435 rows collected were dropped (84 inside a known text, 32
overlapping known texts, 1 duplicate). It is 5.2% of the corpus, 11-35 rows per class: not a
stratified fifth (a strict xfail records that). Two labels were brought into line at the merge,
before any evaluation: CUDA's ``invalid argument`` is cuda_context_corrupted and sticky by the
code table, and torchrun's ``exitcode: -11`` is segfault as in the corpus's 11 such rows.
Measured once at d1fb33e: class 286/318 = 89.9%, stickiness 313/317 = 98.7%. It then joined
the training file and its misses were fixed with the cues in tests/test_classify_cues.py (table
``v24``); 13 older rows were relabelled to a convention written down then (TensorFlow's, JAX's
and caffe2's cuDNN of another version is user_error, as torch's).

v25: 60 rows collected blind by five helpers on the session's
last look-ups (about 150) and repository snapshots, while v24's misses were being fixed,
committed before the rules (frozen at 2d7df5d, after v24's fixes; db8d622 changed only literal
anchors, no verdict) were run on it. 21 of the 81 rows collected were dropped (15 inside a known
text, 6 overlapping known texts). It is 1.0% of the corpus with 1-11 rows per class: strict
xfails record that cuda_context_corrupted, cublas, cudnn, numerical, oom and worker_lost have
fewer than 3 rows, and that it is no stratified fifth. Measured once at db8d622: class 44/60 =
73.3%, stickiness 59/60 = 98.3%. It then joined the training file (no label changed) and its
misses were fixed with the cues in tests/test_classify_cues.py (table ``v25``).

v26: 95 rows that four helpers took, with no look-ups left, from
the repository snapshots on the machine (about 100, fetched this session), committed before the
rules (frozen at 84dcd9c, after v25's fixes and a review) were run on it. 37 of the 132 rows
collected were dropped (26 inside a known text, 8 overlapping known texts, 3 without a usable
source URL). It is 1.5% of the corpus and uneven: 47 rows are user_error, cublas has none;
strict xfails record its classes and that it is no stratified fifth. Measured once at 84dcd9c:
class 83/95 = 87.4%, stickiness 95/95. ``MEASURED_CLASS_FLOOR`` is that figure; its misses stay
unfixed until a fresh split exists.

v26 then joined the training file. One label was brought into line: Python's own
``IndexError: list index out of range`` on a variable index names no size and is the code's,
``user_error`` (the collector had said ``data_error``, unsure; two training rows already said
``user_error``; the index convention is for numpy's and torch's bounds messages). Its other
eleven misses were fixed with the cues in tests/test_classify_cues.py (table ``v26``).

v27: 258 rows collected blind by seven helpers (one per pair of
classes, about 80 look-ups each, mostly from the docs corpus's stored issue pages, Hugging Face
discussions, gists and blogs), committed before the rules (frozen at 87276b9, after v26's
fixes) were run on it. 71 of the 329 rows collected were dropped (38 inside a known text, 16
overlapping known texts, 16 whose text was an issue title, 1 listing page). It is 4.0% of the
corpus with 5-47 rows per class; 226 rows are in the strict subset. Measured once at 87276b9:
class 201/258 = 77.9%, stickiness 250/258 = 96.9% (both below the bars, strict xfails).
It then joined the training file. Four rows were dropped (a code listing with its error line,
prose recounting two runs, and two texts naming two or three causes the conventions do not
order); three were relabelled (two library statuses given by number read as their names,
``ALLOC_FAILED``: ``oom``; rocBLAS's unreadable Tensile library as its identical training row,
``device_unavailable``), and one older row (h7) was relabelled by the Ray-echo convention. Its
other misses were fixed with the cues in tests/test_classify_cues.py (table ``v27``).

v28: 183 rows collected blind by six helpers (about 60 look-ups
each) while v27's misses were being fixed, committed before the rules (frozen at 9514e5f, after
v27's fixes) were run on it. 41 of the 224 rows collected were dropped (24 inside a known text,
16 overlapping known texts, 1 with a used source). It is 2.7% of the corpus with 6-42 rows
per class; 166 rows are in the strict subset. Measured once at 9514e5f: class 144/183 = 78.7%,
stickiness 178/183 = 97.3% (both below the bars, strict xfails). It then joined the training
file: three rows were dropped (a start-up log's CUDA code that the code table weighs before the
objective's own StopIteration, a store address that is neither clearly a timeout nor a bug, a
log of a large loss with no failure), one was relabelled by the rocBLAS convention written after
v27 (which its helpers had not seen), and its other misses were fixed with the cues in
tests/test_classify_cues.py (table ``v28``).

v29: 93 rows that four helpers took, with 12 look-ups each, from about 100 repository snapshots
(HPC centre documentation, course and tutorial notebooks, committed Slurm logs) while v28's
misses were being fixed, committed before the rules (frozen at 3940b50, after v28's fixes and
the review; 68147cc changed only how repeated windows are searched, no verdict) were run on it.
14 of the 107 rows collected were dropped (3 inside a known text, 3 overlapping known texts, 8
past four files from one repository). It was 1.4% of the corpus and uneven (no cudnn row); 87
rows were in the strict subset. Measured once at 3940b50 (and the same at 68147cc): class
82/93 = 88.2%, stickiness 93/93 (the bar met). It then joined the training file: three rows
were relabelled ``user_error`` by the training rows and decisions they match (a KeyError from
the code's own dict lookup, as h16G-dataloader-worker-keyerror; numpy arithmetic on arrays the
code shaped, as h23C-numpy-broadcast-preds-vs-labels; numpy's singular inverse, a look-alike in
table ``v12b``), and its other misses were fixed with the cues in
tests/test_classify_cues.py (table ``v29``).

v30: 141 rows that seven helpers took (about 75 look-ups each) from issue threads of the
ecosystem issue 16 names and the projects that fine-tune on it, while v29 was being folded in,
committed before the rules (frozen at e9ca3bc, after v29's fixes) were run on it. 48 of the 189
rows collected were dropped (37 inside a known text, 5 mostly a known text, 2 mostly known
200-character stretches, 3 taken twice, 1 whose caret lines a helper rebuilt instead of
copying). It was 2.0% of the corpus, 3-23 rows per class; 108 rows were in the strict subset.
Measured once at e9ca3bc: class 133/141 = 94.3%, stickiness 141/141 (the bar met). It then
joined the training file: three rows were relabelled by the class table and the training rows
they match (c10d's address in use is ``user_error``; the watchdog's abort with no timeout line
is ``nccl``; a cuDNN failure with an illegal memory access after it is
``cuda_context_corrupted``, by a convention written then), and its other misses were fixed with
the cues in tests/test_classify_cues.py (table ``v30``).

v31: 105 rows that six helpers took (about 70 look-ups each) from the same ecosystem's issue
threads while v30 was being folded in, committed before the rules (frozen at 215d67c, after
v30's fixes; 03dacd7 changed only how windows with counters are searched, no verdict) were run
on it. 13 of the 118 rows collected were dropped (5 inside a known text, 4 mostly a known text,
2 mostly known 200-character stretches, 2 logs of a hang with no failure in them). It was 1.5%
of the corpus, 3-18 rows per class; 79 rows were in the strict subset. Measured once at 215d67c
(and the same at 03dacd7): class 98/105 = 93.3%, stickiness 105/105 (the bar met). It then
joined the training file: three rows were relabelled by the class table and earlier decisions
(the watchdog's abort with no timeout line is ``nccl``, as at v30's fold; HCCL's port held by
another process is the address-in-use convention's ``user_error``; Lua's multinomial with a
sum of probabilities <= 0 is not ``numerical``, as table ``v14`` says), and its other misses were
fixed with the cues in tests/test_classify_cues.py (table ``v31``).

The split in the repository is v32: 70 rows that four helpers took (10 look-ups and about 25
repository snapshots each: notebooks with saved errors, committed training and job logs,
troubleshooting notes, HPO runs) while v31 was being folded in and reviewed, committed before
the rules (frozen at 9946345, after v31's fixes and the review) were run on it. 12 of the 82
rows collected were dropped (3 inside a known text, 4 mostly a known text, 5 mostly known
200-character stretches). It is 1.0% of the corpus and uneven (no cublas row; nccl and
segfault 1 each; strict xfails record it); 37 rows are in the strict subset. Measured once at
9946345: class 65/70 = 92.9%, stickiness 70/70 (the bar met). ``MEASURED_CLASS_FLOOR`` is that
figure; its misses stay unfixed until a fresh split exists.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hpo.failures import FailureClass, classify

CORPUS = Path(__file__).resolve().parent / "corpus"
TRAIN = CORPUS / "cuda_errors.jsonl"
HELDOUT = CORPUS / "heldout.jsonl"
DEV = Path(__file__).resolve().parents[2] / "shared" / "cuda-errors-dev.jsonl"

FIELDS = ("id", "text", "exception_type", "signal", "expected_class", "sticky", "source", "note")
URL = re.compile(r"https?://[^\s/]+\.[^\s/]+/\S+")
# supervisor_lost is observed by the supervisor, never in an error text.
TEXT_CLASSES = {c.value for c in FailureClass} - {FailureClass.SUPERVISOR_LOST.value}

MIN_ROWS = 650
MIN_PER_CLASS = 15
CLASS_BAR = 0.97
STICKY_BAR = 0.98
MIN_HELDOUT = 60
# The held-out class accuracy measured once on the split in the repository.
MEASURED_CLASS_FLOOR: float | None = 65 / 70


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


TRAIN_ROWS = load(TRAIN)
HELDOUT_ROWS = load(HELDOUT)
ALL_ROWS = TRAIN_ROWS + HELDOUT_ROWS
HELDOUT_PENDING = pytest.mark.skipif(
    not HELDOUT_ROWS,
    reason="held-out split pending: the last measured split moved into the training corpus, "
    "tests/corpus/heldout.jsonl stays empty until the next blind split is added",
)


def row_problems(row: Any) -> list[str]:
    """What is wrong with one corpus row (empty when it is well formed)."""
    if not isinstance(row, dict):
        return ["not an object"]
    problems = []
    if tuple(sorted(row)) != tuple(sorted(FIELDS)):
        problems.append(f"fields {sorted(row)}")
    for key in ("id", "text", "note"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            problems.append(f"empty {key}")
    source = row.get("source")
    if not isinstance(source, str) or not URL.fullmatch(source.strip()):
        problems.append("no source URL")
    if row.get("expected_class") not in TEXT_CLASSES:
        problems.append(f"class {row.get('expected_class')!r}")
    if row.get("sticky") not in (True, False, None):
        problems.append("sticky must be true, false or null")
    for key in ("exception_type", "signal"):
        if row.get(key) is not None and not isinstance(row[key], str):
            problems.append(f"{key} must be a string or null")
    return problems


def diagnose(row: dict[str, Any]) -> tuple[bool, bool | None]:
    """(class right, sticky right or None when the row gives no stickiness)."""
    d = classify(row["exception_type"], row["text"], signal=row["signal"])
    sticky = None if row["sticky"] is None else d.sticky == row["sticky"]
    return d.failure_class.value == row["expected_class"], sticky


# ----------------------------------------------------------------------------- well formed


@pytest.mark.parametrize("path", [TRAIN, HELDOUT], ids=["train", "heldout"])
def test_every_row_is_well_formed(path: Path) -> None:
    for row in load(path):
        assert not row_problems(row), (row.get("id"), row_problems(row))


@pytest.mark.parametrize(
    "change",
    [
        {"source": ""},
        {"source": "pytorch torch/nn/utils/clip_grad.py"},
        {"source": "github.com/pytorch/pytorch/issues/1"},
        {"source": None},
    ],
)
def test_a_row_without_a_source_url_is_rejected(change: dict[str, Any]) -> None:
    row = {**TRAIN_ROWS[0], **change}
    assert "no source URL" in row_problems(row)


def test_a_row_with_missing_fields_or_junk_is_rejected() -> None:
    assert row_problems("text") == ["not an object"]
    row = dict(TRAIN_ROWS[0])
    del row["note"]
    assert row_problems(row)
    assert row_problems({**TRAIN_ROWS[0], "expected_class": "supervisor_lost"})
    assert row_problems({**TRAIN_ROWS[0], "sticky": "yes"})


def test_ids_and_texts_are_unique_across_both_files() -> None:
    ids = Counter(row["id"] for row in ALL_ROWS)
    assert [i for i, n in ids.items() if n > 1] == []
    texts = Counter(" ".join(row["text"].split()) for row in ALL_ROWS)
    assert [t[:80] for t, n in texts.items() if n > 1] == []


def test_no_source_is_in_both_splits() -> None:
    """Rows from one bug report stay in one split, so the split is not leaked through them."""
    assert {r["source"] for r in TRAIN_ROWS} & {r["source"] for r in HELDOUT_ROWS} == set()


@pytest.mark.skipif(not DEV.exists(), reason=f"shared dev corpus not found at {DEV}")
def test_nothing_is_copied_from_the_dev_corpus() -> None:
    dev = load(DEV)
    dev_texts = {" ".join(row["text"].split()) for row in dev}
    dev_ids = {row["id"] for row in dev}
    for row in ALL_ROWS:
        assert " ".join(row["text"].split()) not in dev_texts, row["id"]
        assert row["id"] not in dev_ids, row["id"]


# ----------------------------------------------------------------------------- size


def test_corpus_size_and_classes() -> None:
    assert len(ALL_ROWS) >= MIN_ROWS
    per_class = Counter(row["expected_class"] for row in ALL_ROWS)
    assert {c: n for c, n in per_class.items() if n < MIN_PER_CLASS} == {}
    assert set(per_class) == TEXT_CLASSES


@HELDOUT_PENDING
def test_heldout_size() -> None:
    assert len(HELDOUT_ROWS) >= MIN_HELDOUT


@HELDOUT_PENDING
@pytest.mark.xfail(
    strict=True,
    reason="the held-out file is v32 (70 rows): no cublas row; nccl and segfault 1 each, "
    "cuda_context_corrupted, cudnn and device_unavailable 2 each",
)
def test_heldout_covers_every_class() -> None:
    """Every class, at least 3 rows each."""
    held = Counter(row["expected_class"] for row in HELDOUT_ROWS)
    assert {c: held[c] for c in TEXT_CLASSES if held[c] < 3} == {}


@HELDOUT_PENDING
@pytest.mark.xfail(
    strict=True,
    reason="the held-out file is v32 (70 rows, 1.0% of the corpus, 0-22 per class), taken from "
    "snapshots with the look-ups nearly spent; v7, v8 and v10 were stratified fifths",
)
def test_heldout_is_a_stratified_fifth() -> None:
    share = len(HELDOUT_ROWS) / len(ALL_ROWS)
    assert 0.18 <= share <= 0.22, share
    train = Counter(row["expected_class"] for row in TRAIN_ROWS)
    held = Counter(row["expected_class"] for row in HELDOUT_ROWS)
    for name in TEXT_CLASSES:
        class_share = held[name] / (held[name] + train[name])
        assert held[name] >= 3 and 0.12 <= class_share <= 0.30, (name, held[name], train[name])


# ----------------------------------------------------------------------------- accuracy


def heldout_accuracy() -> tuple[float, float, str]:
    results = [diagnose(row) for row in HELDOUT_ROWS]
    class_right = sum(c for c, _ in results)
    sticky = [s for _, s in results if s is not None]
    detail = f"class {class_right}/{len(results)}, sticky {sum(sticky)}/{len(sticky)}"
    return class_right / len(results), sum(sticky) / len(sticky), detail


@HELDOUT_PENDING
def test_heldout_stickiness_accuracy() -> None:
    _, sticky_acc, detail = heldout_accuracy()
    assert sticky_acc >= STICKY_BAR, detail


@HELDOUT_PENDING
@pytest.mark.xfail(strict=True, reason="held-out v32 class accuracy 65/70 = 92.9% < 97% at 9946345")
def test_heldout_class_accuracy() -> None:
    class_acc, _, detail = heldout_accuracy()
    assert class_acc >= CLASS_BAR, detail


@HELDOUT_PENDING
@pytest.mark.skipif(MEASURED_CLASS_FLOOR is None, reason="the held-out split is not measured yet")
def test_heldout_class_accuracy_has_not_regressed() -> None:
    """A floor at the measured value, so that a rule change cannot silently lose ground."""
    class_acc, _, detail = heldout_accuracy()
    assert MEASURED_CLASS_FLOOR is not None
    assert class_acc >= MEASURED_CLASS_FLOOR, detail


def test_train_rows_all_pass() -> None:
    """The rules were tuned on these rows; each one passes (test_failures checks them one by one)."""
    wrong = [r["id"] for r in TRAIN_ROWS if diagnose(r) not in ((True, True), (True, None))]
    assert wrong == []


def test_the_docs_table_of_rows_per_class_matches_the_corpus() -> None:
    """docs/failures.md's "Classifier accuracy" table counts the rows of both files."""
    doc = Path(__file__).resolve().parents[1] / "docs" / "failures.md"
    section = doc.read_text(encoding="utf-8").split("## Classifier accuracy", 1)[1].splitlines()
    start = next(i for i, line in enumerate(section) if line.startswith("| class | train"))
    table = {}
    for line in section[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        table[cells[0]] = tuple(int(c.strip("*")) for c in cells[1:4])
    train = Counter(row["expected_class"] for row in TRAIN_ROWS)
    held = Counter(row["expected_class"] for row in HELDOUT_ROWS)
    expected = {c: (train[c], held[c], train[c] + held[c]) for c in sorted(TEXT_CLASSES)}
    expected["all"] = (len(TRAIN_ROWS), len(HELDOUT_ROWS), len(ALL_ROWS))
    assert table == expected
