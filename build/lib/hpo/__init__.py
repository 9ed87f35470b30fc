"""hpo: a fault-tolerant hyperparameter-optimisation runner on Optuna for PyTorch on GPUs."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
