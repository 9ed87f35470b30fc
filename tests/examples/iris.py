"""A plain Optuna objective of the usual scikit-learn kind (iris is bundled with scikit-learn).

Nothing here knows about hpo: it is what a user already has for ``study.optimize``.
"""

import optuna
import sklearn.datasets
import sklearn.ensemble
import sklearn.model_selection
import sklearn.svm


def objective(trial: optuna.Trial) -> float:
    x, y = sklearn.datasets.load_iris(return_X_y=True)
    kind = trial.suggest_categorical("classifier", ["SVC", "RandomForest"])
    if kind == "SVC":
        c = trial.suggest_float("svc_c", 1e-10, 1e10, log=True)
        model = sklearn.svm.SVC(C=c, gamma="auto")
    else:
        depth = trial.suggest_int("rf_max_depth", 2, 32, log=True)
        model = sklearn.ensemble.RandomForestClassifier(max_depth=depth, n_estimators=10)
    return sklearn.model_selection.cross_val_score(model, x, y, n_jobs=1, cv=3).mean()


if __name__ == "__main__":
    study = optuna.create_study(direction="maximize")
    study.optimize(objective, n_trials=20)
    print(study.best_trial)
