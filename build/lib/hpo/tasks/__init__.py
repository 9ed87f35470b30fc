"""Objectives that ship with ``hpo``: reference them from a study config as ``hpo.tasks.<module>:objective``.

- :mod:`hpo.tasks.criteria`: sentence-pair fine-tuning of a transformers classifier (does a text
  meet a criterion?), scored by validation macro-F1, with a ``preflight`` that validates the data
  and the models before any trial starts.
"""

from __future__ import annotations
