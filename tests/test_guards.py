"""``hpo.guards``: each check raises the right type with a message that says what and where, and
the failure taxonomy classes those types as ``data_error`` and ``numerical``."""

from __future__ import annotations

import math

import pytest
import torch

from hpo.guards import (
    DataError,
    Guard,
    NumericalError,
    check_finite,
    check_grads,
    check_labels,
    check_logits,
    check_loss,
    check_token_ids,
    grad_norm,
)


def _qualname(exc: BaseException) -> str:
    return f"{type(exc).__module__}.{type(exc).__qualname__}"


def _model_with_grads(bad: float | None = None) -> torch.nn.Module:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3), torch.nn.Linear(3, 2))
    model(torch.randn(5, 4)).sum().backward()
    if bad is not None:
        last = model[2]
        assert isinstance(last, torch.nn.Linear) and last.weight.grad is not None
        last.weight.grad[0, 0] = bad
    return model


# --- labels, token ids, logits -------------------------------------------------------------------
def test_labels_in_range_pass() -> None:
    check_labels(torch.tensor([0, 1, 1, 0]), 2)
    check_labels(torch.tensor([], dtype=torch.long), 2)


def test_labels_out_of_range_is_data_error_with_min_max_and_step() -> None:
    with pytest.raises(DataError, match=r"labels out of range at step 7: min 0, max 2.*\[0, 2\)"):
        check_labels(torch.tensor([0, 1, 2, 1]), 2, where="step 7")
    with pytest.raises(DataError, match="min -1"):
        check_labels(torch.tensor([-1, 0]), 2)


def test_float_labels_are_data_error() -> None:
    with pytest.raises(DataError, match="integer tensor, got torch.float32"):
        check_labels(torch.tensor([0.0, 1.0]), 2)


def test_token_ids_past_the_vocabulary() -> None:
    check_token_ids(torch.tensor([[0, 5, 9]]), 10)
    with pytest.raises(DataError, match="max 10, but the model's embedding table has 10 rows"):
        check_token_ids(torch.tensor([[0, 10]]), 10)


def test_wrong_logits_shape_is_data_error_naming_both_shapes() -> None:
    check_logits(torch.zeros(4, 2), 4, 2)
    with pytest.raises(DataError, match=r"shape \(4, 3\), expected \(4, 2\)"):
        check_logits(torch.zeros(4, 3), 4, 2)
    with pytest.raises(DataError, match=r"shape \(4,\), expected \(4, 2\)"):
        check_logits(torch.zeros(4), 4, 2)


# --- numbers -------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nonfinite_loss_is_numerical_error(value: float) -> None:
    with pytest.raises(NumericalError, match=f"loss is {value} at step 3"):
        check_loss(torch.tensor(value), where="step 3")


def test_finite_loss_passes_and_non_scalar_loss_is_data_error() -> None:
    check_loss(torch.tensor(0.25))
    with pytest.raises(DataError, match="expected a scalar"):
        check_loss(torch.ones(3))


def test_check_finite_counts_the_bad_values() -> None:
    check_finite("x", torch.ones(3))
    with pytest.raises(NumericalError, match=r"logits is not finite: 1 NaN, 2 inf of 6 values"):
        check_finite("logits", torch.tensor([[1.0, math.nan, math.inf], [0.0, -math.inf, 2.0]]))


def test_grad_norm_is_the_l2_norm_of_all_grads() -> None:
    model = _model_with_grads()
    expected = math.sqrt(
        sum(float(p.grad.pow(2).sum()) for p in model.parameters() if p.grad is not None)
    )
    assert float(grad_norm(model)) == pytest.approx(expected, rel=1e-5)
    assert check_grads(model) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_nonfinite_grads_are_numerical_error_naming_the_parameter(bad: float) -> None:
    model = _model_with_grads(bad)
    with pytest.raises(
        NumericalError, match=r"gradient norm is .* non-finite gradients in 2\.weight"
    ):
        check_grads(model, where="step 4")
    # A norm already computed by clip_grad_norm_ is used as is (clipping by a NaN norm has
    # spread the NaN to every gradient by then).
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    with pytest.raises(NumericalError, match="gradient norm is (nan|inf)"):
        check_grads(model, norm=norm)


# --- the Guard schedule ----------------------------------------------------------------------------
def test_guard_checks_labels_every_step_but_syncs_only_when_due() -> None:
    guard = Guard(num_labels=2, every_n_steps=5)
    model = _model_with_grads()
    for step in range(1, 11):
        guard.inputs(step, torch.tensor([0, 1]))
        guard.logits(step, torch.zeros(2, 2))
        guard.loss(step, torch.tensor(0.5))
        guard.grads(step, model)
    assert guard.checks == 2
    with pytest.raises(DataError, match="step 11"):
        guard.inputs(11, torch.tensor([0, 3]))


def test_guard_catches_a_nan_loss_on_an_unchecked_step() -> None:
    guard = Guard(num_labels=2, every_n_steps=5, context="trial 3 epoch 0")
    model = _model_with_grads()
    losses = [0.7, 0.6, math.nan, 0.5, 0.4]
    with pytest.raises(NumericalError, match=r"loss is nan in trial 3 epoch 0 at steps 1-5"):
        for step, loss in enumerate(losses, 1):
            guard.logits(step, torch.zeros(2, 2))
            guard.loss(step, torch.tensor(loss))
            guard.grads(step, model)


def test_guard_wrong_logits_shape_every_step() -> None:
    guard = Guard(num_labels=2, every_n_steps=100)
    with pytest.raises(DataError, match=r"at step 1 have shape \(8, 3\), expected \(8, 2\)"):
        guard.logits(1, torch.zeros(8, 3))
    with pytest.raises(DataError, match=r"expected \(4, 2\)"):
        guard.logits(1, torch.zeros(8, 2), batch_size=4)


def test_guard_grads_and_disabled_guard() -> None:
    bad = _model_with_grads(math.nan)
    with pytest.raises(NumericalError):
        Guard(2, every_n_steps=1).grads(1, bad)
    Guard(2, every_n_steps=1, check_grads=False).grads(1, bad)  # fp16 + GradScaler
    off = Guard(2, enabled=False)
    off.inputs(1, torch.tensor([5]))
    off.logits(1, torch.zeros(1, 7))
    off.loss(1, torch.tensor(math.nan))
    off.grads(1, bad)
    with pytest.raises(ValueError):
        Guard(2, every_n_steps=0)


# --- the failure taxonomy --------------------------------------------------------------------------
def _raise_labels() -> None:
    check_labels(torch.tensor([0, 2]), 2, where="step 1")


def _raise_logits() -> None:
    check_logits(torch.zeros(2, 3), 2, 2, where="step 1")


def _raise_loss() -> None:
    check_loss(torch.tensor(math.nan), where="step 1")


def _raise_grads() -> None:
    check_grads(_model_with_grads(math.inf), where="step 1")


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (_raise_labels, "data_error"),
        (_raise_logits, "data_error"),
        (_raise_loss, "numerical"),
        (_raise_grads, "numerical"),
    ],
)
def test_guard_errors_get_the_right_failure_class(fault: object, expected: str) -> None:
    classify = pytest.importorskip("hpo.failures").classify
    assert callable(fault)
    with pytest.raises((DataError, NumericalError)) as info:
        fault()
    assert _qualname(info.value) in ("hpo.guards.DataError", "hpo.guards.NumericalError")
    diagnosis = classify(exception_type=_qualname(info.value), message=str(info.value))
    assert diagnosis.failure_class.value == expected
