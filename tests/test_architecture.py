"""Architecture rules that hold the code base together, checked on the source itself.

The layers are import-linter contracts in pyproject.toml (``make lint``); these are the rules a
layers contract cannot say: no import cycle anywhere (lazy imports inside functions included),
and no module outside the ``hpo.storage`` package reaching into an Optuna object's private attributes.
"""

from __future__ import annotations

import re
from pathlib import Path

import grimp

HPO = Path(__file__).resolve().parents[1] / "hpo"

# Private attributes of Optuna objects (studies, trials, storages) and private Optuna modules.
OPTUNA_PRIVATE = re.compile(
    r"(?<!self)\.(_storage|_trial_id|_study_id|_backend|_get_stale_trial_ids|"
    r"_set_trial_attr_without_commit|_cached_frozen_trial|_heartbeat_thread)\b"
    r"|optuna\.\w+\._\w+"
)


def test_no_import_cycle_in_hpo_including_lazy_imports() -> None:
    graph = grimp.build_graph("hpo", exclude_type_checking_imports=True)
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if module != imported and graph.chain_exists(importer=imported, imported=module):
                chain = graph.find_shortest_chain(importer=imported, imported=module)
                cycles.append(f"{module} -> {' -> '.join(chain or [])}")
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_private_optuna_access_outside_the_storage_module() -> None:
    offenders = []
    for path in sorted(HPO.rglob("*.py")):
        if path.parent == HPO / "storage":  # the storage package is the one allowed place
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if OPTUNA_PRIVATE.search(code):
                offenders.append(f"{path.relative_to(HPO.parent)}:{n}: {line.strip()}")
    assert not offenders, "private Optuna access outside hpo/storage/:\n" + "\n".join(offenders)


def test_the_private_access_check_would_catch_an_offender() -> None:
    # The rule itself, on lines it must flag and lines it must leave alone.
    assert OPTUNA_PRIVATE.search("study._storage.get_trial(1)")
    assert OPTUNA_PRIVATE.search("x = trial._trial_id")
    assert OPTUNA_PRIVATE.search("from optuna.storages._rdb import models")
    assert not OPTUNA_PRIVATE.search("self._trial_id = spec.trial_id")
    assert not OPTUNA_PRIVATE.search("os._exit(0)")
