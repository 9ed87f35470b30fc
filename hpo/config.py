"""Typed study configuration: a YAML file under ``studies/`` and/or command-line flags.

Everything a run needs is one :class:`StudyConfig`. ``load_config`` reads a YAML file, applies
flag overrides (flags win), fills defaults that depend on other fields (the run folder, the
SQLite URL) and validates the result. Any problem is a :class:`ConfigError` whose message is one
line naming the culprit, e.g. ``studies/x.yaml: unknown key 'n_trail' (did you mean 'n_trials'?)``.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hpo.chaos import Fault
from hpo.errors import ConfigError
from hpo.failures import Context, Policy
from hpo.paths import RunPaths
from hpo.samplers import PRUNERS, SAMPLERS, takes_constraints, with_constraints

_STRICT = ConfigDict(extra="forbid", validate_assignment=True)


class SamplerConfig(BaseModel):
    """Which Optuna sampler the supervisor uses (one sampler for the whole run)."""

    model_config = _STRICT
    name: str = "tpe"
    seed: int | None = None
    kwargs: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in SAMPLERS:
            raise ValueError(f"unknown sampler {v!r} (known: {', '.join(SAMPLERS)})")
        return v


class PrunerConfig(BaseModel):
    """Which Optuna pruner answers ``trial.should_prune()``."""

    model_config = _STRICT
    name: str = "median"
    kwargs: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in PRUNERS:
            raise ValueError(f"unknown pruner {v!r} (known: {', '.join(PRUNERS)})")
        return v


class BreakerConfig(BaseModel):
    """The circuit breaker's window: stop when one failure class makes up ``share`` of the last
    ``window`` attempts (whatever its action), so a systematic crash cannot burn the budget."""

    model_config = _STRICT
    window: int = Field(20, ge=2)
    share: float = Field(0.8, gt=0.0, le=1.0)


class SimulatedGPUConfig(BaseModel):
    """The simulated device backend used by tests, demos and benchmarks on machines without GPUs."""

    model_config = _STRICT
    count: int = Field(2, ge=1, le=64)
    memory_mb: int = Field(24576, ge=256)
    # Parameter name whose value drives a trial's simulated footprint, and the footprint table.
    footprint_param: str = "batch_size"
    footprint_mb: dict[str, int] = Field(default_factory=dict)
    # Devices (indices) that start failing after this many trials ran on them (tests of quarantine).
    failing: dict[int, int] = Field(default_factory=dict)


class CudaConfig(BaseModel):
    """CUDA-only settings that reach the worker; ignored on CPU."""

    model_config = _STRICT
    amp: Literal["none", "bf16", "fp16"] = "none"
    cudnn_benchmark: bool = False
    deterministic: bool = False
    launch_blocking: bool = False  # debugging only: makes every kernel synchronous and slow


class StudyConfig(BaseModel):
    """A whole run. Field docs are the reference for the YAML keys (see docs/config.md)."""

    model_config = _STRICT

    study: str = Field(..., min_length=1, max_length=512)
    objective: str = Field(..., min_length=3)
    objective_kwargs: dict[str, Any] = Field(default_factory=dict)
    preflight: str | None = None
    storage: str | None = None
    run_dir: str | None = None
    direction: Literal["maximize", "minimize"] | None = None
    directions: list[Literal["maximize", "minimize"]] | None = Field(None, min_length=1)
    metric_names: list[str] | None = Field(None, min_length=1)
    constraints: str | None = None
    n_trials: int = Field(100, ge=1)
    workers: int = Field(1, ge=1, le=256)
    timeout_per_trial: float | None = Field(None, gt=0)
    recycle_every: int = Field(50, ge=1)
    recycle_rss_growth_mb: int | None = Field(2048, ge=1)
    recycle_gpu_growth_mb: int | None = Field(1024, ge=1)
    max_host_mem_mb: int | None = Field(None, ge=16)
    max_helper_processes: int | None = Field(None, ge=0)
    env: dict[str, str] = Field(default_factory=dict)
    sampler: SamplerConfig = Field(default_factory=SamplerConfig)
    pruner: PrunerConfig = Field(default_factory=PrunerConfig)
    max_failed_trials: int | None = Field(None, ge=1)
    max_consecutive_failures: int = Field(5, ge=1)
    max_retries: int = Field(1, ge=0)
    max_infra_retries: int = Field(3, ge=0)
    breaker: BreakerConfig = Field(default_factory=lambda: BreakerConfig.model_validate({}))
    on_failure: dict[str, str] = Field(default_factory=dict)
    chaos: float = Field(0.0, ge=0.0, le=1.0)
    chaos_seed: int | None = None
    chaos_faults: list[str] | None = None
    stop_grace_s: float = Field(10.0, ge=0)
    heartbeat_interval: int = Field(2, ge=1)
    heartbeat_grace: int = Field(10, ge=2)
    start_method: Literal["forkserver", "spawn"] = "forkserver"
    preload: list[str] | None = None
    gpus: Literal["auto", "none"] | list[int] = "auto"
    trials_per_gpu: int | Literal["auto"] = 1
    device_backend: Literal["auto", "nvml", "simulated", "cpu"] = "auto"
    simulated_gpus: SimulatedGPUConfig = Field(
        default_factory=lambda: SimulatedGPUConfig.model_validate({})
    )
    gpu_mem_margin_mb: int = Field(1024, ge=0)
    gpu_mem_keys: list[str] | None = (
        None  # params that decide a trial's GPU memory (default: the non-float ones)
    )
    quarantine_after: int = Field(3, ge=1)
    quarantine_window_s: float = Field(600.0, gt=0)
    quarantine_expires_s: float = Field(86400.0, gt=0)  # a quarantine is forgotten after this
    allow_gpu_reset: bool = False
    require_gpu: bool = (
        False  # stop at once (exit 2) when no GPU is found, instead of running on CPU
    )
    cuda: CudaConfig = Field(default_factory=CudaConfig)

    @field_validator("objective", "constraints")
    @classmethod
    def _ref_shape(cls, v: str | None, info: Any) -> str | None:
        if v is not None and not re.fullmatch(r"[^:]+:[A-Za-z_][A-Za-z0-9_.]*", v.strip()):
            raise ValueError(
                f"{info.field_name} {v!r} must be 'package.module:function' or "
                "'path/to/file.py:function'"
            )
        return v.strip() if v is not None else v

    @field_validator("trials_per_gpu")
    @classmethod
    def _tpg(cls, v: int | str) -> int | str:
        if isinstance(v, int) and v < 1:
            raise ValueError("trials_per_gpu must be >= 1 or 'auto'")
        return v

    @field_validator("gpus")
    @classmethod
    def _gpus(cls, v: str | list[int]) -> str | list[int]:
        if isinstance(v, list):
            bad = [d for d in v if d < 0]
            if bad:
                raise ValueError(f"GPU indices are >= 0, got {bad} (see `hpo doctor`)")
            if len(set(v)) != len(v):
                raise ValueError(f"a GPU is listed twice in {v}")
            if not v:
                raise ValueError("an empty list: give GPU indices, or 'auto' or 'none'")
        return v

    @field_validator("chaos_faults")
    @classmethod
    def _faults(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return v
        known = {f.value for f in Fault}
        for name in v:
            if name not in known:
                raise ValueError(f"unknown fault {name!r} (known: {', '.join(sorted(known))})")
        return v

    @field_validator("on_failure")
    @classmethod
    def _policy(cls, v: dict[str, str]) -> dict[str, str]:
        Policy(v)  # raises ValueError naming the bad key or action
        return v

    @model_validator(mode="after")
    def _directions(self) -> StudyConfig:
        if self.direction is not None and self.directions is not None:
            raise ValueError("give either 'direction' or 'directions', not both")
        if self.metric_names is not None and len(self.metric_names) != len(self.study_directions):
            raise ValueError(
                f"metric_names has {len(self.metric_names)} name(s) but the study has "
                f"{len(self.study_directions)} direction(s)"
            )
        return self

    # -- derived values -------------------------------------------------------------------------
    @property
    def study_directions(self) -> list[str]:
        if self.directions:
            return list(self.directions)
        return [self.direction or "minimize"]

    @property
    def run_path(self) -> Path:
        return Path(self.run_dir or Path("runs") / _slug(self.study))

    @property
    def storage_url(self) -> str:
        if self.storage:
            return self.storage
        return f"sqlite:///{RunPaths(self.run_path).default_storage}"

    def policy_context(self) -> Context:
        """The failure policy's fixed part: limits, breaker settings and ``on_failure``."""
        return Context(
            max_retries=self.max_retries,
            max_infra_retries=self.max_infra_retries,
            max_consecutive_failures=self.max_consecutive_failures,
            max_failed_trials=self.failed_trial_limit,
            breaker_window=self.breaker.window,
            breaker_share=self.breaker.share,
            quarantine_after=self.quarantine_after,
            quarantine_window_s=self.quarantine_window_s,
            policy=Policy(self.on_failure),
        )

    @property
    def failed_trial_limit(self) -> int:
        """``max_failed_trials``, or by default half of ``n_trials`` (at least 50): an overnight
        run stops long before it burns its budget on failures."""
        if self.max_failed_trials is not None:
            return self.max_failed_trials
        return max(50, self.n_trials // 2)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "study"


def _did_you_mean(key: str, options: list[str]) -> str:
    close = difflib.get_close_matches(key, options, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _format_validation_error(err: ValidationError, origin: str) -> str:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
    if first["type"] == "extra_forbidden":
        parent: type[BaseModel] = StudyConfig
        for part in first["loc"][:-1]:
            field = parent.model_fields.get(str(part))
            ann = getattr(field, "annotation", None)
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                parent = ann
        key = str(first["loc"][-1])
        return f"{origin}: unknown key {loc!r}{_did_you_mean(key, list(parent.model_fields))}"
    if first["type"] == "missing":
        return f"{origin}: missing required key {loc!r}"
    msg = first["msg"]
    msg = msg.removeprefix("Value error, ")
    value = first.get("input")
    shown = "" if isinstance(value, dict | list) or value is None else f" (got {value!r})"
    return f"{origin}: {loc}: {msg}{shown}"


def read_yaml(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {str(p)!r} does not exist")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(
            f"{p}:{where} is not valid YAML: {getattr(exc, 'problem', exc)}"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {str(p)!r}: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{p}: the top level must be a mapping of keys, not {type(data).__name__}"
        )
    return data


def load_config(
    path: str | Path | None = None, overrides: Mapping[str, Any] | None = None
) -> StudyConfig:
    """Read ``path`` (optional), apply ``overrides`` (flags; ``None`` values are ignored), validate."""
    data: dict[str, Any] = read_yaml(path) if path else {}
    origin = str(path) if path else "command line"
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    for key, value in flags.items():
        if key in ("sampler", "pruner") and isinstance(value, str):
            # --sampler/--pruner name one; the YAML's seed is kept, its kwargs only for that name
            section = dict(data.get(key) or {})
            if section.get("name", "tpe" if key == "sampler" else "median") != value:
                section.pop("kwargs", None)
            data[key] = {**section, "name": value}
            continue
        data[key] = value
        if key in ("direction", "directions"):  # a flag replaces the YAML's either key
            data.pop("directions" if key == "direction" else "direction", None)
    if not path and "study" not in data and "objective" in data:
        # From flags alone, a study name may be derived from the objective.
        data["study"] = _slug(str(data["objective"]).split(":")[-1])
    try:
        cfg = StudyConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_validation_error(err, origin)) from None
    if isinstance(cfg.timeout_per_trial, float) and math.isinf(cfg.timeout_per_trial):
        cfg.timeout_per_trial = None
    if cfg.constraints and not takes_constraints(cfg.sampler.name):
        culprit = "--constraints" if "constraints" in flags else f"{origin}: constraints"
        via = "--sampler" if "sampler" in flags else "sampler.name"
        raise ConfigError(
            f"{culprit}: sampler {cfg.sampler.name!r} ({via}) takes no constraints function; "
            f"use one that does: {', '.join(with_constraints())}"
        )
    return cfg
