"""A plain Optuna objective with reports and pruning, as users write for study.optimize."""

import math
import time

import optuna


def objective(trial: optuna.Trial) -> float:
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    layers = trial.suggest_int("layers", 1, 4)
    act = trial.suggest_categorical("activation", ["relu", "gelu", "tanh"])
    loss = 1.0
    for epoch in range(3):
        loss = (
            abs(math.log10(lr) + 3) / (epoch + 1) + 0.1 * layers + (0.05 if act == "tanh" else 0.0)
        )
        trial.report(loss, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
        time.sleep(0.005)
    trial.set_user_attr("epochs", 3)
    return loss
