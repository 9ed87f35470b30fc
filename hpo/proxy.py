"""The trial an objective gets in a worker: an ``optuna.trial.Trial`` carried out by the supervisor.

:class:`ProxyTrial` *is* an ``optuna.trial.Trial`` (a subclass whose ``__init__`` loads nothing),
so ``isinstance(trial, optuna.trial.Trial)`` holds and integrations that test for it report and
prune as they do under ``study.optimize``. The supervisor owns the study: every ``suggest_*``,
``report``, ``should_prune``, ``set_user_attr`` and ``set_constraint`` is a round trip
(``Msg.CALL``) carried out on the real trial there, and so are reads of:

- ``trial.study``: a :class:`StudyView` of the supervisor's study. ``sampler``, ``pruner``,
  ``directions`` (and ``direction``) are the configured ones, copied once per trial (changing the
  copies changes nothing in the supervisor); ``trials``, ``get_trials()``, ``best_trial(s)``,
  ``best_value``, ``best_params``, ``user_attrs`` and ``metric_names`` are read live.
- ``trial.storage`` (also the storage of ``trial.study``): a :class:`TrialStorageView` that
  reads this trial (``get_trial``, ``get_trial_system_attrs``) and writes its system attributes
  (``set_trial_system_attr``; not hpo's own keys), as optuna-integration's callbacks do.

- ``trial.study.stop()``: as in Optuna, no trial starts after it and the running ones finish;
  this run then ends with exit 0 (other runs on the same study go on).

Everything else Optuna's classes have, a trial's private caches or a study's ``optimize``,
``ask``, ``tell``, ``enqueue_trial``, ``set_user_attr``, raises one line that names the
unsupported use and what to do instead (:data:`REFUSED`, :class:`UnsupportedInWorker`; an
``AttributeError`` for an attribute) instead of touching a study loaded in the worker. The calls that reach the supervisor are generated from
:data:`hpo.protocol.TRIAL_CALLS`, the same allow-list the supervisor serves.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from types import MappingProxyType
from typing import Any, NoReturn

import optuna

from hpo.protocol import (
    TRIAL_CALLS,
    CallKind,
    Msg,
    RemoteError,
    SupervisorLost,
    TrialSpec,
    decode_exception,
)

Call = Callable[..., Any]


class UnsupportedInWorker(RuntimeError):
    """An Optuna API that an objective cannot use under hpo (the study lives in the supervisor)."""


def _unsupported(what: str, why: str = "the study lives in the supervisor") -> NoReturn:
    raise UnsupportedInWorker(f"hpo: {what} is not supported in an hpo worker ({why})")


def _no_attribute(owner: str, name: str) -> AttributeError:
    return AttributeError(
        f"hpo: {owner}.{name} is not available in an hpo worker (the study lives in the "
        f"supervisor; the public Optuna API is)"
    )


class TrialStorageView:
    """``trial.storage`` in a worker: this trial's own records in the supervisor's storage.

    It answers what optuna-integration's callbacks use on the trial they were given; any other
    storage method, or another trial's id, is refused with one line.
    """

    def __init__(self, call: Call) -> None:
        self._send = call

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise _no_attribute("trial.storage", name)


class StudyView(optuna.Study):
    """``trial.study`` in a worker: a read-only view of the supervisor's study.

    ``Study.__init__`` is not called: nothing is loaded in the worker. What the supervisor serves
    is generated from :data:`hpo.protocol.TRIAL_CALLS` (``study.*``); the properties Optuna builds
    on those (``direction``, ``_is_multi_objective``, ``trials_dataframe``) are inherited.
    """

    def __init__(self, call: Call, study_name: str, storage: TrialStorageView) -> None:
        self._send = call
        self._snapshots: dict[str, Any] = {}
        self.study_name = study_name
        self._storage = storage  # type: ignore[assignment]  # the view, not a BaseStorage

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise _no_attribute("trial.study", name)


class ProxyTrial(optuna.trial.Trial):
    """The ``optuna.trial.Trial`` an objective gets in a worker; the supervisor carries it out.

    The objective sees the same API and behaviour as under ``study.optimize``: suggestions come
    from the study's sampler, ``report``/``should_prune`` reach the pruner, ``set_user_attr`` is
    written at once (so it survives a crash later in the trial), and ``optuna.TrialPruned`` works.
    ``Trial.__init__`` is not called: it would load the study in the worker.
    """

    def __init__(self, chan: Connection, spec: TrialSpec, study_name: str) -> None:
        self._chan = chan
        self._number = spec.number
        self._trial_id = spec.trial_id
        self._params = dict(spec.params)
        self._user_attrs = dict(spec.user_attrs)
        self._datetime_start = spec.datetime_start
        self.storage = TrialStorageView(self._call)  # type: ignore[assignment]
        self.study = StudyView(self._call, study_name, self.storage)  # type: ignore[arg-type]

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            self._chan.send((Msg.CALL, (method, args, kwargs)))
            kind, payload = self._chan.recv()
        except (EOFError, OSError) as exc:  # broken pipe, connection reset: the supervisor died
            raise SupervisorLost(
                f"the supervisor went away during trial.{method}(): {exc!r}"
            ) from None
        except Exception as exc:  # the reply arrived whole but cannot be unpickled here
            raise RemoteError(
                f"hpo: the supervisor's answer to trial.{method} cannot be read in the worker: "
                f"{exc!r:.300}"
            ) from None
        if kind != Msg.REPLY:
            raise RemoteError(f"unexpected message {kind!r} from the supervisor")
        ok, value = payload
        if ok:
            return value
        raise decode_exception(value)

    def __getattr__(self, name: str) -> Any:
        # Only reached for what neither this class nor Trial defines on the class: Trial's
        # instance attributes (``_cached_frozen_trial``, ``relative_search_space``...).
        if name.startswith("__"):
            raise AttributeError(name)
        raise _no_attribute("trial", name)

    def set_user_attr(self, key: str, value: Any) -> None:
        self._call("set_user_attr", key, value)
        self._user_attrs[key] = value

    @property
    def number(self) -> int:
        return self._number

    @property
    def params(self) -> dict[str, Any]:
        return dict(self._params)

    @property
    def user_attrs(self) -> dict[str, Any]:
        return dict(self._user_attrs)

    @property
    def datetime_start(self) -> datetime.datetime | None:
        return self._datetime_start


#: Trial members ProxyTrial inherits unchanged: they only call the proxy's own public methods
#: (the deprecated spellings call ``suggest_float``, and warn as Optuna does).
INHERITED_TRIAL = frozenset({"suggest_uniform", "suggest_loguniform", "suggest_discrete_uniform"})
#: Study members StudyView inherits unchanged: they only use the view's served members.
INHERITED_STUDY = frozenset({"direction", "_is_multi_objective", "trials_dataframe"})


#: What an objective cannot do in a worker, by member (``study.x`` on ``trial.study``, ``x`` on
#: the trial), and what to do instead: each becomes a method raising :class:`UnsupportedInWorker`
#: with that one line. Writes and the optimisation loop belong to the supervisor; the internals
#: listed are the ones Optuna's own code would run against a local study or storage.
REFUSED: Mapping[str, str] = MappingProxyType(
    {
        "study.optimize": "hpo run is the optimisation loop",
        "study.ask": "the supervisor asks for trials",
        "study.tell": "the supervisor finishes trials",
        "study.set_user_attr": "use trial.set_user_attr",
        "study.set_metric_names": "the supervisor owns the study",
        "study.enqueue_trial": "enqueue before `hpo run`, on the study",
        "study.add_trial": "add trials before `hpo run`, on the study",
        "study.add_trials": "add trials before `hpo run`, on the study",
        "study._get_trials": "use trial.study.get_trials()",
        "study._get_best_trial": "use trial.study.best_trial",
        "study._pop_waiting_trial_id": "the study lives in the supervisor",
        "study._should_skip_enqueue": "the study lives in the supervisor",
        "study._log_completed_trial": "the study lives in the supervisor",
        "_suggest": "use trial.suggest_float/int/categorical",
        "_get_latest_trial": "use trial.params, distributions, user_attrs",
        "_is_fixed_param": "the study lives in the supervisor",
        "_is_relative_param": "the study lives in the supervisor",
        "_check_distribution": "the study lives in the supervisor",
    }
)


def _refused(name: str, why: str) -> Any:
    """The proxy member for ``REFUSED[name]``: a method that says why it cannot run here."""
    label = f"trial.{name}()"

    def method(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        _unsupported(label, why)

    method.__name__ = method.__qualname__ = name.rpartition(".")[2]
    method.__doc__ = f"``{label}`` is refused in a worker: {why}."
    return method


def _remote(name: str, kind: CallKind) -> Any:
    """The proxy member for ``TRIAL_CALLS[name]``, sent by ``self._call`` (the trial) or
    ``self._send`` (its views)."""
    owner, _, attr = name.rpartition(".")
    label = f"trial.{name}"

    def send(self: Any, *args: Any, **kwargs: Any) -> Any:
        return (self._send if owner else self._call)(name, *args, **kwargs)

    if kind is CallKind.READ:
        return property(send, doc=f"``{label}``, read in the supervisor.")
    if kind is CallKind.SNAPSHOT:

        def snapshot(self: Any) -> Any:
            if attr not in self._snapshots:
                self._snapshots[attr] = send(self)
            return self._snapshots[attr]

        return property(snapshot, doc=f"``{label}``, copied from the supervisor once per trial.")

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        value = send(self, *args, **kwargs)
        if kind is CallKind.SUGGEST:
            self._params[args[0] if args else kwargs["name"]] = value
        return value

    method.__name__ = method.__qualname__ = attr
    method.__doc__ = f"``{label}(...)``, carried out in the supervisor."
    return method


_OWNERS: dict[str, type] = {"": ProxyTrial, "study": StudyView, "storage": TrialStorageView}
for _name, _kind in TRIAL_CALLS.items():
    _owner, _, _attr = _name.rpartition(".")
    if _attr not in vars(_OWNERS[_owner]):
        setattr(_OWNERS[_owner], _attr, _remote(_name, _kind))
for _name, _why in REFUSED.items():
    _owner, _, _attr = _name.rpartition(".")
    setattr(_OWNERS[_owner], _attr, _refused(_name, _why))
