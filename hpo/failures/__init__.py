"""Failure handling for `hpo`: classes, the rules table, the classifier, the result record and
the policy.

The supervisor builds one :class:`TrialResult` per finished trial (:func:`build_result`, which
classifies a failure once with :func:`classify`), then asks :func:`decide` for a
:class:`Decision` in a :class:`Context`. A :class:`Policy` built from the study YAML's
``on_failure`` mapping says which :class:`Action` each :class:`FailureClass` gets;
:data:`DEFAULT_POLICY` is the default. See docs/failures.md.
"""

from hpo.failures.classes import DEFAULT_POLICY, Action, Diagnosis, FailureClass
from hpo.failures.classify import classify, diagnosis_for
from hpo.failures.policy import Context, Decision, Policy, advance, decide, stop_message
from hpo.failures.result import (
    Imposed,
    Source,
    TrialResult,
    constraints_failed,
    recover,
    signal_name,
)
from hpo.failures.result import build as build_result
from hpo.failures.rules import expandable_segments_failure

__all__ = [
    "DEFAULT_POLICY",
    "Action",
    "Context",
    "Decision",
    "Diagnosis",
    "FailureClass",
    "Imposed",
    "Policy",
    "Source",
    "TrialResult",
    "advance",
    "build_result",
    "classify",
    "constraints_failed",
    "decide",
    "diagnosis_for",
    "expandable_segments_failure",
    "recover",
    "signal_name",
    "stop_message",
]
