"""Validation at the API boundary: one helper per kind of argument, errors that name it.

Every public pricer calls these once on its keyword arguments; the formulas and kernels below
assume valid input. Traced values are checked through their plain values (``getval``), so
validation never cuts or records a gradient.
"""

from __future__ import annotations

import numpy as np

from diffsci.extend import getval, observed

__all__ = ["as_enum", "as_real", "check_bool", "check_broadcast", "check_real", "plain", "prepare"]


def plain(x):
    """The plain float64 array under ``x`` (traced or not), without recording anything."""
    return np.asarray(getval(x), dtype=np.float64)


def as_real(x):
    """``x`` as a float64 array if it is a list or tuple; anything else (traced too) unchanged."""
    return np.asarray(x, dtype=np.float64) if isinstance(x, list | tuple) else x


def check_real(who, name, x, *, low=None, strict=True, high=None):
    """Check that ``x`` is real, finite and inside ``(low, high)``; return ``x`` unchanged.

    Args:
        who: the public function's name (for the message).
        name: the argument's name.
        x: a number or array, possibly traced.
        low: the lower bound (None for none); ``strict=True`` means ``x > low`` else ``x >= low``.
        high: an upper bound (``x <= high``) or None.

    Raises:
        TypeError: complex, boolean or non-numeric input (a bool is not a number here).
        ValueError: non-finite values or values outside the bounds, naming the first offender.
    """
    if isinstance(x, bool | np.bool_):
        raise TypeError(f"{who}: {name} must be real numbers (a bool is not one), got {x!r}")
    try:
        v = np.asarray(getval(x))
    except (TypeError, ValueError) as exc:  # ragged lists and the like
        raise TypeError(f"{who}: {name} must be real numbers, got {type(x).__name__}") from exc
    if v.dtype.kind == "b":
        raise TypeError(f"{who}: {name} must be real numbers (a bool is not one), got a bool "
                        f"array")
    if v.dtype.kind not in "fiu":
        raise TypeError(f"{who}: {name} must be real numbers, got dtype {v.dtype}")
    # the values' checks: under diffsci.jit a guard, re-checked at every call
    wrong = observed(lambda v: _out_of_bounds(v, low, strict, high), x)
    if wrong is not None:
        raise ValueError(f"{who}: {name} {wrong}")
    return x


def _out_of_bounds(v, low, strict, high):
    """What is wrong with the plain values ``v`` (None when nothing)."""
    v = np.asarray(v, dtype=np.float64)
    bad = ~np.isfinite(v)
    if bad.any():
        return f"must be finite, got {float(v[bad].flat[0])!r} at index {_first(bad)}"
    if low is not None:
        bad = v <= low if strict else v < low
        if bad.any():
            op = ">" if strict else ">="
            return (f"must be {op} {low:g}, got {float(v[bad].flat[0])!r} at index "
                    f"{_first(bad)}")
    if high is not None:
        bad = v > high
        if bad.any():
            return f"must be <= {high:g}, got {float(v[bad].flat[0])!r} at index {_first(bad)}"
    return None


def check_broadcast(who, **arrays):
    """The common shape of the named arguments; ValueError naming them if they do not broadcast."""
    shapes = {name: np.shape(plain(x)) if not isinstance(x, np.ndarray) else x.shape
              for name, x in arrays.items()}
    try:
        return np.broadcast_shapes(*shapes.values())
    except ValueError:
        listed = ", ".join(f"{name} {shape}" for name, shape in shapes.items() if shape)
        raise ValueError(f"{who}: arguments do not broadcast together: {listed}") from None


def prepare(who, *, flags=None, **specs):
    """Validate the named numeric arguments of ``who`` once and return them, in order.

    Each keyword is ``name=(value, low)``: ``low`` is None (any finite real) or the exclusive
    lower bound; ``name=(value, low, high)`` adds an inclusive upper bound. Lists and tuples
    become float64 arrays; traced values pass through unchanged. ``flags`` maps the names of
    boolean arguments (``is_call``…) to their values: each must be bool (array) and is returned,
    as a plain bool array, after the numbers. Numbers and flags must broadcast together (else
    ValueError naming the function, the arguments and their shapes).

    Raises:
        TypeError: a bool where a number is expected, a non-bool flag, complex or non-numeric
            values (naming the argument).
        ValueError: non-finite or out-of-range values, or shapes that do not broadcast.

    Example:
        >>> prepare("f", spot=([100.0, 90.0], 0.0), rate=(0.05, None))
        (array([100.,  90.]), 0.05)
    """
    out = {}
    for name, spec in specs.items():
        value, low, high = (*spec, None)[:3]
        check_real(who, name, value, low=low, high=high)
        out[name] = as_real(value)
    bools = {name: check_bool(who, name, value) for name, value in (flags or {}).items()}
    check_broadcast(who, **out, **bools)
    return (*out.values(), *bools.values())


def as_enum(who, name, value, kind):
    """``value`` as a member of the enum ``kind``: a member, or its name or value as a string in
    any case (``"asian"``, ``"ASIAN"``, ``"likelihood_ratio"``, ``"likelihood-ratio"``).

    Raises:
        TypeError: neither a member nor a string (naming the function and argument).
        ValueError: a string that names no member, listing the accepted ones.
    """
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        key = value.strip().lower().replace("-", "_").replace(" ", "_")
        for member in kind:
            if member.name.lower() == key or str(member.value).lower() == key:
                return member
        accepted = ", ".join(repr(m.name.lower()) for m in kind)
        raise ValueError(f"{who}: {name} must be a finance.{kind.__name__} or one of {accepted}, "
                         f"got {value!r}")
    raise TypeError(f"{who}: {name} must be a finance.{kind.__name__} or its name as a string, "
                    f"got {type(value).__name__} {value!r}")


def check_bool(who, name, x):
    """``x`` as a plain boolean array (``is_call``); any non-boolean value is an error."""
    v = np.asarray(getval(x))
    if v.dtype.kind != "b":
        raise TypeError(f"{who}: {name} must be bool (True for a call), got dtype {v.dtype}")
    return v


def _first(mask):
    idx = np.argwhere(np.atleast_1d(mask))[0]
    return tuple(int(i) for i in idx) if mask.ndim else ()
