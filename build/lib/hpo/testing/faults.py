"""The chaos faults, for tests: re-exported from :mod:`hpo.chaos` (the product module)."""

from hpo.chaos import CUDNN_FAILED, DEVICE_ASSERT, ILLEGAL_ACCESS, OOM_TEXT, Fault, inject

__all__ = ["CUDNN_FAILED", "DEVICE_ASSERT", "ILLEGAL_ACCESS", "OOM_TEXT", "Fault", "inject"]
