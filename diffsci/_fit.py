"""``diffsci.fit``: the training loop (value_and_grad, an optimiser step, a progress bar).

The loop every fitting script writes, once: evaluate the loss and its
gradient, stop with a precise error if either is not finite, take an
optimiser step, record the loss, show it on a tqdm bar, and let a callback
stop early.
"""

from __future__ import annotations

import math
import numbers
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from tqdm import tqdm

from ._api import value_and_grad
from ._tree import tree_flatten
from .optim import AbstractOptimizer, Adam, _first_nonfinite, _leaf_paths

__all__ = ["fit"]


def fit(loss: Callable[..., Any], params: Any, optimizer: AbstractOptimizer | None = None,
        steps: int = 100, progress: bool = True,
        callback: Callable[[int, Any, float], Any] | None = None, args: tuple[Any, ...] = (),
        has_aux: bool = False, jit: bool = False) -> tuple[Any, dict[str, Any]]:
    """Minimise ``loss(params, *args)`` with a first-order optimiser; return the fitted params.

    Each step evaluates the loss and its gradient with
    :func:`diffsci.value_and_grad`, checks that both are finite, and applies
    ``optimizer.update``.  A tqdm bar on stderr shows the step and the loss.

    Args:
        loss: ``loss(params, *args) -> real scalar`` (or ``(scalar, aux)`` with
            ``has_aux=True``).  Plain NumPy code; ``params`` is any pytree.
        params: the initial parameters (dict, tuple, dataclass model such as
            ``ds.nn.MLP`` ...).
        optimizer: a :class:`diffsci.optim.AbstractOptimizer`; default
            ``Adam(1e-2)``.
        steps: the maximum number of optimiser steps (an int ``≥ 0``).
        progress: show the progress bar.
        callback: ``callback(step, params, loss)`` is called after the loss
            and gradient at ``params`` are computed and before the update;
            returning ``True`` stops the fit, and those ``params`` are returned.
        args: extra positional arguments of ``loss`` (not differentiated).
        has_aux: ``loss`` returns ``(value, aux)``; ``aux`` (with no gradient)
            is collected in the history.
        jit: compile the value-and-gradient step with :func:`diffsci.jit`.

    Returns:
        ``(params, history)``: the parameters after the last step, and a dict
        of NumPy arrays, one entry per step taken: ``"step"`` (0, 1, ...),
        ``"loss"`` (float64, the loss before that step's update), ``"time"``
        (seconds since the start), and ``"aux"`` (a list) with ``has_aux``.

    Raises:
        FloatingPointError: the loss or a gradient is NaN or infinite; the
            message names the step and, for a gradient, the parameter leaf
            (e.g. ``params['dense'].w``) and the first bad value.
        TypeError: ``optimizer`` is not an optimiser, ``loss`` does not return
            a real scalar, or ``steps`` is not an int.
        ValueError: ``steps`` is negative.

    Example:
        >>> params, history = fit(lambda p: np.sum((p["w"] - 3.0) ** 2),
        ...                       {"w": np.zeros(2)}, Adam(0.1), steps=300, progress=False)
        >>> params["w"].round(4), history["loss"].shape
        (array([3., 3.]), (300,))
    """
    if optimizer is None:
        optimizer = Adam(1e-2)
    if not isinstance(optimizer, AbstractOptimizer):
        raise TypeError(
            f"fit: optimizer must be a diffsci.optim optimiser (SGD, Adam, or a subclass of "
            f"diffsci.optim.AbstractOptimizer), got {type(optimizer).__name__}")
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral):
        raise TypeError(f"fit: steps must be an int, got {type(steps).__name__} {steps!r}")
    if steps < 0:
        raise ValueError(f"fit: steps must be >= 0, got {steps}")
    if callback is not None and not callable(callback):
        raise TypeError(f"fit: callback must be callable, got {type(callback).__name__}")
    steps = int(steps)
    args = tuple(args)
    vg = value_and_grad(loss, has_aux=has_aux)
    if jit:
        from ._jit import jit as _jit

        vg = _jit(vg)
    state = optimizer.init(params)
    losses = np.empty(steps)
    times = np.empty(steps)
    aux_history = []
    n = 0
    start = time.perf_counter()
    bar = tqdm(total=steps, disable=not progress, file=sys.stderr, desc="fit",
               dynamic_ncols=True, leave=True)
    try:
        for step in range(steps):
            out, grads = vg(params, *args)
            if has_aux:
                out, aux = out
                aux_history.append(aux)
            value = float(out)
            if not math.isfinite(value):
                raise FloatingPointError(
                    f"fit: the loss is {value} at step {step} (last finite loss: "
                    f"{_last(losses, n)}); lower the learning rate, or check the loss for "
                    f"log(0), 0/0 or overflow")
            bad, entry = _first_nonfinite(tree_flatten(grads)[0])
            if bad >= 0:
                raise FloatingPointError(
                    f"fit: the gradient with respect to {_leaf_paths(params)[bad]} is not "
                    f"finite at step {step} (first bad entry {entry}; loss {value:.6g}); look "
                    f"for sqrt, log or a division at 0 or an overflow in the loss, or lower "
                    f"the learning rate")
            losses[n] = value
            times[n] = time.perf_counter() - start
            n += 1
            if callback is not None and callback(step, params, value):
                break
            params, state = optimizer.update(grads, state, params)
            bar.set_postfix_str(f"loss={value:.5g}", refresh=False)
            bar.update(1)
    finally:
        bar.close()
    history = {"step": np.arange(n), "loss": losses[:n].copy(), "time": times[:n].copy()}
    if has_aux:
        history["aux"] = aux_history
    return params, history


def _last(losses, n):
    return f"{losses[n - 1]:.6g} at step {n - 1}" if n else "none"
