"""Reverse-mode rules for diffsci.numpy: arithmetic, elementwise math, reductions.

A rule is ``rule(g, ans, *args, **kwargs) -> cotangent`` for one positional
argument.  Conventions (diffsci/DERIVATIONS.md, "SciPy and FFT"): for holomorphic f the rule is
``g * conj(f'(x))``; for a linear map A it is ``Aᴴ g``; a real-valued function
of a complex input returns ∂/∂Re + i·∂/∂Im and reads only ``real(g)``;
broadcasting is undone by :func:`unbroadcast` only.  Rules use NumPy calls,
which dispatch back to diffsci on traced values, so every rule is itself
differentiable.  Shape, indexing and product rules: ``_vjps_shape.py``.

Conventions at kinks (documented where they are chosen):

* ``abs``/``fabs``/``sign``-like kinks take the subgradient 0 at 0.
* ``maximum``/``minimum``/``fmax``/``fmin`` split the cotangent 0.5/0.5 on ties;
  ``max``/``min``/``amax``/``amin`` share it equally among all tied maxima.
* ``clip`` passes the cotangent to ``a`` when ``a`` equals a bound (a bound
  gets it only where it is strictly active).
* ``mod``/``remainder``: x̄ = g, ȳ = -g·floor(x/y); ``fmod``: ȳ = -g·trunc(x/y)
  (the jumps are ignored, as everywhere in NumPy-AD systems).
* ``std`` at zero spread and ``hypot``/``angle`` at 0 give 0 (not NaN);
  ``sinc``'s derivative at 0 is 0 exactly.
"""

from __future__ import annotations

import cmath
import math

import numpy as np

from .._core import defvjp, defvjp_const, getval
from . import _wrap as W
from ._util import cj, is_complex, unbroadcast, value_mask

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_DEG = math.pi / 180.0


_REAL = np.dtype(np.float64)


def _holo(df):
    """The rule g·conj(f'(x)) of an elementwise f from ``df(ans, x) = f'(x)``."""

    def rule(g, ans, x, **kw):
        d = df(ans, x)
        if getattr(d, "dtype", _REAL).kind == "c":
            d = np.conj(d)
        return g * d

    return rule


def _holo2(dfx, dfy):
    """Rules of a broadcasting binary f from its partial derivatives ``df(ans, x, y)``."""
    return (lambda g, ans, x, y, **kw: unbroadcast(g * cj(dfx(ans, x, y)), x),
            lambda g, ans, x, y, **kw: unbroadcast(g * cj(dfy(ans, x, y)), y))


def _safe(x):
    """``x`` with its zeros replaced by ones (to divide by it where it is nonzero)."""
    return np.where(x == 0, 1, x)


def _real_dtype(x):
    return np.finfo(np.result_type(getval(x))).dtype


# ---------------------------------------------------------------- arithmetic
# A Python float on the other side cannot have broadcast the traced operand and
# is real: those rules skip unbroadcast and conj (the common ``x * 2.0``).
_F = float
defvjp(W.add,
       lambda g, ans, x, y, **kw: g if type(y) is _F else unbroadcast(g, x),
       lambda g, ans, x, y, **kw: g if type(x) is _F else unbroadcast(g, y))
defvjp(W.subtract,
       lambda g, ans, x, y, **kw: g if type(y) is _F else unbroadcast(g, x),
       lambda g, ans, x, y, **kw: -g if type(x) is _F else unbroadcast(-g, y))
defvjp(W.multiply,
       lambda g, ans, x, y, **kw: g * y if type(y) is _F else unbroadcast(g * cj(y), x),
       lambda g, ans, x, y, **kw: g * x if type(x) is _F else unbroadcast(g * cj(x), y))
defvjp(W.true_divide,
       lambda g, ans, x, y, **kw: g / y if type(y) is _F else unbroadcast(g / cj(y), x),
       lambda g, ans, x, y, **kw: unbroadcast(-g * cj(ans / y), y))
# x op c with a Python scalar c: one-parent records (diffsci._core.defvjp_const).
defvjp_const(W.add, lambda g, ans, xc: g)
defvjp_const(W.subtract, lambda g, ans, xc: g)
defvjp_const(W.multiply, lambda g, ans, xc: g * xc[1])
defvjp_const(W.true_divide, lambda g, ans, xc: g / xc[1])
defvjp_const(W.power, lambda g, ans, xc: _power_x(g, ans, xc[0], xc[1]))
defvjp_const(W.add, lambda g, ans, cx: g, argnum=1)
defvjp_const(W.subtract, lambda g, ans, cx: -g, argnum=1)
defvjp_const(W.multiply, lambda g, ans, cx: g * cx[0], argnum=1)
defvjp_const(W.true_divide, lambda g, ans, cx: -g * cj(ans / cx[1]), argnum=1)
defvjp(W.negative, lambda g, ans, x, **kw: -g)
defvjp(W.positive, lambda g, ans, x, **kw: g)


def _power_x(g, ans, x, y, **kw):
    if type(y) is int or type(y) is float:  # the common x ** 2: no masking needed
        return g * cj(y * x ** (y - 1)) if y != 0 else 0 * g
    return unbroadcast(g * cj(y * x ** np.where(y == 0, 1, y - 1)), x)


def _log_base(x, ans):
    """log(x) for the exponent's derivative: complex (principal branch, as NumPy's power
    takes it) for a real base whose power is complex, so a negative base has log|x| + iπ."""
    if type(x) is float or type(x) is int:
        if x > 0:
            return math.log(x)
        return 0.0 if x == 0 else cmath.log(x) if is_complex(ans) else math.nan
    if is_complex(ans) and not is_complex(x):
        x = x + 0j
    return np.log(_safe(x))


def _power_y(g, ans, x, y, **kw):
    # d/dy x**y = log(x) x**y, taken as 0 at x = 0 (the limit for y > 0).
    if type(x) is float or type(x) is int:  # a Python base (10.0 ** y) keeps y's precision
        return unbroadcast(g * cj(ans * _log_base(x, ans)), y)
    return unbroadcast(g * cj(np.where(x == 0, 0, _log_base(x, ans) * ans)), y)


defvjp(W.power, _power_x, _power_y)
defvjp(W.float_power, _power_x, _power_y)
defvjp(W.remainder,  # x - y*floor(x/y): the jumps are ignored
       lambda g, ans, x, y, **kw: unbroadcast(g, x),
       lambda g, ans, x, y, **kw: unbroadcast(-g * value_mask(np.floor_divide, x, y), y))
defvjp(W.fmod,  # x - y*trunc(x/y)
       lambda g, ans, x, y, **kw: unbroadcast(g, x),
       lambda g, ans, x, y, **kw: unbroadcast(-g * _trunc_quotient(x, y), y))

def _trunc_quotient(x, y):
    return value_mask(np.trunc, value_mask(np.true_divide, x, y))


# ---------------------------------------------------------------- elementwise math
defvjp(W.sqrt, _holo(lambda ans, x: 0.5 / ans))
defvjp(W.cbrt, _holo(lambda ans, x: 1 / (3 * ans * ans)))
defvjp(W.square, _holo(lambda ans, x: 2 * x))
defvjp(W.reciprocal, _holo(lambda ans, x: -ans * ans))
# The hottest rules are written out (no df call): g·conj(f'(x)) with the conj skipped for reals.
defvjp(W.exp, lambda g, ans, x, **kw: g * ans if ans.dtype.kind != "c" else g * np.conj(ans))
defvjp(W.exp2, _holo(lambda ans, x: _LN2 * ans))
defvjp(W.expm1, _holo(lambda ans, x: ans + 1))
defvjp(W.log, lambda g, ans, x, **kw: g / cj(x))
defvjp(W.log2, lambda g, ans, x, **kw: g / cj(_LN2 * x))
defvjp(W.log10, lambda g, ans, x, **kw: g / cj(_LN10 * x))
defvjp(W.log1p, lambda g, ans, x, **kw: g / cj(1 + x))


def _sin_vjp(g, ans, x, **kw):
    d = np.cos(x)
    return g * (d if x.dtype.kind != "c" else np.conj(d))


def _cos_vjp(g, ans, x, **kw):
    d = np.sin(x)
    return -g * (d if x.dtype.kind != "c" else np.conj(d))


defvjp(W.sin, _sin_vjp)
defvjp(W.cos, _cos_vjp)
defvjp(W.tan, _holo(lambda ans, x: 1 + ans * ans))
defvjp(W.arcsin, lambda g, ans, x, **kw: g / cj(np.sqrt(1 - x * x)))
defvjp(W.arccos, lambda g, ans, x, **kw: -g / cj(np.sqrt(1 - x * x)))
defvjp(W.arctan, lambda g, ans, x, **kw: g / cj(1 + x * x))
defvjp(W.sinh, _holo(lambda ans, x: np.cosh(x)))
defvjp(W.cosh, _holo(lambda ans, x: np.sinh(x)))
defvjp(W.tanh, _holo(lambda ans, x: 1 - ans * ans))
defvjp(W.arcsinh, lambda g, ans, x, **kw: g / cj(np.sqrt(x * x + 1)))
defvjp(W.arccosh, lambda g, ans, x, **kw: g / cj(np.sqrt(x - 1) * np.sqrt(x + 1)))
defvjp(W.arctanh, lambda g, ans, x, **kw: g / cj(1 - x * x))
defvjp(W.deg2rad, lambda g, ans, x, **kw: g * _DEG)
defvjp(W.radians, lambda g, ans, x, **kw: g * _DEG)
defvjp(W.rad2deg, lambda g, ans, x, **kw: g / _DEG)
defvjp(W.degrees, lambda g, ans, x, **kw: g / _DEG)
defvjp(W.logaddexp, *_holo2(lambda ans, x, y: np.exp(x - ans), lambda ans, x, y: np.exp(y - ans)))
defvjp(W.logaddexp2, *_holo2(lambda ans, x, y: np.exp2(x - ans),
                             lambda ans, x, y: np.exp2(y - ans)))
defvjp(W.arctan2, *_holo2(lambda ans, y, x: x / (x * x + y * y),
                          lambda ans, y, x: -y / (x * x + y * y)))
defvjp(W.hypot, *_holo2(lambda ans, x, y: np.where(ans == 0, 0, x / _safe(ans)),  # 0 at (0, 0)
                        lambda ans, x, y: np.where(ans == 0, 0, y / _safe(ans))))


def _sinc_vjp(g, ans, x, **kw):
    # sinc(x) = sin(πx)/(πx); sinc'(x) = (cos(πx) - sinc(x))/x, and 0 at x = 0.
    xs = _safe(x)
    return g * cj(np.where(x == 0, 0, (np.cos(math.pi * xs) - ans) / xs))


defvjp(W.sinc, _sinc_vjp)


def _abs_vjp(g, ans, x, **kw):
    # Real x: sign(x) (0 at the kink). Complex z: real(g) z/|z| (0 at z = 0).
    if np.iscomplexobj(x):
        return np.real(g) * x / _safe(ans)
    return g * np.sign(getval(x))


defvjp(W.absolute, _abs_vjp)
defvjp(W.fabs, lambda g, ans, x, **kw: g * np.sign(getval(x)))


def _angle_vjp(g, ans, z, deg=False):
    # angle = atan2(Im z, Re z): ∂/∂Re + i·∂/∂Im = i/conj(z) (taken as 0 at z = 0).
    if not np.iscomplexobj(z):
        return np.zeros_like(getval(g))
    d = np.where(z == 0, 0, 1j / np.conj(_safe(z)))
    return np.real(g) * d * (1 / _DEG if deg else 1)


def _imag_vjp(g, ans, x):
    # real(g) * 1j, not 1j * real(g): a NumPy float64 scalar is a Python float, and
    # complex * float would give a Python complex, which has no shape.
    return np.real(g) * 1j if np.iscomplexobj(x) else np.zeros_like(getval(g))


defvjp(W.real, lambda g, ans, x: np.real(g))
defvjp(W.imag, _imag_vjp)
defvjp(W.conjugate, lambda g, ans, x, **kw: np.conj(g))
defvjp(W.angle, _angle_vjp)


def _nan_to_num_vjp(g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # Replaced (non-finite) entries get no gradient.
    v = getval(x)
    if np.iscomplexobj(v):
        return (np.where(np.isfinite(v.real), np.real(g), 0)
                + 1j * np.where(np.isfinite(v.imag), np.imag(g), 0))
    return np.where(np.isfinite(v), g, 0)


defvjp(W.nan_to_num, _nan_to_num_vjp)


def _selector(x_wins):
    """Rules of a two-way choice: x gets g where it wins, half of g on ties (0.5/0.5)."""
    def rule_x(g, ans, x, y, **kw):
        wins, ties = x_wins(getval(x), getval(y))
        return unbroadcast(np.where(wins, g, np.where(ties, 0.5 * g, 0)), x)

    def rule_y(g, ans, x, y, **kw):
        wins, ties = x_wins(getval(x), getval(y))
        return unbroadcast(np.where(wins | ties, np.where(ties, 0.5 * g, 0), g), y)
    return rule_x, rule_y


def _greater(x, y):
    return x > y, x == y


def _less(x, y):
    return x < y, x == y


def _fgreater(x, y):  # fmax ignores NaNs
    return (x > y) | np.isnan(y), x == y


def _fless(x, y):
    return (x < y) | np.isnan(y), x == y


defvjp(W.maximum, *_selector(_greater))
defvjp(W.minimum, *_selector(_less))
defvjp(W.fmax, *_selector(_fgreater))
defvjp(W.fmin, *_selector(_fless))


def _clip_masks(a, lo, hi):
    a, lo, hi = getval(a), getval(lo), getval(hi)
    low = (a < lo) if lo is not None else np.zeros(np.shape(a), bool)
    high = (np.maximum(a, lo) > hi) if lo is not None and hi is not None else (
        (a > hi) if hi is not None else np.zeros(np.shape(a), bool))
    return low & ~high, high  # numpy.clip gives a_max where a_min > a_max


def _clip_a(g, ans, a, lo, hi):
    low, high = _clip_masks(a, lo, hi)
    return unbroadcast(np.where(low | high, 0, g), a)


def _clip_lo(g, ans, a, lo, hi):
    return unbroadcast(np.where(_clip_masks(a, lo, hi)[0], g, 0), lo)


def _clip_hi(g, ans, a, lo, hi):
    return unbroadcast(np.where(_clip_masks(a, lo, hi)[1], g, 0), hi)


defvjp(W._clip_p, _clip_a, _clip_lo, _clip_hi)
defvjp(W._where_p, None,
       lambda g, ans, c, x, y: unbroadcast(np.where(c, g, 0), x),
       lambda g, ans, c, x, y: unbroadcast(np.where(c, 0, g), y), argnums=(0, 1, 2))


# ---------------------------------------------------------------- reductions
def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis))


def _expand_reduced(g, x, axis, keepdims):
    """Broadcast a reduction's cotangent (or output) back to the input's shape."""
    shape = np.shape(x)
    if axis is not None and keepdims is not True:
        g = np.expand_dims(g, _axes(axis, len(shape)))
    return np.broadcast_to(g, shape)


def _no_where(where, name):
    if where is not np._NoValue and where is not True:
        raise NotImplementedError(f"diffsci: the VJP of {name}(..., where=...) is not "
                                  f"implemented; mask the input with where() instead")


def _sum_vjp(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, initial=None,
             where=True):
    g = _expand_reduced(g, x, axis, keepdims)
    return g if where is True or where is np._NoValue else np.where(where, g, 0)


def _mean_vjp(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    g = _expand_reduced(g, x, axis, keepdims)
    if where is True or where is np._NoValue:
        return g / (np.size(x) / max(np.size(ans), 1))
    mask = np.broadcast_to(where, np.shape(x))
    count = np.sum(mask, axis=axis, keepdims=True, dtype=_real_dtype(x))
    return np.where(mask, g / np.maximum(count, 1), 0)


def _others_product(x, axis):
    """∏ of the other elements of each reduction group, without dividing (zero-safe):
    the product of the exclusive cumulative products from the left and from the right."""
    axes = _axes(axis, np.ndim(x))
    k = len(axes)
    xm = np.moveaxis(x, axes, tuple(range(-k, 0)))
    shape = np.shape(xm)
    flat = np.reshape(xm, shape[:len(shape) - k] + (-1,))
    one = np.ones(np.shape(flat)[:-1] + (1,), np.result_type(getval(x)))

    def exclusive(v):
        return np.cumprod(np.concatenate([one, v[..., :-1]], axis=-1), axis=-1)

    others = exclusive(flat) * np.flip(exclusive(np.flip(flat, -1)), -1)
    return np.moveaxis(np.reshape(others, shape), tuple(range(-k, 0)), axes)


def _prod_vjp(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue,
              where=np._NoValue):
    # No division by x: exact with zeros, and when the product underflows.
    _no_where(where, "prod")
    others = _others_product(x, axis)
    if initial is not np._NoValue and initial is not None:
        others = others * initial
    return _expand_reduced(g, x, axis, keepdims) * cj(others)


def _minmax_vjp(g, ans, x, axis=None, out=None, keepdims=False, initial=np._NoValue,
                where=np._NoValue):
    # The cotangent is shared equally among all elements equal to the extremum.
    _no_where(where, "max/min")
    g = _expand_reduced(g, x, axis, keepdims)
    # the tie mask through value_mask: diffsci.jit's compiled code recomputes it
    hit = value_mask(np.equal, x, _expand_reduced(ans, x, axis, keepdims))
    count = np.sum(hit, axis=axis, keepdims=True, dtype=_real_dtype(x))
    return np.where(hit, g / np.maximum(count, 1), 0)


def _var_vjp(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
             where=np._NoValue, mean=np._NoValue, correction=np._NoValue):
    _no_where(where, "var/std")
    ddof = ddof if correction is np._NoValue else correction
    n = np.size(x) / max(np.size(ans), 1)
    g = _expand_reduced(g, x, axis, keepdims)
    if np.iscomplexobj(x):
        g = np.real(g)
    return g * (2 / (n - ddof)) * (x - np.mean(x, axis=axis, keepdims=True))


def _std_vjp(g, ans, x, *args, **kwargs):
    # std = sqrt(var); at zero spread the gradient is taken as 0 (not NaN).
    return _var_vjp(np.where(ans == 0, 0, g / (2 * _safe(ans))), ans, x, *args, **kwargs)


def _rev_cumsum(g, axis):
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def _cumsum_vjp(g, ans, x, axis=None, dtype=None, out=None):
    if axis is None:
        return np.reshape(_rev_cumsum(g, 0), np.shape(x))
    return _rev_cumsum(g, axis)


def _shifted(v, d, fill):
    """v[..., d:] padded at the end with d copies of ``fill``."""
    pad = np.full(np.shape(v)[:-1] + (d,), fill, np.result_type(getval(v)))
    return np.concatenate([v[..., d:], pad], axis=-1)


def _cumprod_vjp(g, ans, x, axis=None, dtype=None, out=None):
    # x̄_j = conj(y_{j-1}) S_j, where S_j = Σ_{i≥j} g_i conj(∏_{j<k≤i} x_k) solves the reverse
    # recurrence S_j = g_j + conj(x_{j+1}) S_{j+1}.  It is solved by a log-depth scan over
    # the affine maps s -> b + a s (composition (a, b)∘(a', b') = (a a', b + a b')): no
    # division by x, so zeros and underflowing products are exact.
    shape = np.shape(x)
    if axis is None:
        x, axis = np.ravel(x), 0
    axis = axis % np.ndim(x)
    xm, b = np.moveaxis(cj(x), axis, -1), np.moveaxis(g, axis, -1)
    ym = np.moveaxis(cj(ans), axis, -1)
    n = np.shape(xm)[-1]
    if n == 0:
        return np.reshape(g, shape)
    a = _shifted(xm, 1, 0)  # a_j = x_{j+1}; the last map is constant
    d = 1
    while d < n:
        b = b + a * _shifted(b, d, 0)
        a = a * _shifted(a, d, 1)
        d *= 2
    prev = np.concatenate([np.ones_like(getval(ym)[..., :1]), ym[..., :-1]], axis=-1)
    return np.reshape(np.moveaxis(prev * b, -1, axis), shape)


defvjp(W.sum, _sum_vjp)
defvjp(W.mean, _mean_vjp)
defvjp(W.prod, _prod_vjp)
defvjp(W.amax, _minmax_vjp)
defvjp(W.amin, _minmax_vjp)
defvjp(W.var, _var_vjp)
defvjp(W.std, _std_vjp)
defvjp(W.cumsum, _cumsum_vjp)
defvjp(W.cumprod, _cumprod_vjp)

from . import _vjps_shape  # noqa: E402, F401  shape, indexing and product rules


# ---------------------------------------------------------------- convolution
def _conv_adjoint(argnum):
    """Cotangent of operand ``argnum`` of y = a * v (DERIVATIONS.md §Convolution), per axis
    with shapes n (of a) and m (of v), w the other operand, flip over every axis:

    * 'full' (C1-C2): ā = valid(g * conj(flip v)), v̄ = valid(g * conj(flip a));
    * 'valid', n >= m (C4-C5): ā = full(g * conj(flip v)), v̄ = valid(conj(flip a) * g).
    """
    def adjoint(g, ans, a, v, how="numpy", mode="full"):
        from ._more import _conv_p
        x = a if argnum == 0 else v
        if mode == "full":
            w = v if argnum == 0 else a
            out = _conv_p(g, np.conj(np.flip(w)), how=how, mode="valid")
        elif argnum == 0:
            out = _conv_p(g, np.conj(np.flip(v)), how=how, mode="full")
        else:
            out = _conv_p(np.conj(np.flip(a)), g, how=how, mode="valid")
        return np.real(out) if np.iscomplexobj(out) and not np.iscomplexobj(x) else out
    return adjoint


def _register_conv():
    from ._more import _conv_p
    defvjp(_conv_p, _conv_adjoint(0), _conv_adjoint(1))


_register_conv()
