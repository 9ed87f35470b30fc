"""Test helpers shipped with the package: fault injection and fault objectives (as ``optuna.testing``)."""
