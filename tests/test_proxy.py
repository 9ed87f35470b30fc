"""The worker's trial against the real supervisor side, without processes.

A :class:`ProxyTrial` talks over a real ``multiprocessing`` pipe to a thread that answers with
:meth:`StudyStore.serve` on a real SQLite study, as the supervisor's ``_on_call`` does. The tests
assert what users check of a trial (``isinstance``, ``trial.study``, ``trial.storage``), what the
storage holds afterwards, and that every member of Optuna's ``Trial`` and ``Study`` is either
served or refused with one line (so a member Optuna adds later fails here, not in a user's run).
"""

from __future__ import annotations

import inspect
import re
import threading
from collections.abc import Iterator
from multiprocessing import Pipe
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.trial import TrialState

from hpo.protocol import TRIAL_CALLS, Msg
from hpo.proxy import (
    INHERITED_STUDY,
    INHERITED_TRIAL,
    REFUSED,
    ProxyTrial,
    StudyView,
    TrialStorageView,
    UnsupportedInWorker,
)
from hpo.storage.store import StudyStore


def _serve(store: StudyStore, number: int, conn: Any) -> None:
    while True:
        try:
            _kind, payload = conn.recv()
        except (EOFError, OSError):
            return
        conn.send((Msg.REPLY, store.serve(number, payload)))


def _open(tmp_path: Path, **kw: Any) -> StudyStore:
    return StudyStore.open(
        f"sqlite:///{tmp_path / 'study.db'}",
        "proxy",
        kw.get("directions", ["maximize"]),
        kw.get("sampler", optuna.samplers.RandomSampler(seed=4)),
        kw.get("pruner", optuna.pruners.NopPruner()),
    )


def _proxy(store: StudyStore) -> Iterator[ProxyTrial]:
    asked = store.ask(None, retry_delays_s=(0.0,))
    worker_end, supervisor_end = Pipe()
    thread = threading.Thread(target=_serve, args=(store, asked.number, supervisor_end))
    thread.start()
    try:
        yield ProxyTrial(
            worker_end, asked.spec(len(store.study.directions), "", "", (None, None)), "proxy"
        )
    finally:
        worker_end.close()
        thread.join(10)
        supervisor_end.close()


@pytest.fixture
def store(tmp_path: Path) -> StudyStore:
    return _open(tmp_path)


@pytest.fixture
def trial(store: StudyStore) -> Iterator[ProxyTrial]:
    yield from _proxy(store)


@pytest.fixture(scope="module")
def idle_trial(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyTrial]:
    """One trial for the tests that only see refusals (they change nothing)."""
    yield from _proxy(_open(tmp_path_factory.mktemp("idle")))


def test_the_proxy_is_an_optuna_trial_and_its_study_a_study(trial: ProxyTrial) -> None:
    assert isinstance(trial, optuna.trial.Trial)
    assert isinstance(trial, optuna.trial.BaseTrial)
    assert isinstance(trial.study, optuna.Study)
    assert trial.study._storage is trial.storage


def test_calls_reach_the_supervisors_trial(store: StudyStore, trial: ProxyTrial) -> None:
    x = trial.suggest_float("x", 0.0, 1.0)
    with pytest.warns(FutureWarning):  # Optuna's deprecated spelling warns as it does in Optuna
        u = trial.suggest_uniform("u", 0.0, 1.0)
    trial.report(0.25, 0)
    assert trial.should_prune() is False
    trial.set_user_attr("k", [1, 2])
    trial.set_constraint("c0", -1.0)
    assert trial.params == {"x": x, "u": u}
    assert trial.constraints == {"c0": -1.0}
    stored = store.study.get_trials()[0]
    assert stored.params == {"x": x, "u": u}
    assert stored.intermediate_values == {0: 0.25}
    assert stored.user_attrs["k"] == [1, 2]
    assert stored.constraints == {"c0": -1.0}


def test_the_study_view_is_the_supervisors_study(tmp_path: Path) -> None:
    store = _open(
        tmp_path,
        directions=["minimize", "maximize"],
        sampler=optuna.samplers.NSGAIISampler(seed=3, population_size=5),
        pruner=optuna.pruners.NopPruner(),
    )
    store.study.set_user_attr("note", "from the study")
    store.study.enqueue_trial({"x": 0.5})
    done = store.study.ask({"x": optuna.distributions.FloatDistribution(0, 1)})
    store.study.tell(done, [1.0, 2.0])
    for trial in _proxy(store):
        study = trial.study
        # The configured sampler and pruner (copies), not a worker's default TPE and Median.
        assert type(study.sampler) is optuna.samplers.NSGAIISampler
        assert study.sampler._population_size == 5  # the copy keeps its settings
        assert type(study.pruner) is optuna.pruners.NopPruner
        assert study.directions == [
            optuna.study.StudyDirection.MINIMIZE,
            optuna.study.StudyDirection.MAXIMIZE,
        ]
        assert study._is_multi_objective()
        with pytest.raises(RuntimeError, match="multi-objective"):
            _ = study.direction
        assert study.study_name == "proxy"
        assert study.user_attrs == {"note": "from the study"}
        assert [t.number for t in study.trials] == [0, 1]
        assert [t.state for t in study.get_trials(states=(TrialState.COMPLETE,))] == [
            TrialState.COMPLETE
        ]
        assert [t.number for t in study.best_trials] == [0]
        with pytest.raises(RuntimeError, match="best_trial"):
            _ = study.best_trial  # Optuna's own error for a multi-objective study, served back


def test_the_storage_view_reaches_this_trial_only(store: StudyStore, trial: ProxyTrial) -> None:
    # What optuna-integration's Lightning callback does in its DDP path.
    trial.storage.set_trial_system_attr(trial._trial_id, "ddp:intermediate_values", {"0": 0.5})
    assert trial.storage.get_trial_system_attrs(trial._trial_id)["ddp:intermediate_values"] == {
        "0": 0.5
    }
    assert trial.storage.get_trial(trial._trial_id).number == trial.number
    with pytest.raises(ValueError, match=r"reaches only the worker's own trial \(id \d+\), not"):
        trial.storage.get_trial(trial._trial_id + 1000)
    for key in ("hpo:owner", "failed_trial", "retry_history"):
        with pytest.raises(ValueError, match=f"system attribute '{key}' is the runner's"):
            trial.storage.set_trial_system_attr(trial._trial_id, key, 1)
    with pytest.raises(AttributeError, match=r"^hpo: trial.storage.get_all_trials is not"):
        _ = trial.storage.get_all_trials
    system = store.study.get_trials()[0].system_attrs
    assert system["ddp:intermediate_values"] == {"0": 0.5}
    assert "failed_trial" not in system


@pytest.mark.parametrize(("name", "why"), sorted(REFUSED.items()))
def test_every_refused_use_raises_one_line_naming_it_and_what_to_do(
    idle_trial: ProxyTrial, name: str, why: str
) -> None:
    owner, _, attr = name.rpartition(".")
    member = getattr(idle_trial.study if owner else idle_trial, attr)
    with pytest.raises(UnsupportedInWorker) as info:
        member("x", 1)
    message = str(info.value)
    assert "\n" not in message
    assert message == f"hpo: trial.{name}() is not supported in an hpo worker ({why})"


def test_refused_and_served_members_are_apart() -> None:
    assert not set(REFUSED) & set(TRIAL_CALLS)


@pytest.mark.parametrize(
    "attr", ["_cached_frozen_trial", "relative_search_space", "_fixed_params", "system_attrs"]
)
def test_trial_internals_are_absent_with_a_message(idle_trial: ProxyTrial, attr: str) -> None:
    with pytest.raises(AttributeError, match=rf"^hpo: trial\.{attr} is not available"):
        getattr(idle_trial, attr)
    assert not hasattr(idle_trial, attr)


def test_a_study_member_that_cannot_travel_is_named(tmp_path: Path) -> None:
    class Local:  # defined in a function: cannot be pickled
        pass

    pruner = optuna.pruners.NopPruner()
    pruner.extra = Local()  # type: ignore[attr-defined]
    store = _open(tmp_path, pruner=pruner)
    for trial in _proxy(store):
        with pytest.raises(TypeError, match=r"^hpo: trial.study.pruner cannot be sent"):
            _ = trial.study.pruner
        assert trial.suggest_int("n", 1, 3) in (1, 2, 3)  # the channel is still in step


def _instance_attrs(cls: type) -> set[str]:
    return set(re.findall(r"self\.(\w+)\s*(?::[^=]*)?=", inspect.getsource(cls.__init__)))


def _members(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("__")} | _instance_attrs(cls)


@pytest.mark.parametrize(
    ("optuna_cls", "proxy_cls", "inherited"),
    [
        (optuna.trial.Trial, ProxyTrial, INHERITED_TRIAL),
        (optuna.Study, StudyView, INHERITED_STUDY),
    ],
)
def test_every_optuna_member_is_served_or_refused(
    optuna_cls: type, proxy_cls: type, inherited: frozenset[str]
) -> None:
    """A member of Optuna's class is the proxy's own (served, local, or refusing), inherited on
    purpose (it only uses the proxy's own members), or an instance attribute of Optuna's
    ``__init__``, which the proxy's ``__getattr__`` refuses unless the proxy sets it too."""
    own = set(vars(proxy_cls)) | _instance_attrs(proxy_cls)
    unexplained = sorted(_members(optuna_cls) - own - inherited - _instance_attrs(optuna_cls))
    assert not unexplained, f"{optuna_cls.__name__} members the proxy neither serves nor refuses"
    assert not inherited & set(vars(proxy_cls)), "listed as inherited but overridden"


def test_the_allow_list_generates_every_served_member() -> None:
    owners = {"": ProxyTrial, "study": StudyView, "storage": TrialStorageView}
    for name in TRIAL_CALLS:
        owner, _, attr = name.rpartition(".")
        assert attr in vars(owners[owner]), name
