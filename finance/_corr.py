"""Validation of multi-asset inputs: the asset vectors and the correlation matrix."""

from __future__ import annotations

import numpy as np

from ._validate import check_real, plain

__all__ = ["check_assets", "check_correlation"]


def check_assets(who, d, **vectors):
    """Each named argument must be a scalar or have shape ``(d,)`` (one value per asset)."""
    for name, x in vectors.items():
        shape = np.shape(plain(x))
        if len(shape) > 1 or shape not in ((), (d,), (1,)):
            raise ValueError(f"{who}: {name} must be a scalar or have shape ({d},) (one value per "
                             f"asset), got shape {shape}")


def check_correlation(who, correlation, d):
    """A ``(d, d)`` symmetric, unit-diagonal, positive-definite matrix, else a ValueError."""
    check_real(who, "correlation", correlation, low=-1.0, strict=False, high=1.0)
    c = plain(correlation)
    if c.shape != (d, d):
        raise ValueError(f"{who}: correlation must have shape ({d}, {d}), got {c.shape}")
    if not np.allclose(c, c.T, rtol=0.0, atol=1e-12):
        raise ValueError(f"{who}: correlation must be symmetric, max |C - Cᵀ| = "
                         f"{float(np.max(np.abs(c - c.T))):g}")
    if not np.allclose(np.diag(c), 1.0, rtol=0.0, atol=1e-12):
        raise ValueError(f"{who}: correlation must have a unit diagonal, got {np.diag(c)}")
    try:
        np.linalg.cholesky(c)
    except np.linalg.LinAlgError:
        lo = float(np.linalg.eigvalsh(c)[0])
        raise ValueError(f"{who}: correlation must be positive definite (Cholesky failed), its "
                         f"smallest eigenvalue is {lo:.3g}") from None
