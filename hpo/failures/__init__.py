"""Failure classification for `hpo`: classes, the rules table, the classifier and the policy.

The supervisor calls :func:`classify` with what a failed worker left behind (exception type,
message, traceback or log tail, exit status, signal) and gets a :class:`Diagnosis`; it calls
:func:`diagnosis_for` for failures it observed itself (a timeout it enforced, a lost
worker). A :class:`Policy` built from the study YAML's ``on_failure`` mapping says which
:class:`Action` each :class:`FailureClass` gets; :data:`DEFAULT_POLICY` is the default.
See docs/failures.md.
"""

from hpo.failures.classes import DEFAULT_POLICY, Action, Diagnosis, FailureClass, Policy
from hpo.failures.classify import classify, diagnosis_for

__all__ = [
    "DEFAULT_POLICY",
    "Action",
    "Diagnosis",
    "FailureClass",
    "Policy",
    "classify",
    "diagnosis_for",
]
