"""Forward-mode rules for diffsci.numpy: arithmetic, elementwise math, reductions.

A rule is ``rule(t, ans, *args, **kwargs) -> output tangent`` for one
positional argument's tangent ``t``; a primitive's output tangent is the sum
over its dual arguments.  Every differentiable primitive of diffsci.numpy and
diffsci.numpy.linalg has one (``tests/diffsci/test_jvps.py`` fails otherwise):
shapes, indexing and products are in ``_jvps_shape.py``, linalg in
``_jvps_linalg.py``.  Without a rule a primitive would still work in forward
mode through its VJP (``_core._jvp_from_vjp``), at the price of a reverse pass
per call (several times slower on small arrays).

Conventions (the complex one is stated in diffsci/DERIVATIONS.md, "SciPy and FFT"; the VJPs
in ``_vjps*.py`` are the adjoints of these maps):

* Holomorphic f: ``t * f'(x)`` — no conjugate (the VJP is ``g * conj(f'(x))``).
* Non-holomorphic functions of complex input (``abs``, ``angle``, ``real``,
  ``imag``, ``conj``, ``var``, ``norm`` ...): the real-linear directional
  derivative, e.g. d|z| = Re(conj(z)·t)/|z|.
* Linear primitives apply themselves to the tangent (``_linear``); affine ones
  drop their constant (``sum``'s ``initial``, ``pad``'s ``constant_values``).
* A tangent has the output's shape: rules of broadcasting primitives broadcast
  (``_bc``) when the tangent's operand was broadcast.
* Kinks take the same conventions as the VJPs (0 at 0 for ``abs``; ties split
  0.5/0.5 for ``maximum``; shared among tied extrema for ``max``), so forward
  and reverse mode compute the same linear map everywhere.

Rules are written with NumPy calls (dispatching back to diffsci on traced
values), so they can be differentiated again: ``jvp`` of ``jvp``, and
``hessian`` (forward over reverse) differentiates the VJPs with these rules.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import defjvp, getval
from . import _wrap as W
from ._util import value_mask
from ._vjps import (
    _DEG,
    _LN2,
    _LN10,
    _clip_masks,
    _expand_reduced,
    _fgreater,
    _fless,
    _greater,
    _less,
    _log_base,
    _no_where,
    _others_product,
    _real_dtype,
    _safe,
    _trunc_quotient,
)

_F = float


def _bc(t, ans):
    """Broadcast a tangent to the output's shape (needed when its operand was broadcast)."""
    shape = ans.shape if hasattr(ans, "shape") else np.shape(ans)
    return t if t.shape == shape else W.broadcast_to(t, shape)


def _linear(prim):
    """JVP of a primitive that is linear in its first argument: apply it to the tangent."""
    return lambda t, ans, x, *args, **kwargs: prim(t, *args, **kwargs)


def _re_inner(g, t):
    """Re(conj(g)·t) elementwise: the directional derivative along ``t`` of a real function
    whose gradient (∂/∂Re + i·∂/∂Im, diffsci's convention) is ``g``; ``g·t`` for real values."""
    if np.iscomplexobj(g) or np.iscomplexobj(t):
        return np.real(np.conj(g) * t)
    return g * t


# ---------------------------------------------------------------- arithmetic
# A Python float on the other side cannot have broadcast the dual operand (``x * 2.0``).
defjvp(W.add,
       lambda t, ans, x, y: t if type(y) is _F else _bc(t, ans),
       lambda t, ans, x, y: t if type(x) is _F else _bc(t, ans))
defjvp(W.subtract,
       lambda t, ans, x, y: t if type(y) is _F else _bc(t, ans),
       lambda t, ans, x, y: -t if type(x) is _F else _bc(-t, ans))
defjvp(W.multiply, lambda t, ans, x, y: t * y, lambda t, ans, x, y: x * t)
defjvp(W.true_divide,
       lambda t, ans, x, y: t / y if type(y) is _F else _bc(t / y, ans),
       lambda t, ans, x, y: _bc(-t * (ans / y), ans))
defjvp(W.negative, lambda t, ans, x: -t)
defjvp(W.positive, lambda t, ans, x: t)


def _power_x(t, ans, x, y):
    if type(y) is int or type(y) is float:  # the common x ** 2: no masking needed
        return t * (y * x ** (y - 1)) if y != 0 else 0 * t
    return _bc(t * (y * x ** np.where(y == 0, 1, y - 1)), ans)


def _power_y(t, ans, x, y):
    # d/dy x**y = log(x) x**y, taken as 0 at x = 0; a negative real base under a complex
    # power takes the principal complex log (as in the VJP).
    if type(x) is float or type(x) is int:  # a Python base (10.0 ** y) keeps y's precision
        return _bc(t * (ans * _log_base(x, ans)), ans)
    return _bc(t * np.where(x == 0, 0, _log_base(x, ans) * ans), ans)


def _float_power_x(t, ans, x, y):
    return _bc(t * (y * np.float_power(x, np.where(y == 0, 1, y - 1))), ans)


defjvp(W.power, _power_x, _power_y)
defjvp(W.float_power, _float_power_x, _power_y)
defjvp(W.remainder,  # x - y*floor(x/y): the jumps are ignored
       lambda t, ans, x, y: _bc(t, ans),
       lambda t, ans, x, y: _bc(-t * value_mask(np.floor_divide, x, y), ans))
defjvp(W.fmod,  # x - y*trunc(x/y)
       lambda t, ans, x, y: _bc(t, ans),
       lambda t, ans, x, y: _bc(-t * _trunc_quotient(x, y), ans))

# ---------------------------------------------------------------- elementwise math
defjvp(W.sqrt, lambda t, ans, x: t / (2 * ans))
defjvp(W.cbrt, lambda t, ans, x: t / (3 * ans * ans))
defjvp(W.square, lambda t, ans, x: t * (2 * x))
defjvp(W.reciprocal, lambda t, ans, x: -t * (ans * ans))
defjvp(W.exp, lambda t, ans, x: t * ans)
defjvp(W.exp2, lambda t, ans, x: t * (_LN2 * ans))
defjvp(W.expm1, lambda t, ans, x: t * (ans + 1))
defjvp(W.log, lambda t, ans, x: t / x)
defjvp(W.log2, lambda t, ans, x: t / (_LN2 * x))
defjvp(W.log10, lambda t, ans, x: t / (_LN10 * x))
defjvp(W.log1p, lambda t, ans, x: t / (1 + x))
defjvp(W.sin, lambda t, ans, x: t * np.cos(x))
defjvp(W.cos, lambda t, ans, x: -t * np.sin(x))
defjvp(W.tan, lambda t, ans, x: t * (1 + ans * ans))
defjvp(W.arcsin, lambda t, ans, x: t / np.sqrt(1 - x * x))
defjvp(W.arccos, lambda t, ans, x: -t / np.sqrt(1 - x * x))
defjvp(W.arctan, lambda t, ans, x: t / (1 + x * x))
defjvp(W.sinh, lambda t, ans, x: t * np.cosh(x))
defjvp(W.cosh, lambda t, ans, x: t * np.sinh(x))
defjvp(W.tanh, lambda t, ans, x: t * (1 - ans * ans))
defjvp(W.arcsinh, lambda t, ans, x: t / np.sqrt(x * x + 1))
defjvp(W.arccosh, lambda t, ans, x: t / (np.sqrt(x - 1) * np.sqrt(x + 1)))
defjvp(W.arctanh, lambda t, ans, x: t / (1 - x * x))
for _p in (W.deg2rad, W.radians):
    defjvp(_p, lambda t, ans, x: t * _DEG)
for _p in (W.rad2deg, W.degrees):
    defjvp(_p, lambda t, ans, x: t / _DEG)
defjvp(W.logaddexp,
       lambda t, ans, x, y: _bc(t * np.exp(x - ans), ans),
       lambda t, ans, x, y: _bc(t * np.exp(y - ans), ans))
defjvp(W.logaddexp2,
       lambda t, ans, x, y: _bc(t * np.exp2(x - ans), ans),
       lambda t, ans, x, y: _bc(t * np.exp2(y - ans), ans))
defjvp(W.arctan2,  # arctan2(y, x): d = (x dy - y dx) / (x² + y²)
       lambda t, ans, y, x: _bc(t * (x / (x * x + y * y)), ans),
       lambda t, ans, y, x: _bc(-t * (y / (x * x + y * y)), ans))
defjvp(W.hypot,  # 0 at (0, 0), as in the VJP
       lambda t, ans, x, y: _bc(t * np.where(ans == 0, 0, x / _safe(ans)), ans),
       lambda t, ans, x, y: _bc(t * np.where(ans == 0, 0, y / _safe(ans)), ans))


def _sinc_jvp(t, ans, x):
    # sinc'(x) = (cos(πx) - sinc(x))/x, and 0 at x = 0.
    xs = _safe(x)
    return t * np.where(x == 0, 0, (np.cos(math.pi * xs) - ans) / xs)


def _abs_jvp(t, ans, x):
    if np.iscomplexobj(x):  # d|z| = Re(conj(z)·dz)/|z|  (0 at z = 0)
        return np.real(np.conj(x) * t) / _safe(ans)
    return t * np.sign(getval(x))


def _angle_jvp(t, ans, z, deg=False):
    # angle = atan2(Im z, Re z): d angle = Im(dz / z) (0 at z = 0; constant for real z).
    if not np.iscomplexobj(z):
        return np.zeros(np.shape(t), _real_dtype(t))
    d = np.imag(t * np.where(z == 0, 0, 1 / _safe(z)))
    return d / _DEG if deg else d


def _nan_to_num_jvp(t, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # Replaced (non-finite) entries are constants.
    v = getval(x)
    if np.iscomplexobj(v):
        return (np.where(np.isfinite(v.real), np.real(t), 0)
                + 1j * np.where(np.isfinite(v.imag), np.imag(t), 0))
    return np.where(np.isfinite(v), t, 0)


defjvp(W.sinc, _sinc_jvp)
defjvp(W.absolute, _abs_jvp)
defjvp(W.fabs, lambda t, ans, x: t * np.sign(getval(x)))
defjvp(W.real, lambda t, ans, x: np.real(t))
defjvp(W.imag, lambda t, ans, x: np.imag(t))
defjvp(W.conjugate, lambda t, ans, x: np.conj(t))
defjvp(W.angle, _angle_jvp)
defjvp(W.nan_to_num, _nan_to_num_jvp)


def _selector(x_wins):
    """JVPs of a two-way choice: t where the argument wins, half of t on ties (0.5/0.5)."""
    def jvp_x(t, ans, x, y):
        wins, ties = x_wins(getval(x), getval(y))
        return _bc(np.where(wins, t, np.where(ties, 0.5 * t, 0)), ans)

    def jvp_y(t, ans, x, y):
        wins, ties = x_wins(getval(x), getval(y))
        return _bc(np.where(wins | ties, np.where(ties, 0.5 * t, 0), t), ans)
    return jvp_x, jvp_y


defjvp(W.maximum, *_selector(_greater))
defjvp(W.minimum, *_selector(_less))
defjvp(W.fmax, *_selector(_fgreater))
defjvp(W.fmin, *_selector(_fless))


def _clip_a(t, ans, a, lo, hi):
    low, high = _clip_masks(a, lo, hi)
    return _bc(np.where(low | high, 0, t), ans)


def _clip_lo(t, ans, a, lo, hi):
    return _bc(np.where(_clip_masks(a, lo, hi)[0], t, 0), ans)


def _clip_hi(t, ans, a, lo, hi):
    return _bc(np.where(_clip_masks(a, lo, hi)[1], t, 0), ans)


defjvp(W._clip_p, _clip_a, _clip_lo, _clip_hi)
defjvp(W._where_p,
       lambda t, ans, c, x, y: _bc(W._where_p(c, t, 0), ans),
       lambda t, ans, c, x, y: _bc(W._where_p(c, 0, t), ans), argnums=(1, 2))


# ---------------------------------------------------------------- reductions
def _sum_jvp(t, ans, x, axis=None, dtype=None, out=None, keepdims=False, initial=None,
             where=True):
    # Linear up to ``initial``, a constant.
    return W.sum(t, axis=axis, dtype=dtype, keepdims=keepdims, where=where)


def _prod_jvp(t, ans, x, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue,
              where=np._NoValue):
    # d∏x = Σ_i t_i ∏_{j≠i} x_j, without dividing by x (exact at zeros and under underflow).
    _no_where(where, "prod")
    others = _others_product(x, axis)
    if initial is not np._NoValue and initial is not None:
        others = others * initial
    return W.sum(t * others, axis=axis, keepdims=keepdims)


def _minmax_jvp(t, ans, x, axis=None, out=None, keepdims=False, initial=np._NoValue,
                where=np._NoValue):
    # The mean of the tangents of all elements equal to the extremum (the VJP shares equally).
    _no_where(where, "max/min")
    hit = value_mask(np.equal, x, _expand_reduced(ans, x, axis, keepdims))  # jit: recomputed
    count = np.sum(hit, axis=axis, keepdims=keepdims, dtype=_real_dtype(x))
    return W.sum(np.where(hit, t, 0), axis=axis, keepdims=keepdims) / np.maximum(count, 1)


def _var_jvp(t, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
             where=np._NoValue, mean=np._NoValue, correction=np._NoValue):
    # dvar = 2/(n - ddof) Σ Re(conj(x - x̄)·t)  (the dx̄ term sums to zero).
    _no_where(where, "var/std")
    ddof = ddof if correction is np._NoValue else correction
    n = np.size(x) / max(np.size(ans), 1)
    d = x - np.mean(x, axis=axis, keepdims=True)
    return W.sum(_re_inner(d, t), axis=axis, keepdims=keepdims) * (2 / (n - ddof))


def _std_jvp(t, ans, x, *args, **kwargs):
    # std = sqrt(var); 0 at zero spread (as in the VJP).
    return np.where(ans == 0, 0, _var_jvp(t, ans, x, *args, **kwargs) / (2 * _safe(ans)))


def _shifted_right(v, d, fill):
    """v[..., :-d] padded at the start with d copies of ``fill``."""
    pad = np.full(np.shape(v)[:-1] + (d,), fill, np.result_type(getval(v)))
    return W.concatenate([pad, v[..., :-d]], axis=-1)


def _cumprod_jvp(t, ans, x, axis=None, dtype=None, out=None):
    # ẏ_j = x_j ẏ_{j-1} + y_{j-1} t_j: an affine recurrence s -> a s + b, solved by a
    # log-depth (Hillis-Steele) scan over the maps (a, b) without dividing by x — exact at
    # zeros and when products underflow, like the VJP's reverse scan.
    if axis is None:
        x, t, axis = W.ravel(x), W.ravel(t), 0
    axis = axis % np.ndim(ans)
    a, ym = np.moveaxis(x, axis, -1), np.moveaxis(ans, axis, -1)
    n = np.shape(a)[-1]
    if n == 0:
        return t
    b = np.moveaxis(t, axis, -1) * _shifted_right(ym, 1, 1)
    d = 1
    while d < n:
        b = b + a * _shifted_right(b, d, 0)
        a = a * _shifted_right(a, d, 1)
        d *= 2
    return np.moveaxis(b, -1, axis)


defjvp(W.sum, _sum_jvp)
defjvp(W.mean, _linear(W.mean))
defjvp(W.prod, _prod_jvp)
defjvp(W.amax, _minmax_jvp)
defjvp(W.amin, _minmax_jvp)
defjvp(W.var, _var_jvp)
defjvp(W.std, _std_jvp)
defjvp(W.cumsum, _linear(W.cumsum))
defjvp(W.cumprod, _cumprod_jvp)

from . import _jvps_linalg, _jvps_shape  # noqa: E402, F401  shape, product and linalg rules


# ---------------------------------------------------------------- convolution
def _register_conv():
    from ._more import _conv_p
    # Bilinear (eq. C3): the tangent of each operand convolved with the other, same mode.
    defjvp(_conv_p,
           lambda t, ans, a, v, how="numpy", mode="full": _conv_p(t, v, how=how, mode=mode),
           lambda t, ans, a, v, how="numpy", mode="full": _conv_p(a, t, how=how, mode=mode))


_register_conv()
