"""The ``hpo`` command line. Errors for users are one line; tracebacks only with ``--debug``."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from hpo.errors import ConfigError, HpoError

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _fail(exc: BaseException, debug: bool) -> None:
    if debug:
        raise exc
    code = exc.exit_code if isinstance(exc, HpoError) else 1
    msg = (
        str(exc)
        if isinstance(exc, HpoError)
        else f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)"
    )
    click.echo(f"hpo: error: {msg}", err=True)
    sys.exit(code)


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = bool(kwargs.get("debug"))
        try:
            return fn(*args, **kwargs)
        except (HpoError, Exception) as exc:  # noqa: BLE001 - one line for users
            if isinstance(
                exc,
                click.exceptions.ClickException | click.exceptions.Exit | click.exceptions.Abort,
            ):
                raise
            _fail(exc, debug)

    return wrapper


debug_option = click.option("--debug", is_flag=True, help="Show tracebacks of internal errors.")
DIRECTIONS = ("maximize", "minimize")


class RunCommand(click.Command):
    """``hpo run``, whose ``--directions`` takes every direction that follows it
    (``--directions minimize maximize``): click options take a fixed number of values, so the
    words are joined into one before click parses them."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            i += 1
            if arg == "--directions":
                words = []
                while i < len(args) and args[i].lower() in DIRECTIONS:
                    words.append(args[i])
                    i += 1
                out += [arg, ",".join(words)] if words else [arg]
            else:
                out.append(arg)
        return super().parse_args(ctx, out)


def _directions(flags: dict[str, Any]) -> None:
    """``--direction`` (repeatable) and ``--directions`` into the config's ``direction`` or
    ``directions``; both together are an error naming them."""
    one, many = flags.pop("direction", ()), flags.pop("directions", None)
    if one and many:
        raise ConfigError(
            "--direction and --directions given together: give every direction once, "
            "as --directions minimize maximize (or --direction repeated)"
        )
    if many is not None:
        words = [w.strip().lower() for w in many.split(",") if w.strip()]
        bad = [w for w in words if w not in DIRECTIONS]
        if bad or not words:
            raise ConfigError(
                f"--directions: {', '.join(bad) or 'no direction given'}: "
                "use maximize or minimize, one per objective value"
            )
        flags["directions"] = words
    elif len(one) == 1:
        flags["direction"] = one[0]
    elif one:
        flags["directions"] = list(one)


class HelpGroup(click.Group):
    """The command list shows each command's whole summary, wrapped, never cut with '...'."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                text = cmd.short_help or (cmd.help or "").split("\n\n")[0]
                rows.append((name, " ".join(text.split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=HelpGroup, context_settings=CONTEXT)
@click.version_option(package_name="hpo")
def main() -> None:
    """hpo: run Optuna studies whose trials may crash, on GPUs, without losing the night."""


@main.command("run", cls=RunCommand, context_settings=CONTEXT)
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--objective", help="package.module:function or path/to/file.py:function")
@click.option("--study", help="Study name.")
@click.option("--storage", help="Optuna storage URL (default: sqlite:///<run_dir>/study.db).")
@click.option("--n-trials", type=int, help="Target number of COMPLETE+PRUNED trials in the study.")
@click.option("--workers", type=int, help="Trials run in parallel (worker processes).")
@click.option(
    "--direction",
    type=click.Choice(DIRECTIONS),
    multiple=True,
    help="Direction of the objective; repeat it for several objectives.",
)
@click.option(
    "--directions",
    metavar="DIR DIR...",
    help="Directions of a multi-objective study: --directions minimize maximize.",
)
@click.option(
    "--sampler", metavar="NAME", help="Optuna sampler: tpe, nsga2, nsga3, gp, random, ..."
)
@click.option("--pruner", metavar="NAME", help="Optuna pruner: median, nop, hyperband, ...")
@click.option(
    "--constraints",
    metavar="REF",
    help="FILE.py:FUNC or module:func, the sampler's constraints_func (tpe, nsga2, nsga3, gp).",
)
@click.option("--timeout-per-trial", type=float, help="Wall-clock limit of one trial, seconds.")
@click.option("--recycle-every", type=int, help="Replace a worker process after this many trials.")
@click.option(
    "--max-host-mem-mb", type=int, help="Kill a trial whose process tree uses more host memory."
)
@click.option("--run-dir", help="Folder for logs, outcomes and events (default: runs/<study>).")
@click.option("--seed", type=int, help="Sampler seed.")
@click.option(
    "--chaos", type=float, help="Fraction of trials to fail on purpose, in realistic ways."
)
@click.option("--chaos-seed", type=int, help="Seed of the chaos choices.")
@click.option("--start-method", type=click.Choice(["forkserver", "spawn"]))
@click.option("--device-backend", type=click.Choice(["auto", "nvml", "simulated", "cpu"]))
@click.option(
    "--allow-cpu",
    is_flag=True,
    help="Run a study that sets require_gpu on the CPU when no GPU is found.",
)
@click.option("--quiet", "-q", is_flag=True, help="Only the final summary.")
@debug_option
@_guard
def run_cmd(
    config: str | None, quiet: bool, debug: bool, seed: int | None, allow_cpu: bool, **flags: Any
) -> None:
    """Run (or resume) a study: CONFIG is a YAML file; flags override it."""
    import faulthandler

    from hpo.process import record_signals_early

    record_signals_early()  # a SIGTERM during start-up must not kill the run without a word
    # A SIGBUS (SQLite's mmapped -shm file on a disk that vanished or went immutable) or a
    # SIGSEGV in the supervisor cannot be survived, but it must not be silent: say where.
    faulthandler.enable()
    from hpo.config import load_config
    from hpo.supervisor import run_study

    if config is None and not flags.get("objective"):
        raise ConfigError(
            "give a study config (hpo run studies/x.yaml) or --objective FILE.py:FUNC"
        )
    if allow_cpu:
        flags["require_gpu"] = False
    _directions(flags)
    cfg = load_config(config, flags)
    if seed is not None:
        cfg.sampler.seed = seed
    _setup_console_logging(quiet)
    from hpo.progress import Progress

    progress = Progress(cfg, quiet=quiet, address=_address(config, cfg, flags))
    code = run_study(cfg, echo=progress.echo, progress=progress)
    sys.exit(code)


def _address(config: str | None, cfg: Any, flags: dict[str, Any]) -> str:
    """How the operator's commands name this study: its config (unless flags moved the study
    elsewhere), or its storage and name."""
    if config and not any(flags.get(k) for k in ("study", "storage", "run_dir")):
        return config
    from hpo.storage import redact

    return f"--storage {redact(cfg.storage_url)} --study {cfg.study}"


def _setup_console_logging(quiet: bool) -> None:
    logging.getLogger("optuna").setLevel(logging.WARNING)
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna.logging.disable_default_handler()


def _study_from(
    config: str | None, study: str | None, storage: str | None
) -> tuple[str, str | None]:
    if config:
        from hpo.config import load_config

        cfg = load_config(config, {})
        return storage or cfg.storage_url, study or cfg.study
    if not storage:
        raise ConfigError("give a study config or --storage URL (and --study NAME)")
    return storage, study


@main.command("status", context_settings=CONTEXT)
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--study", help="Study name.")
@click.option("--storage", help="Optuna storage URL.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@debug_option
@_guard
def status_cmd(
    config: str | None, study: str | None, storage: str | None, fmt: str, debug: bool
) -> None:
    """Counts by state and failure class, running trials, best value, rate and ETA."""
    from hpo.report import status

    url, name = _study_from(config, study, storage)
    sys.exit(status(url, name, fmt=fmt, config=config))


@main.command("failures", context_settings=CONTEXT)
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--study", help="Study name.")
@click.option("--storage", help="Optuna storage URL.")
@click.option("--class", "classes", multiple=True, help="Only this failure class (repeatable).")
@click.option(
    "--state",
    "states",
    multiple=True,
    type=click.Choice(["FAIL", "PRUNED", "RUNNING", "WAITING"], case_sensitive=False),
)
@click.option(
    "--since", help="Only trials started after this time (ISO date/time, or e.g. 2h, 30m)."
)
@click.option("--trial", "trial_number", type=int, help="Show one trial in full.")
@click.option(
    "--unrecognised",
    is_flag=True,
    help="Only failures whose error text no rule recognised (send us these texts).",
)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table")
@debug_option
@_guard
def failures_cmd(
    config: str | None,
    study: str | None,
    storage: str | None,
    classes: tuple[str, ...],
    states: tuple[str, ...],
    since: str | None,
    trial_number: int | None,
    unrecognised: bool,
    fmt: str,
    debug: bool,
) -> None:
    """Trials that did not complete: why, where, with which parameters."""
    from hpo.report import failures

    url, name = _study_from(config, study, storage)
    code = failures(
        url,
        name,
        classes=classes,
        states=states,
        since=since,
        trial=trial_number,
        fmt=fmt,
        unrecognised=unrecognised,
    )
    sys.exit(code)


@main.command("report", context_settings=CONTEXT)
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--study", help="Study name.")
@click.option("--storage", help="Optuna storage URL.")
@click.option(
    "-o",
    "--output",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Folder for report.html and the PNG figures (default: <run_dir>/report, the run folder "
    "found from the config or the storage; else ./hpo-report-<study>).",
)
@debug_option
@_guard
def report_cmd(
    config: str | None, study: str | None, storage: str | None, out_dir: str | None, debug: bool
) -> None:
    """A self-contained HTML report (and PNG figures) of one study; prints the HTML's path."""
    from hpo.html_report import main as report_main

    url, name = _study_from(config, study, storage)
    run_dir = None
    if config:
        from hpo.config import load_config

        run_dir = load_config(config, {}).run_path
    else:
        from hpo.report import run_dir_of

        run_dir = run_dir_of(url, name)
    sys.exit(report_main(url, name, out_dir, run_dir))


@main.command("quarantine", context_settings=CONTEXT)
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--study", help="Study name.")
@click.option("--storage", help="Optuna storage URL.")
@click.option("--lift", help="Put GPU back in rotation: its index, its UUID, or 'all'.")
@click.option("--host", help="Only this host's quarantines (default: every host).")
@debug_option
@_guard
def quarantine_cmd(
    config: str | None,
    study: str | None,
    storage: str | None,
    lift: str | None,
    host: str | None,
    debug: bool,
) -> None:
    """List the GPUs quarantined on a study (by host and UUID), or lift a quarantine."""
    from hpo.report import quarantine_main

    url, name = _study_from(config, study, storage)
    sys.exit(quarantine_main(url, name, lift=lift, host=host))


@main.command("doctor", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--run-dir", default="runs", show_default=True, help="Where logs would be written.")
@debug_option
@_guard
def doctor_cmd(as_json: bool, run_dir: str, debug: bool) -> None:
    """Diagnose this machine: torch, CUDA, cuDNN, driver, GPUs, allocator, shared memory, disk."""
    from hpo.doctor import main as doctor_main

    sys.exit(doctor_main(as_json=as_json, run_dir=Path(run_dir)))


@main.command("replay", context_settings=CONTEXT)
@click.argument("trial_number", type=int)
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--study", help="Study name.")
@click.option("--storage", help="Optuna storage URL.")
@click.option("--objective", help="Objective (default: the config's).")
@click.option("--record", is_flag=True, help="Record the replay as a new trial tagged replay_of.")
@click.option(
    "--no-fault", is_flag=True, help="Do not re-inject a chaos fault recorded on the trial."
)
@debug_option
@_guard
def replay_cmd(
    trial_number: int,
    config: str | None,
    study: str | None,
    storage: str | None,
    objective: str | None,
    record: bool,
    no_fault: bool,
    debug: bool,
) -> None:
    """Re-run trial N's parameters in the foreground with CUDA_LAUNCH_BLOCKING=1 and anomaly detection."""
    from hpo.replay import replay

    kwargs: dict[str, Any] = {}
    env: dict[str, str] = {}
    if config:
        from hpo.config import load_config

        cfg = load_config(config, {})
        objective = objective or cfg.objective
        kwargs, env = dict(cfg.objective_kwargs), dict(cfg.env)
    if not objective:
        raise ConfigError("hpo replay needs the objective: give the study config or --objective")
    url, name = _study_from(config, study, storage)
    sys.exit(
        replay(url, name, trial_number, objective, kwargs, env, record, inject_fault=not no_fault)
    )


@main.command("dashboard", context_settings=CONTEXT)
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--storage", help="Optuna storage URL.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True, type=int)
@debug_option
@_guard
def dashboard_cmd(
    config: str | None, storage: str | None, host: str, port: int, debug: bool
) -> None:
    """Start optuna-dashboard on the study's storage (hpo's tags show as user attrs)."""
    from hpo.replay import dashboard

    url, _ = _study_from(config, None, storage)
    sys.exit(dashboard(url, host, port))


if __name__ == "__main__":  # pragma: no cover
    main()
