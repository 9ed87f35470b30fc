"""Docs that are tables of the code are checked against the code, so they cannot drift."""

from __future__ import annotations

import re
from pathlib import Path

from hpo.config import StudyConfig

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_study_config_key_is_documented_and_every_documented_key_exists() -> None:
    """docs/config.md's table of keys (first column, ``a`` / ``b`` for pairs) against
    :class:`hpo.config.StudyConfig`'s fields."""
    text = (DOCS / "config.md").read_text(encoding="utf-8")
    documented: set[str] = set()
    for line in text.split("## Environment a worker sees", 1)[0].splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            documented.update(re.findall(r"`([a-z_0-9]+)`", first))
    fields = set(StudyConfig.model_fields)
    assert sorted(fields - documented) == [], "config keys missing from docs/config.md"
    assert sorted(documented - fields) == [], "docs/config.md names keys that do not exist"
