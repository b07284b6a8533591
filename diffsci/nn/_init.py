"""Weight initialisers and explicit seeds.

Every initialiser takes a ``numpy.random.Generator`` first; layers' ``init``
methods take a seed (an int) or a Generator and turn it into one with
:func:`as_rng`, so a model is reproducible from one number and there is no
global random state.  Weight shapes are ``(fan_in, fan_out)`` (a Dense layer
computes ``x @ w + b``).
"""

from __future__ import annotations

import numbers

import numpy as np
import numpy.typing as npt

__all__ = ["as_rng", "glorot_uniform", "glorot_normal", "he_normal", "lecun_normal",
           "orthogonal", "zeros"]


def as_rng(seed: int | np.random.SeedSequence | np.random.Generator) -> np.random.Generator:
    """A ``numpy.random.Generator`` from an explicit seed.

    Args:
        seed: an int ``≥ 0``, a ``numpy.random.SeedSequence``, or a Generator
            (returned as is, so consecutive layers draw from one stream).

    Returns:
        A ``numpy.random.Generator``.

    Raises:
        TypeError: ``seed`` is ``None`` or of another type (initialisation
            needs an explicit seed).

    Example:
        >>> as_rng(0).standard_normal()
        0.1257302210933933
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.SeedSequence) or (
            isinstance(seed, numbers.Integral) and not isinstance(seed, bool)):
        return np.random.default_rng(seed)
    raise TypeError(
        f"an explicit seed is required: pass an int or a numpy.random.Generator, got "
        f"{type(seed).__name__} {seed!r}")


def _fans(shape, fname):
    if len(shape) != 2 or min(shape) < 1:
        raise ValueError(f"{fname}: shape must be (fan_in, fan_out) with both >= 1, got "
                         f"{tuple(shape)}")
    return shape


def glorot_uniform(rng: np.random.Generator, shape: tuple[int, ...],
                   dtype: npt.DTypeLike = np.float64) -> np.ndarray:
    """Uniform on ``±√(6 / (fan_in + fan_out))`` (Glorot & Bengio 2010, eq. 16).

    Example:
        >>> glorot_uniform(np.random.default_rng(0), (3, 2)).shape
        (3, 2)
    """
    fan_in, fan_out = _fans(shape, "glorot_uniform")
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, size=shape).astype(dtype)


def glorot_normal(rng: np.random.Generator, shape: tuple[int, ...],
                  dtype: npt.DTypeLike = np.float64) -> np.ndarray:
    """Normal with standard deviation ``√(2 / (fan_in + fan_out))`` (Glorot & Bengio 2010)."""
    fan_in, fan_out = _fans(shape, "glorot_normal")
    return (np.sqrt(2.0 / (fan_in + fan_out)) * rng.standard_normal(shape)).astype(dtype)


def he_normal(rng: np.random.Generator, shape: tuple[int, ...],
              dtype: npt.DTypeLike = np.float64) -> np.ndarray:
    """Normal with standard deviation ``√(2 / fan_in)``, for relu (He et al. 2015, eq. 10)."""
    fan_in, _ = _fans(shape, "he_normal")
    return (np.sqrt(2.0 / fan_in) * rng.standard_normal(shape)).astype(dtype)


def lecun_normal(rng: np.random.Generator, shape: tuple[int, ...],
                 dtype: npt.DTypeLike = np.float64) -> np.ndarray:
    """Normal with standard deviation ``√(1 / fan_in)`` (LeCun et al. 1998)."""
    fan_in, _ = _fans(shape, "lecun_normal")
    return (np.sqrt(1.0 / fan_in) * rng.standard_normal(shape)).astype(dtype)


def orthogonal(rng: np.random.Generator, shape: tuple[int, ...],
               dtype: npt.DTypeLike = np.float64, gain: float = 1.0) -> np.ndarray:
    """A (semi-)orthogonal matrix: orthonormal rows or columns (Saxe et al. 2014).

    The Q factor of a Gaussian matrix, with the signs of R's diagonal folded
    in so that Q is Haar-distributed (Mezzadri 2007).

    Example:
        >>> q = orthogonal(np.random.default_rng(0), (3, 3))
        >>> np.allclose(q @ q.T, np.eye(3))
        True
    """
    rows, cols = _fans(shape, "orthogonal")
    a = rng.standard_normal((max(rows, cols), min(rows, cols)))
    q, r = np.linalg.qr(a)
    q = q * np.where(np.diag(r) < 0, -1.0, 1.0)
    if rows < cols:
        q = q.T
    return (gain * q).astype(dtype)


def zeros(rng: np.random.Generator, shape: tuple[int, ...],
          dtype: npt.DTypeLike = np.float64) -> np.ndarray:
    """Zeros (``rng`` is accepted for a uniform signature and unused)."""
    return np.zeros(shape, dtype)
