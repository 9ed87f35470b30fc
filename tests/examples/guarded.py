"""An objective that trips hpo.guards the way a training bug would, before any CUDA kernel."""

import optuna
import torch

from hpo import guards


def objective(trial: optuna.Trial, kind: str = "labels") -> float:
    trial.suggest_float("lr", 1e-5, 1e-2, log=True)
    logits = torch.zeros(4, 2)
    labels = torch.tensor([0, 1, 1, 0])
    if kind == "labels":
        labels = torch.tensor(
            [0, 1, 2, 0]
        )  # a label past num_labels: a device-side assert on a GPU
    if kind == "logits":
        logits = torch.zeros(4, 3)
    guards.check_labels(labels, 2)
    guards.check_logits(logits, 4, 2)
    loss = torch.nn.functional.cross_entropy(logits, labels)
    if kind == "nan":
        loss = loss * float("nan")
    guards.check_loss(loss)
    return float(loss)
