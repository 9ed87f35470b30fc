"""Cheap checks that turn bad data and bad numbers into typed errors before a CUDA kernel asserts.

A label outside ``[0, num_labels)`` or a token id past the embedding table ends, on a GPU, in
``CUDA error: device-side assert triggered``: the context is dead, the message names no tensor,
and every later CUDA call in the process fails. Checked on the host before the batch is moved,
the same fault is a :class:`DataError` that says which step and which values. A NaN loss or
gradient is a :class:`NumericalError`. The failure taxonomy (``hpo.failures``) matches these two
types by qualified name: ``hpo.guards.DataError`` is ``data_error`` and
``hpo.guards.NumericalError`` is ``numerical``. Keep the details in the message, not in subtypes.

What costs what (so the defaults stay cheap):

- :func:`check_labels`, :func:`check_token_ids`: a min/max over a host tensor; run every step.
- :func:`check_logits`: compares shapes (metadata only, no device sync); run every step.
- :func:`check_loss`, :func:`check_finite`, :func:`check_grads`: one reduction plus one device
  sync each. :class:`Guard` runs them every ``every_n_steps`` steps. NaN is sticky (a NaN loss
  puts NaN into the weights on the next step), so a periodic check still catches it, at most
  ``every_n_steps`` steps late, and :class:`Guard` sums the loss on the device between checks
  so a NaN on an unchecked step is not missed.

Example::

    guard = Guard(num_labels=2, every_n_steps=20)
    for step, batch in enumerate(loader, 1):
        guard.inputs(step, batch["labels"], batch["input_ids"])   # host tensors
        logits = model(**inputs).logits
        guard.logits(step, logits)                                 # before the loss kernel
        loss = F.cross_entropy(logits.float(), labels)
        guard.loss(step, loss)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        guard.grads(step, model, norm)
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

__all__ = [
    "DataError",
    "Guard",
    "NumericalError",
    "check_finite",
    "check_grads",
    "check_labels",
    "check_logits",
    "check_loss",
    "check_token_ids",
    "grad_norm",
]


class DataError(ValueError):
    """The inputs are wrong (labels out of range, token ids past the vocabulary, shapes).

    Classified as ``data_error``: the same data fails every trial, so retrying does not help.
    """


class NumericalError(ArithmeticError):
    """A loss, gradient, logit or input is NaN or infinite.

    Classified as ``numerical``: usually caused by the hyperparameters (a learning rate too
    high, fp16 overflow), so the trial is pruned and the sampler steers away from it.
    """


def _at(where: str) -> str:
    return f" at {where}" if where else ""


def _describe_nonfinite(t: torch.Tensor) -> str:
    t = t.detach()
    n_nan = int(torch.isnan(t).sum())
    n_inf = int(torch.isinf(t).sum())
    parts = [f"{n_nan} NaN"] if n_nan else []
    parts += [f"{n_inf} inf"] if n_inf else []
    return ", ".join(parts) + f" of {t.numel()} values"


def check_labels(labels: torch.Tensor, num_labels: int, *, where: str = "") -> None:
    """Raise :class:`DataError` unless ``labels`` are integers in ``[0, num_labels)``.

    Call it on the host tensor, before ``.to(device)``: on a CUDA tensor the min/max forces a sync.
    """
    if labels.dtype.is_floating_point or labels.dtype.is_complex or labels.dtype == torch.bool:
        raise DataError(
            f"labels{_at(where)} must be an integer tensor, got {labels.dtype}: "
            f"convert them to class indices 0..{num_labels - 1}"
        )
    if labels.numel() == 0:
        return
    lo, hi = int(labels.min()), int(labels.max())
    if lo < 0 or hi >= num_labels:
        bad = labels[(labels < 0) | (labels >= num_labels)]
        raise DataError(
            f"labels out of range{_at(where)}: min {lo}, max {hi}, expected integers in "
            f"[0, {num_labels}) ({bad.numel()} of {labels.numel()} bad, e.g. {int(bad[0])})"
        )


def check_token_ids(input_ids: torch.Tensor, vocab_size: int, *, where: str = "") -> None:
    """Raise :class:`DataError` unless every id indexes the embedding table (``[0, vocab_size)``).

    A mismatch means the tokenizer and the model do not belong together.
    """
    if input_ids.numel() == 0:
        return
    lo, hi = int(input_ids.min()), int(input_ids.max())
    if lo < 0 or hi >= vocab_size:
        raise DataError(
            f"token ids out of range{_at(where)}: min {lo}, max {hi}, but the model's embedding "
            f"table has {vocab_size} rows: the tokenizer does not match the model"
        )


def check_logits(
    logits: torch.Tensor, batch_size: int, num_labels: int, *, where: str = ""
) -> None:
    """Raise :class:`DataError` unless ``logits`` has shape ``(batch_size, num_labels)``.

    Shape only: no device sync. A model built with the wrong ``num_labels`` fails here instead of
    inside the loss kernel.
    """
    expected = (batch_size, num_labels)
    if tuple(logits.shape) != expected:
        raise DataError(
            f"logits{_at(where)} have shape {tuple(logits.shape)}, expected {expected} "
            f"(batch size, number of labels): check the model's num_labels and the batch"
        )


def check_finite(name: str, tensor: torch.Tensor, *, where: str = "") -> None:
    """Raise :class:`NumericalError` if ``tensor`` holds a NaN or an infinity (one device sync)."""
    if tensor.numel() and not bool(torch.isfinite(tensor.detach()).all()):
        raise NumericalError(f"{name} is not finite{_at(where)}: {_describe_nonfinite(tensor)}")


def check_loss(loss: torch.Tensor, *, where: str = "") -> None:
    """Raise :class:`NumericalError` unless ``loss`` is a finite scalar (one device sync)."""
    if loss.numel() != 1:
        raise DataError(
            f"loss{_at(where)} has shape {tuple(loss.shape)}, expected a scalar: reduce it "
            f"(mean or sum) before backward"
        )
    value = float(loss.detach())
    if value != value or value in (float("inf"), float("-inf")):
        raise NumericalError(
            f"loss is {value}{_at(where)}: lower the learning rate, or use bf16 instead of fp16"
        )


def _named_grads(
    model: torch.nn.Module | Iterable[torch.nn.Parameter],
) -> list[tuple[str, torch.Tensor]]:
    if isinstance(model, torch.nn.Module):
        return [(n, p.grad) for n, p in model.named_parameters() if p.grad is not None]
    return [(f"param[{i}]", p.grad) for i, p in enumerate(model) if p.grad is not None]


def grad_norm(model: torch.nn.Module | Iterable[torch.nn.Parameter]) -> torch.Tensor:
    """The total L2 norm of all gradients, as one fused (foreach) reduction on the device."""
    grads = [g for _, g in _named_grads(model)]
    if not grads:
        return torch.zeros(())
    return torch.nn.utils.get_total_norm(grads, norm_type=2.0, foreach=True)


def check_grads(
    model: torch.nn.Module | Iterable[torch.nn.Parameter],
    *,
    norm: torch.Tensor | float | None = None,
    where: str = "",
) -> float:
    """Raise :class:`NumericalError` if the total gradient norm is not finite; return the norm.

    Pass ``norm`` when it is already known (``clip_grad_norm_`` returns it) to skip the reduction.
    Only on failure does it look at each gradient, to name the first parameters that are bad.
    """
    total = grad_norm(model) if norm is None else norm
    value = float(total.detach()) if isinstance(total, torch.Tensor) else float(total)
    if value == value and value not in (float("inf"), float("-inf")):
        return value
    bad = [n for n, g in _named_grads(model) if not bool(torch.isfinite(g).all())]
    shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
    raise NumericalError(
        f"gradient norm is {value}{_at(where)}; non-finite gradients in {shown or 'no parameter'}: "
        f"lower the learning rate, or use bf16 instead of fp16"
    )


class Guard:
    """Runs the checks on a schedule: cheap ones every step, syncing ones every ``every_n_steps``.

    Steps are counted by the caller (optimizer steps, from 1). ``every_n_steps=1`` checks
    everything every step (for debugging); ``enabled=False`` makes every method a no-op.
    ``check_grads=False`` is for fp16 with a ``GradScaler``, where an infinite gradient is
    expected now and then and the scaler skips that step itself.
    """

    def __init__(
        self,
        num_labels: int,
        *,
        every_n_steps: int = 10,
        vocab_size: int | None = None,
        check_grads: bool = True,
        enabled: bool = True,
        context: str = "",
    ) -> None:
        if every_n_steps < 1:
            raise ValueError("every_n_steps must be >= 1")
        self.num_labels = num_labels
        self.every_n_steps = every_n_steps
        self.vocab_size = vocab_size
        self.grads_enabled = check_grads
        self.enabled = enabled
        self.context = context
        self.checks = 0  # syncing checks run, for tests and benchmarks
        self._loss_sum: torch.Tensor | None = None
        self._window_start = 1

    def due(self, step: int) -> bool:
        """Whether the syncing checks run at ``step``."""
        return self.enabled and step % self.every_n_steps == 0

    def where(self, step: int) -> str:
        return f"{self.context} step {step}".strip()

    def inputs(
        self, step: int, labels: torch.Tensor, input_ids: torch.Tensor | None = None
    ) -> None:
        """Every step, on host tensors: labels in range, token ids within the vocabulary."""
        if not self.enabled:
            return
        check_labels(labels, self.num_labels, where=self.where(step))
        if input_ids is not None and self.vocab_size is not None:
            check_token_ids(input_ids, self.vocab_size, where=self.where(step))

    def logits(self, step: int, logits: torch.Tensor, batch_size: int | None = None) -> None:
        """Every micro-batch, right after the forward pass and before the loss: the logits' shape
        (metadata, no sync); when due, also that they are finite."""
        if not self.enabled:
            return
        n = logits.shape[0] if batch_size is None and logits.ndim else batch_size
        check_logits(logits, int(n or 0), self.num_labels, where=self.where(step))
        if self.due(step):
            check_finite("logits", logits, where=self.where(step))

    def loss(self, step: int, loss: torch.Tensor) -> None:
        """Every micro-batch: sums the loss on the device; :meth:`grads` checks the sum when due."""
        if not self.enabled:
            return
        d = loss.detach().float().sum()
        self._loss_sum = d if self._loss_sum is None else self._loss_sum + d

    def grads(
        self,
        step: int,
        model: torch.nn.Module | Iterable[torch.nn.Parameter],
        norm: torch.Tensor | None = None,
    ) -> None:
        """After backward (and unscaling), when due: the loss summed since the last check, then
        the gradient norm (``norm`` from ``clip_grad_norm_`` avoids a second reduction)."""
        if not self.due(step):
            return
        self.checks += 1
        if self._loss_sum is not None:
            span = (
                f"step {step}"
                if self._window_start == step
                else f"steps {self._window_start}-{step}"
            )
            value = float(self._loss_sum)
            if value != value or value in (float("inf"), float("-inf")):
                raise NumericalError(
                    f"loss is {value} {('in ' + self.context + ' ') if self.context else ''}"
                    f"at {span}: lower the learning rate, or use bf16 instead of fp16"
                )
        self._loss_sum = None
        self._window_start = step + 1
        if self.grads_enabled:
            check_grads(model, norm=norm, where=self.where(step))
