"""Image losses with shape checks: :func:`mse` (mean squared pixel error, optional weights/mask).

Written with NumPy calls, so diffsci differentiates them (the render's hand-written adjoint gets
the image cotangent ``2 w (image − target) / N``). The shape checks name the argument and both
shapes, where a bare ``np.mean((image - target) ** 2)`` would raise NumPy's broadcasting error or,
worse, broadcast silently (an (H, W) target against an (H, W, 3) image).
"""

from __future__ import annotations

import numpy as np

__all__ = ["mse"]


def mse(image, target, weights=None):
    """Mean squared pixel error ``mean(weights · (image − target)²)``.

    Args:
        image: a rendered (height, width, 3) image (traced or plain).
        target: the image to match, the same shape.
        weights: optional per-pixel weights or a mask, shape (height, width), (height, width, 1)
            or (height, width, 3) (perceptual or region weights).

    Returns:
        A scalar.

    Raises:
        ValueError: ``target`` or ``weights`` has the wrong shape (naming it and both shapes).

    Example:
        >>> mse(np.zeros((2, 2, 3)), np.ones((2, 2, 3)))
        np.float64(1.0)
    """
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
