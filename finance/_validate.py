"""Validation at the API boundary: one helper per kind of argument, errors that name it.

Every public pricer calls these once on its keyword arguments; the formulas and kernels below
assume valid input. Traced values are checked through their plain values (``getval``), so
validation never cuts or records a gradient.
"""

from __future__ import annotations

import numpy as np

from diffsci.extend import getval

__all__ = ["check_bool", "check_real", "plain"]


def plain(x):
    """The plain float64 array under ``x`` (traced or not), without recording anything."""
    return np.asarray(getval(x), dtype=np.float64)


def check_real(who, name, x, *, low=None, strict=True, high=None):
    """Check that ``x`` is real, finite and inside ``(low, high)``; return ``x`` unchanged.

    Args:
        who: the public function's name (for the message).
        name: the argument's name.
        x: a number or array, possibly traced.
        low: the lower bound (None for none); ``strict=True`` means ``x > low`` else ``x >= low``.
        high: an upper bound (``x <= high``) or None.

    Raises:
        TypeError: complex or non-numeric input.
        ValueError: non-finite values or values outside the bounds, naming the first offender.
    """
    v = np.asarray(getval(x))
    if v.dtype.kind not in "fiub":
        raise TypeError(f"{who}: {name} must be real numbers, got dtype {v.dtype}")
    v = v.astype(np.float64, copy=False)
    bad = ~np.isfinite(v)
    if bad.any():
        raise ValueError(f"{who}: {name} must be finite, got {float(v[bad].flat[0])!r} at index "
                         f"{_first(bad)}")
    if low is not None:
        bad = v <= low if strict else v < low
        if bad.any():
            op = ">" if strict else ">="
            raise ValueError(f"{who}: {name} must be {op} {low:g}, got "
                             f"{float(v[bad].flat[0])!r} at index {_first(bad)}")
    if high is not None:
        bad = v > high
        if bad.any():
            raise ValueError(f"{who}: {name} must be <= {high:g}, got {float(v[bad].flat[0])!r} at "
                             f"index {_first(bad)}")
    return x


def check_bool(who, name, x):
    """``x`` as a plain boolean array (``is_call``); any non-boolean value is an error."""
    v = np.asarray(getval(x))
    if v.dtype.kind != "b":
        raise TypeError(f"{who}: {name} must be bool (True for a call), got dtype {v.dtype}")
    return v


def _first(mask):
    idx = np.argwhere(np.atleast_1d(mask))[0]
    return tuple(int(i) for i in idx) if mask.ndim else ()
