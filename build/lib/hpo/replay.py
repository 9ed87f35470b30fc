"""``hpo replay N``: re-run trial N's exact parameters in the foreground, in this process.

The first thing to do with a device-side assert: kernels run synchronously
(``CUDA_LAUNCH_BLOCKING=1``, so the traceback points at the failing op), autograd anomaly
detection names the backward op that produced a NaN, and output streams to the terminal. The
study is not touched unless ``--record`` is given, in which case the replay is a new trial
tagged ``replay_of``.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from typing import Any

import click
import optuna
from optuna.trial import FixedTrial, TrialState

from hpo import attrs
from hpo import storage as st
from hpo.errors import ConfigError


def replay(
    storage_url: str,
    study_name: str | None,
    number: int,
    objective_ref: str,
    objective_kwargs: dict[str, Any],
    env: dict[str, str],
    record: bool,
    inject_fault: bool = True,
) -> int:
    study = st.load_study(storage_url, study_name)
    original = st.trial_by_number(study, number)
    params = dict(original.params or original.system_attrs.get("fixed_params", {}))
    os.environ.update(env)
    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"  # before anything initialises CUDA
    os.environ.setdefault("TORCH_SHOW_CPP_STACKTRACES", "1")
    device = attrs.read(original.user_attrs, attrs.DEVICE)
    if device is not None and "CUDA_VISIBLE_DEVICES" not in env:
        os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
        os.environ["CUDA_VISIBLE_DEVICES"] = str(device)
    click.echo(
        f"hpo replay: trial {number} ({original.state.name}) of study {study.study_name!r}",
        err=True,
    )
    click.echo(f"hpo replay: params {params}", err=True)
    click.echo("hpo replay: CUDA_LAUNCH_BLOCKING=1, autograd anomaly detection on", err=True)
    if attrs.read(original.user_attrs, attrs.FAILURE_CLASS):
        click.echo(
            f"hpo replay: originally {attrs.read(original.user_attrs, attrs.FAILURE_CLASS)}: {attrs.read(original.user_attrs, attrs.ERROR_MSG, '')[:200]}",
            err=True,
        )
    try:
        import torch

        torch.autograd.set_detect_anomaly(True)
    except ImportError:
        pass
    from hpo.objective import load_objective

    objective = load_objective(objective_ref, objective_kwargs)
    fault = attrs.read(original.user_attrs, attrs.CHAOS_FAULT) if inject_fault else None
    trial: Any
    if record:
        study.enqueue_trial(params, user_attrs={"replay_of": number})
        trial = study.ask()
    else:
        trial = FixedTrial(params, number=number)
        for k, v in original.user_attrs.items():
            if k == "retry_of" or k == "attempt":
                trial.set_user_attr(k, v)
    start = time.perf_counter()
    try:
        if fault:
            from hpo.chaos import inject

            click.echo(
                f"hpo replay: re-injecting the chaos fault {fault!r} recorded on trial {number}",
                err=True,
            )
            value = inject(fault)
        else:
            value = objective(trial)
    except optuna.TrialPruned:
        click.echo(f"hpo replay: pruned after {time.perf_counter() - start:.1f}s", err=True)
        if record:
            study.tell(trial, state=TrialState.PRUNED)
        return 0
    except BaseException as exc:  # noqa: BLE001 - show it as the worker would have recorded it
        traceback.print_exc()
        from hpo.child import format_traceback
        from hpo.failures import classify
        from hpo.protocol import qualified_name

        diag = classify(qualified_name(type(exc)), str(exc), format_traceback(exc))
        click.echo(f"hpo replay: {diag.failure_class.value}: {diag.summary}", err=True)
        click.echo(f"hpo replay: hint: {diag.hint}", err=True)
        if record:
            trial.set_user_attr(attrs.FAILURE_CLASS, diag.failure_class.value)
            study.tell(trial, state=TrialState.FAIL)
        return 1
    click.echo(f"hpo replay: returned {value!r} in {time.perf_counter() - start:.1f}s", err=True)
    if record:
        from hpo.child import validate_values

        try:
            study.tell(trial, validate_values(value, len(study.directions)))
        except ValueError as exc:
            click.echo(f"hpo replay: {exc}", err=True)
            study.tell(trial, state=TrialState.FAIL)
            return 1
    return 0


def dashboard(storage_url: str, host: str, port: int) -> int:
    """Become optuna-dashboard on the storage: ``exec``, so that a SIGTERM or Ctrl-C sent to
    ``hpo dashboard`` reaches the server itself and no server outlives the command."""
    import shutil

    exe = shutil.which("optuna-dashboard") or os.path.join(
        os.path.dirname(sys.executable), "optuna-dashboard"
    )
    if not os.path.exists(exe):
        raise ConfigError("optuna-dashboard is not installed: pip install 'hpo[dashboard]'")
    click.echo(
        f"hpo dashboard: http://{host}:{port}/ on {st.redact(storage_url)} (Ctrl-C to stop)",
        err=True,
    )
    sys.stderr.flush()
    os.execv(exe, [exe, storage_url, "--host", host, "--port", str(port)])
    return 1  # not reached
