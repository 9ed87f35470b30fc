"""Objectives written as the official Optuna examples and the integrations' docs write them.

tests/test_real_clients.py runs each one under ``hpo run`` and under plain ``study.optimize``
(:func:`run_plain`) with the same sampler, pruner and seed, and compares what the two storages
hold.

Every objective is deterministic (fixed data splits, seeds, one thread), so that the two runs
see the same values, and small, so that the whole suite stays short on two cores.
"""

from __future__ import annotations

import math
import tempfile
from typing import Any

import numpy as np
import optuna
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.model_selection import train_test_split


def _study_view_attrs(trial: optuna.Trial) -> None:
    """What a user reads of ``trial.study``: recorded so that both runs can be compared."""
    study = trial.study
    trial.set_user_attr("study.sampler", type(study.sampler).__name__)
    trial.set_user_attr("study.pruner", type(study.pruner).__name__)
    trial.set_user_attr("study.directions", [d.name for d in study.directions])
    trial.set_user_attr("study.n_trials_seen", len(study.trials))
    trial.set_user_attr("is_trial", isinstance(trial, optuna.trial.Trial))


# -- scikit-learn: optuna-examples sklearn/sklearn_simple.py (n_jobs=1: joblib pools are issue 15's
# first point) -------------------------------------------------------------------------------------
def sklearn_objective(trial: optuna.Trial) -> float:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import cross_val_score
    from sklearn.svm import SVC

    _study_view_attrs(trial)
    x, y = load_iris(return_X_y=True)
    classifier_name = trial.suggest_categorical("classifier", ["SVC", "RandomForest"])
    if classifier_name == "SVC":
        svc_c = trial.suggest_float("svc_c", 1e-10, 1e10, log=True)
        classifier_obj: Any = SVC(C=svc_c, gamma="auto")
    else:
        rf_max_depth = trial.suggest_int("rf_max_depth", 2, 32, log=True)
        classifier_obj = RandomForestClassifier(
            max_depth=rf_max_depth, n_estimators=10, random_state=0
        )
    score = cross_val_score(classifier_obj, x, y, n_jobs=1, cv=3)
    return float(score.mean())


# -- an isinstance check: the FixedTrial-compatible pattern of optuna-examples ---------------------
def isinstance_objective(trial: optuna.Trial) -> float:
    from sklearn.linear_model import SGDClassifier

    _study_view_attrs(trial)
    x, y = load_iris(return_X_y=True)
    x_train, x_valid, y_train, y_valid = train_test_split(x, y, random_state=0)
    alpha = trial.suggest_float("alpha", 1e-4, 10.0, log=True)
    clf = SGDClassifier(alpha=alpha, random_state=0)
    classes = np.unique(y)
    for step in range(8):
        clf.partial_fit(x_train, y_train, classes=classes)
        score = clf.score(x_valid, y_valid)
        # Objectives shared with FixedTrial report only to a real Trial.
        if isinstance(trial, optuna.trial.Trial):
            trial.report(score, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
    return float(clf.score(x_valid, y_valid))


def _breast_cancer_split() -> list[Any]:
    """The examples' data: breast cancer, a quarter held out, the same split every time."""
    data, target = load_breast_cancer(return_X_y=True)
    return list(train_test_split(data, target, test_size=0.25, random_state=0))


# -- XGBoost: optuna-examples xgboost/xgboost_integration.py ---------------------------------
def xgboost_objective(trial: optuna.Trial) -> float:
    import xgboost as xgb
    from optuna_integration import XGBoostPruningCallback

    train_x, valid_x, train_y, valid_y = _breast_cancer_split()
    dtrain = xgb.DMatrix(train_x, label=train_y)
    dvalid = xgb.DMatrix(valid_x, label=valid_y)
    param = {
        "verbosity": 0,
        "objective": "binary:logistic",
        "eval_metric": "auc",
        "nthread": 1,
        "seed": 0,
        "lambda": trial.suggest_float("lambda", 1e-8, 1.0, log=True),
        "alpha": trial.suggest_float("alpha", 1e-8, 1.0, log=True),
        "max_depth": trial.suggest_int("max_depth", 1, 6),
        "eta": trial.suggest_float("eta", 1e-3, 1.0, log=True),
    }
    pruning_callback = XGBoostPruningCallback(trial, "validation-auc")
    bst = xgb.train(
        param,
        dtrain,
        num_boost_round=12,
        evals=[(dvalid, "validation")],
        verbose_eval=False,
        callbacks=[pruning_callback],
    )
    preds = bst.predict(dvalid)
    return float(np.mean(np.rint(preds) == valid_y))


# -- LightGBM: optuna-examples lightgbm/lightgbm_integration.py (reads trial.study.direction) ------
def lightgbm_objective(trial: optuna.Trial) -> float:
    import lightgbm as lgb
    from optuna_integration import LightGBMPruningCallback

    train_x, valid_x, train_y, valid_y = _breast_cancer_split()
    dtrain = lgb.Dataset(train_x, label=train_y)
    dvalid = lgb.Dataset(valid_x, label=valid_y)
    param = {
        "objective": "binary",
        "metric": "auc",
        "verbosity": -1,
        "num_threads": 1,
        "deterministic": True,
        "force_col_wise": True,
        "seed": 0,
        "lambda_l1": trial.suggest_float("lambda_l1", 1e-8, 10.0, log=True),
        "num_leaves": trial.suggest_int("num_leaves", 2, 64),
        "learning_rate": trial.suggest_float("learning_rate", 1e-3, 0.5, log=True),
    }
    pruning_callback = LightGBMPruningCallback(trial, "auc")
    gbm = lgb.train(
        param, dtrain, num_boost_round=12, valid_sets=[dvalid], callbacks=[pruning_callback]
    )
    preds = gbm.predict(valid_x)
    return float(np.mean(np.rint(preds) == valid_y))


# -- PyTorch Lightning: optuna-examples pytorch/pytorch_lightning_simple.py, on synthetic data -----
def lightning_objective(trial: optuna.Trial) -> float:
    import lightning.pytorch as pl
    import torch
    from optuna_integration import PyTorchLightningPruningCallback
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    pl.seed_everything(0, verbose=False)
    hidden = trial.suggest_int("hidden", 4, 32, log=True)
    lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(256, 8, generator=gen)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()

    class Net(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = nn.Sequential(nn.Linear(8, hidden), nn.ReLU(), nn.Linear(hidden, 2))

        def training_step(self, batch: Any, _: int) -> Any:
            xb, yb = batch
            return nn.functional.cross_entropy(self.net(xb), yb)

        def validation_step(self, batch: Any, _: int) -> None:
            xb, yb = batch
            acc = (self.net(xb).argmax(dim=1) == yb).float().mean()
            self.log("val_acc", acc)

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=lr)

    train = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=32, shuffle=False)
    valid = DataLoader(TensorDataset(x[192:], y[192:]), batch_size=64)
    trainer = pl.Trainer(
        max_epochs=4,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        deterministic=True,
        num_sanity_val_steps=0,
        callbacks=[PyTorchLightningPruningCallback(trial, monitor="val_acc")],
    )
    trainer.fit(Net(), train_dataloaders=train, val_dataloaders=valid)
    return float(trainer.callback_metrics["val_acc"].item())


# -- transformers: Trainer.train(trial=trial) with a reporting callback, on a tiny random BERT -----
def transformers_objective(trial: optuna.Trial) -> float:
    import torch
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        Trainer,
        TrainerCallback,
        TrainingArguments,
    )

    lr = trial.suggest_float("learning_rate", 1e-4, 3e-2, log=True)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
        num_labels=2,
    )
    model = BertForSequenceClassification(config)
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(1, 32, (96, 12), generator=gen)
    labels = (ids == 7).any(dim=1).long()
    rows = [
        {"input_ids": i, "attention_mask": torch.ones_like(i), "labels": lab}
        for i, lab in zip(ids, labels, strict=True)
    ]

    class ReportToOptuna(TrainerCallback):
        last_loss = math.nan

        def on_evaluate(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.last_loss = kw["metrics"]["eval_loss"]
            trial.report(self.last_loss, step=round(state.epoch))
            if trial.should_prune():
                raise optuna.TrialPruned()

    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(
            output_dir=out,
            num_train_epochs=3,
            learning_rate=lr,
            per_device_train_batch_size=16,
            per_device_eval_batch_size=32,
            eval_strategy="epoch",
            save_strategy="no",
            logging_strategy="no",
            report_to="none",
            disable_tqdm=True,
            use_cpu=True,
            seed=0,
            dataloader_num_workers=0,
        )
        trainer = Trainer(
            model=model,
            args=args,
            train_dataset=rows[:64],
            eval_dataset=rows[64:],
            callbacks=[reporter := ReportToOptuna()],
        )
        trainer.train(trial=trial)
    return float(reporter.last_loss)


# -- multi-objective: optuna-examples multi_objective/pytorch_simple.py's shape, Binh and Korn -----
def multi_objective(trial: optuna.Trial) -> tuple[float, float]:
    _study_view_attrs(trial)
    x = trial.suggest_float("x", 0, 5)
    y = trial.suggest_float("y", 0, 3)
    return 4 * x**2 + 4 * y**2, (x - 5) ** 2 + (y - 5) ** 2


# -- constraints: optuna-examples quadratic_constraint.py with Optuna 5's trial.set_constraint ----
def constrained_objective(trial: optuna.Trial) -> tuple[float, float]:
    x = trial.suggest_float("x", -15, 30)
    y = trial.suggest_float("y", -15, 30)
    trial.set_constraint("c0", (x - 5) ** 2 + y**2 - 25)
    trial.set_constraint("c1", -((x - 8) ** 2) - (y + 3) ** 2 + 7.7)
    trial.set_user_attr("feasible", all(v <= 0 for v in trial.constraints.values()))
    return 4 * x**2 + 4 * y**2, (x - 5) ** 2 + (y - 5) ** 2


def stopping_objective(trial: optuna.Trial) -> float:
    """Optuna's ``Study.stop`` docstring example: the objective ends the run at trial 2."""
    if trial.number == 2:
        trial.study.stop()
    x = trial.suggest_float("x", 0, 10)
    return x**2


def run_plain(spec: dict[str, Any]) -> optuna.Study:
    """The plain-Optuna side: ``study.optimize`` with the sampler and pruner hpo builds from the
    same YAML, on the torch threads an hpo CPU worker uses."""
    import torch

    from hpo.samplers import make_pruner, make_sampler

    s, p = spec["sampler"], spec["pruner"]
    study = optuna.create_study(
        study_name=spec["study"],
        storage=spec["storage"],
        directions=spec["directions"],
        sampler=make_sampler(s["name"], s.get("seed"), s.get("kwargs", {})),
        pruner=make_pruner(p["name"], p.get("kwargs", {})),
    )
    threads = torch.get_num_threads()
    torch.set_num_threads(spec["threads"])
    try:
        study.optimize(globals()[spec["objective"]], n_trials=spec["n_trials"], catch=())
    finally:
        torch.set_num_threads(threads)
    return study
