"""Image losses with shape checks: :func:`mse` (mean squared pixel error, optional weights/mask).

Written with NumPy calls, so diffsci differentiates them (the render's hand-written adjoint gets
the image cotangent ``2 w (image − target) / N``). The shape checks name the argument and both
shapes, where a bare ``np.mean((image - target) ** 2)`` would raise NumPy's broadcasting error or,
worse, broadcast silently (an (H, W) target against an (H, W, 3) image).
"""

from __future__ import annotations

import numpy as np

from diffsci.extend import is_tracer
from diffsci.typing import Array, ArrayLike

from ._model import to_float_array

__all__ = ["mse"]


def _check_finite(name, value):
    if not np.all(np.isfinite(value)):
        bad = np.argwhere(~np.isfinite(np.asarray(value)))
        raise ValueError(f"raytrace.mse: {name}: expected finite numbers, got a non-finite value "
                         f"at index {tuple(int(i) for i in bad[0])}")


def mse(image: ArrayLike, target: ArrayLike, weights: ArrayLike | None = None) -> Array:
    """Mean squared pixel error ``mean(weights · (image − target)²)``.

    Args:
        image: a rendered (height, width, 3) image (traced or plain).
        target: the image to match, the same shape (an array, or nested lists).
        weights: optional per-pixel weights or a mask, shape (height, width), (height, width, 1)
            or (height, width, 3) (perceptual or region weights).

    Returns:
        A scalar.

    Raises:
        ValueError: ``target`` or ``weights`` has the wrong shape (naming it and both shapes),
            or holds a non-finite value (plain values; traced ones are not inspected).
        TypeError: ``target`` or ``weights`` holds bools or non-numbers.

    Example:
        >>> float(mse(np.zeros((2, 2, 3)), np.ones((2, 2, 3))))
        1.0
    """
    if not is_tracer(target):
        target = to_float_array("raytrace.mse: target", target)
        _check_finite("target", target)
    if weights is not None and not is_tracer(weights):
        weights = to_float_array("raytrace.mse: weights", weights)
        _check_finite("weights", weights)
    shape = tuple(np.shape(image))
    if len(shape) != 3 or shape[2] != 3:
        raise ValueError(f"raytrace.mse: image: expected shape (height, width, 3), got {shape}")
    if tuple(np.shape(target)) != shape:
        raise ValueError(
            f"raytrace.mse: target: expected the rendered image's shape {shape} "
            f"(camera.height, camera.width, 3), got {tuple(np.shape(target))}"
        )
    err = (image - target) ** 2
    if weights is None:
        return np.mean(err)
    wshape = tuple(np.shape(weights))
    if wshape == shape[:2]:
        weights = weights[..., None]
    elif wshape not in (shape[:2] + (1,), shape):
        raise ValueError(
            f"raytrace.mse: weights: expected shape {shape[:2]}, {shape[:2] + (1,)} or {shape}, "
            f"got {wshape}"
        )
    return np.mean(weights * err)
