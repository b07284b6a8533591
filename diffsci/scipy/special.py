"""``diffsci.scipy.special``: scipy.special's functions, differentiable.

Every elementwise function is one primitive wrapping its ``scipy.special``
namesake (on plain values it *is* SciPy's function), with a reverse-mode and a
forward-mode rule.  The rules are data: one line per function gives its
derivative, written with NumPy calls and the primitives of this module, so
every rule is itself differentiable (``digamma' = polygamma(1, .)``,
``polygamma(n)' = polygamma(n + 1)``, ``i0' = i1``): second and higher orders
work.  ``logsumexp``, ``softmax`` and ``log_softmax`` reuse the fused
kernels of :mod:`diffsci._ops` and take SciPy's signatures.

Conventions (also in the docstrings): for a holomorphic function of complex
input the VJP is ``g * conj(f'(z))`` and the JVP ``f'(z) * t``
(diffsci/DERIVATIONS.md, "SciPy and FFT");
``xlogy(x, y)`` has ``d/dx = log(y)`` (``-inf`` at ``y = 0``, the one-sided
slope) and ``d/dy = x / y`` with ``0`` at ``x = y = 0``, where ``f(0, y) = 0``
for every ``y``; ``i1'(0) = i1e'(0) = 1/2`` (the limit of ``i0 - i1/x``) and
``i0e'(0) = 0`` (``sign(0) = 0``).  Complex input is supported by ``erf``,
``erfc``, ``erfcx``, ``ndtr``, ``log_ndtr``, ``gamma``, ``xlogy``, ``xlog1py``
(as by SciPy); ``digamma`` evaluates complex input but has no complex derivative
(SciPy's ``polygamma`` is real-only).  Plain SciPy code differentiates too:
``scipy.special.erf(traced)`` dispatches here.

Derivations: ``diffsci/DERIVATIONS.md``, section "diffsci.scipy.special".
"""

from __future__ import annotations

import math
import operator

import numpy as np
import scipy.special as sc

from .. import _ops
from .._core import defjvp, defvjp, getval, is_tracer, primitive
from ..numpy import _util
from ..numpy._tracer_methods import register_numpy_function
from ..numpy._util import cj, unbroadcast

__all__ = [
    "beta", "betaln", "digamma", "erf", "erfc", "erfcinv", "erfcx", "erfinv", "expit", "gamma",
    "gammaln", "i0", "i0e", "i1", "i1e", "log_ndtr", "log_softmax", "logit", "logsumexp",
    "ndtr", "ndtri", "polygamma", "psi", "softmax", "xlog1py", "xlogy",
]

_2_SQRTPI = 2.0 / math.sqrt(math.pi)  # erf'(0)
_SQRTPI_2 = math.sqrt(math.pi) / 2.0  # erfinv'(0)
_SQRT2 = math.sqrt(2.0)
_SQRT2PI = math.sqrt(2.0 * math.pi)
_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def _bc(t, ans):
    """A tangent broadcast to the output's shape (when the other operand broadcast it)."""
    shape = np.shape(getval(ans))
    return t if np.shape(getval(t)) == shape else np.broadcast_to(t, shape)


def _safe(x):
    """``x`` with its zeros replaced by ones (to divide where it is nonzero)."""
    return np.where(x == 0, 1, x)


def _real_only(name):
    def check(x):
        if np.iscomplexobj(getval(x)):
            raise TypeError(
                f"diffsci.scipy.special.{name}: derivatives for complex input are not "
                f"implemented (scipy.special.polygamma is real-only); differentiate a real "
                f"input, or use it without gradients"
            )
    return check


_check_digamma = _real_only("digamma")


# ---------------------------------------------------------------- derivatives, f'(x)
# Each takes (ans, x) = (f(x), x) and is written with NumPy calls and this module's
# primitives, so it is differentiable in turn.
def _d_digamma(ans, x):
    _check_digamma(x)
    return polygamma(1, x)


def _d_i1(ans, x):
    # I1' = I0 - I1/x (DLMF 10.29.2), with the limit 1/2 at x = 0.
    return np.where(x == 0, 0.5, i0(x) - ans / _safe(x))


def _d_i1e(ans, x):
    # i1e = e^{-|x|} I1: i1e' = i0e - i1e/x - sign(x) i1e, with the limit 1/2 at x = 0.
    return np.where(x == 0, 0.5, i0e(x) - ans / _safe(x) - np.sign(x) * ans)


def _d_log_ndtr(ans, x):
    # phi(x)/Phi(x) = sqrt(2/pi) / erfcx(-x/sqrt 2): no cancellation in either tail.
    return _SQRT_2_PI / erfcx(-x / _SQRT2)


def _elementwise(fun, deriv, complex_ok, deriv_text, at, value, ref):
    """One elementwise primitive over ``fun`` with its VJP ``g conj(f')`` and JVP ``f' t``.

    ``deriv(ans, x)`` is f'(x); ``deriv_text`` says it in words for the docstring, whose
    example evaluates the derivative at ``at`` (``value``).
    """
    name = fun.__name__
    p = primitive(fun, name=name)
    defvjp(p, lambda g, ans, x: g * cj(deriv(ans, x)))
    defjvp(p, lambda t, ans, x: t * deriv(ans, x))
    kind = "real or complex" if complex_ok else "real"
    p.__doc__ = (
        f"``scipy.special.{name}``, elementwise, differentiable to any order.\n\n"
        f"On plain values this is SciPy's function; on traced values it records one\n"
        f"primitive with derivative {deriv_text}.\n\n"
        f"Args:\n    x: {kind} array-like (float32 stays float32).\n\n"
        f"Returns:\n    ``scipy.special.{name}(x)``, same shape.\n\n"
        f"Raises:\n    TypeError: for a dtype SciPy's {name} does not take"
        + ("" if complex_ok else " (complex included)") + ".\n\n"
        f"Example:\n    >>> import diffsci as ds\n"
        f"    >>> from diffsci.scipy.special import {name}\n"
        f"    >>> float(ds.grad({name})({at}))\n    {value}\n\n"
        f"References:\n    {ref}; diffsci/DERIVATIONS.md, \"diffsci.scipy.special\".\n"
    )
    p.__module__ = __name__
    return p


# ---------------------------------------------------------------- the table: one line each
# f'(ans, x), complex differentiable, f' in words, example point and derivative, reference
E = _elementwise
erf = E(sc.erf, lambda ans, x: _2_SQRTPI * np.exp(-x * x), True,
        "2/sqrt(pi) exp(-x^2)", 0.5, 0.8787825789354448, "DLMF 7.2.1")
erfc = E(sc.erfc, lambda ans, x: -_2_SQRTPI * np.exp(-x * x), True,
         "-2/sqrt(pi) exp(-x^2)", 0.5, -0.8787825789354448, "DLMF 7.2.2")
erfcx = E(sc.erfcx, lambda ans, x: 2 * x * ans - _2_SQRTPI, True,
          "2 x erfcx(x) - 2/sqrt(pi), where erfcx(x) = exp(x^2) erfc(x)", 1.0,
          -0.27321201478389856, "DLMF 7.2.2")
erfinv = E(sc.erfinv, lambda ans, x: _SQRTPI_2 * np.exp(ans * ans), False,
           "sqrt(pi)/2 exp(erfinv(x)^2)", 0.5, 1.1125848189719496,
           "the inverse function theorem on DLMF 7.2.1")
erfcinv = E(sc.erfcinv, lambda ans, x: -_SQRTPI_2 * np.exp(ans * ans), False,
            "-sqrt(pi)/2 exp(erfcinv(x)^2)", 0.5, -1.1125848189719496,
            "the inverse function theorem on DLMF 7.2.2")
ndtr = E(sc.ndtr, lambda ans, x: np.exp(-0.5 * x * x) / _SQRT2PI, True,
         "the normal pdf exp(-x^2/2)/sqrt(2 pi)", 0.0, 0.3989422804014327,
         "Abramowitz & Stegun 26.2.2")
log_ndtr = E(sc.log_ndtr, _d_log_ndtr, True,
             "pdf/cdf computed as sqrt(2/pi)/erfcx(-x/sqrt 2), stable in both tails "
             "(about -x far in the left tail)", -10.0, 10.098093233962512,
             "derivation (S1)")
ndtri = E(sc.ndtri, lambda ans, x: _SQRT2PI * np.exp(0.5 * ans * ans), False,
          "sqrt(2 pi) exp(ndtri(x)^2/2), one over the pdf at ndtri(x)", 0.5,
          2.5066282746310002, "the inverse function theorem on A&S 26.2.2")
gamma = E(sc.gamma, lambda ans, x: ans * digamma(x), True,
          "gamma(x) digamma(x) (first order only for complex x: digamma' is real-only)",
          2.0, 0.42278433509846713, "DLMF 5.2.2")
gammaln = E(sc.gammaln, lambda ans, x: digamma(x), False,
            "digamma(x), also where gamma(x) < 0 (gammaln is log|gamma|)", 3.0,
            0.9227843350984671, "DLMF 5.2.2")
digamma = E(sc.digamma, _d_digamma, False,
            "polygamma(1, x); complex x is evaluated but not differentiated", 1.0,
            1.6449340668482266, "DLMF 5.15.1")
psi = digamma
expit = E(sc.expit, lambda ans, x: ans * expit(-x), False,
          "expit(x) expit(-x) (= expit(1 - expit), accurate in both tails)", 0.0, 0.25,
          "the logistic function")
logit = E(sc.logit, lambda ans, x: 1 / (x * (1 - x)), False,
          "1 / (x (1 - x))", 0.5, 4.0, "the inverse of expit")
i0 = E(sc.i0, lambda ans, x: i1(x), False,
       "i1(x)", 1.0, 0.5651591039924851, "DLMF 10.29.3")
i0e = E(sc.i0e, lambda ans, x: i1e(x) - np.sign(x) * ans, False,
        "i1e(x) - sign(x) i0e(x), where i0e(x) = exp(-|x|) i0(x) (0 at the kink x = 0)",
        1.0, -0.25784919224393194, "DLMF 10.29.3")
i1 = E(sc.i1, _d_i1, False,
       "i0(x) - i1(x)/x, and its limit 1/2 at x = 0", 0.0, 0.5, "DLMF 10.29.2")
i1e = E(sc.i1e, _d_i1e, False,
        "i0e(x) - i1e(x)/x - sign(x) i1e(x), where i1e(x) = exp(-|x|) i1(x) (1/2 at x = 0)",
        1.0, 0.049938776894223436, "DLMF 10.29.2")
del E


# ---------------------------------------------------------------- two arguments
def _binary(fun, dx, dy, complex_ok, deriv_text, example, value, ref, args="x, y"):
    """A broadcasting two-argument primitive from its partial derivatives ``d(ans, x, y)``."""
    name = fun.__name__
    p = primitive(fun, name=name)
    defvjp(p, lambda g, ans, x, y: unbroadcast(g * cj(dx(ans, x, y)), x),
           lambda g, ans, x, y: unbroadcast(g * cj(dy(ans, x, y)), y))
    defjvp(p, lambda t, ans, x, y: _bc(t * dx(ans, x, y), ans),
           lambda t, ans, x, y: _bc(t * dy(ans, x, y), ans))
    kind = "real or complex" if complex_ok else "real"
    a, b = args.split(", ")
    p.__doc__ = (
        f"``scipy.special.{name}``, broadcasting, differentiable in both arguments.\n\n"
        f"On plain values this is SciPy's function; on traced values it records one\n"
        f"primitive with partial derivatives {deriv_text}.\n\n"
        f"Args:\n    {a}, {b}: {kind} array-likes that broadcast together.\n\n"
        f"Returns:\n    ``scipy.special.{name}({args})``, the broadcast shape.\n\n"
        f"Raises:\n    TypeError: for a dtype SciPy's {name} does not take.\n\n"
        f"Example:\n    >>> import diffsci as ds\n"
        f"    >>> from diffsci.scipy.special import {name}\n"
        f"    >>> [float(d) for d in ds.grad({name}, argnums=(0, 1)){example}]\n"
        f"    {value}\n\n"
        f"References:\n    {ref}; diffsci/DERIVATIONS.md, \"diffsci.scipy.special\".\n"
    )
    p.__module__ = __name__
    return p


def _ratio(x, d):
    """x / d, taken as 0 where x = d = 0 (only there: elsewhere it is the true quotient)."""
    both = (x == 0) & (d == 0)
    return np.where(both, 0, x / np.where(both, 1, d))


def _d_beta(first):
    def d(ans, a, b):
        return ans * (digamma(a if first else b) - digamma(a + b))
    return d


def _d_betaln(first):
    def d(ans, a, b):
        return digamma(a if first else b) - digamma(a + b)
    return d


beta = _binary(sc.beta, _d_beta(True), _d_beta(False), False,
               "B(a, b) (digamma(a) - digamma(a + b)) and B(a, b) (digamma(b) - digamma(a + b))",
               "(2.0, 3.0)", "[-0.09027777777777775, -0.04861111111111109]", "DLMF 5.12.1",
               args="a, b")
betaln = _binary(sc.betaln, _d_betaln(True), _d_betaln(False), False,
                 "digamma(a) - digamma(a + b) and digamma(b) - digamma(a + b)",
                 "(2.0, 3.0)", "[-1.083333333333333, -0.5833333333333331]", "DLMF 5.12.1",
                 args="a, b")
xlogy = _binary(sc.xlogy, lambda ans, x, y: np.log(y), lambda ans, x, y: _ratio(x, y), True,
                "log(y) (-inf at y = 0, the one-sided slope) and x/y (0 at x = y = 0, "
                "where xlogy(0, y) = 0 for every y)",
                "(2.0, 4.0)", "[1.3862943611198906, 0.5]", "the convention 0 log 0 = 0")
xlog1py = _binary(sc.xlog1py, lambda ans, x, y: np.log1p(y),
                  lambda ans, x, y: _ratio(x, 1 + y), True,
                  "log1p(y) (-inf at y = -1) and x/(1 + y) (0 at x = 0, y = -1)",
                  "(2.0, 3.0)", "[1.3862943611198906, 0.5]", "the convention 0 log 0 = 0")


def _polygamma_plain(n, x):
    out = sc.polygamma(n, x)  # SciPy computes in float64: keep float32 input float32
    return out.astype(np.float32) if np.result_type(x) == np.float32 else out


_polygamma_p = primitive(_polygamma_plain, name="polygamma")
defvjp(_polygamma_p, lambda g, ans, n, x: unbroadcast(g * _polygamma_p(n + 1, x), x),
       argnums=(1,))
defjvp(_polygamma_p, lambda t, ans, n, x: _bc(t * _polygamma_p(n + 1, x), ans), argnums=(1,))


def polygamma(n, x):
    """``scipy.special.polygamma``: the n-th derivative of digamma, differentiable in ``x``.

    The derivative in ``x`` is ``polygamma(n + 1, x)``, itself differentiable,
    so every order works.  ``n`` is a static order: it is not differentiated.

    Args:
        n: a non-negative integer (or integer-valued array-like broadcasting
            with ``x``); a plain value, never traced.
        x: real array-like.

    Returns:
        ``scipy.special.polygamma(n, x)`` (float32 for float32 ``x``).

    Raises:
        TypeError: ``n`` is traced.
        ValueError: ``n`` is negative or not integer-valued.

    Example:
        >>> import diffsci as ds
        >>> float(ds.grad(lambda x: polygamma(1, x))(1.0))  # polygamma(2, 1) = -2 zeta(3)
        -2.404113806319188

    References:
        DLMF 5.15.1; diffsci/DERIVATIONS.md, "diffsci.scipy.special".
    """
    if is_tracer(n):
        raise TypeError(
            "diffsci.scipy.special.polygamma: n (the order) must be a plain integer, got a "
            "traced value; polygamma is not differentiable in n"
        )
    nv = np.asarray(n)
    if nv.dtype.kind not in "iuf" or (nv.dtype.kind == "f" and not np.all(nv == np.floor(nv))):
        raise ValueError(
            f"diffsci.scipy.special.polygamma: n must be a non-negative integer, got {n!r}"
        )
    if np.any(nv < 0):
        raise ValueError(
            f"diffsci.scipy.special.polygamma: n must be a non-negative integer, got {n!r}"
        )
    return _polygamma_p(nv.astype(np.int64) if nv.ndim else int(nv), x)


# ---------------------------------------------------------------- reductions over axes
def _axes(axis, ndim, fname):
    """``axis`` (None, an int or a tuple of ints) as a sorted tuple of non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    try:
        axes = (operator.index(axis),)
    except TypeError:
        try:
            axes = tuple(operator.index(a) for a in axis)
        except TypeError:
            raise TypeError(f"diffsci.scipy.special.{fname}: axis must be None, an int or a "
                            f"tuple of ints, got {axis!r}") from None
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"diffsci.scipy.special.{fname}: axis {a} is out of range for an "
                             f"input with {ndim} dimension(s)")
    out = tuple(sorted({a % ndim for a in axes}))
    if len(out) != len(axes):
        raise ValueError(f"diffsci.scipy.special.{fname}: repeated axis in {axis!r}")
    return out


def _to_last(x, axes):
    """``x`` with ``axes`` moved to the end and merged into one; and how to undo it."""
    nd = np.ndim(getval(x))
    rest = [d for d in range(nd) if d not in axes]
    perm = rest + list(axes)
    moved = np.transpose(x, perm) if perm != list(range(nd)) else x
    mshape = np.shape(getval(moved))
    flat = np.reshape(moved, mshape[:len(rest)] + (-1,))

    def undo(y):
        y = np.reshape(y, mshape)
        return np.transpose(y, np.argsort(perm)) if perm != list(range(nd)) else y

    return flat, undo


def _keep(out, shape, axes, keepdims):
    if not keepdims:
        return out
    return np.reshape(out, tuple(1 if d in axes else n for d, n in enumerate(shape)))


def _traced(*xs):
    return any(is_tracer(x) for x in xs)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``scipy.special.logsumexp``: ``log(sum(b * exp(a), axis))``, differentiable in a and b.

    On plain values this is SciPy's function.  On traced values: without ``b``
    and for real ``a`` it is the fused, stable :func:`diffsci.logsumexp` (over
    several axes by merging them); with ``b``, complex ``a`` or ``return_sign``
    it is a composite ``log|Σ b exp(a - m)| + m`` (``m`` the plain maximum of
    ``Re a``), differentiable automatically.  Its gradient is ``b exp(a - out)``
    for ``a`` and ``exp(a - out)`` for ``b`` (times the sign of the sum).

    Args:
        a: real or complex array.  Without ``b``, traced real ``a`` must be
            finite or ``-inf`` (masked); NaN and ``+inf`` raise.
        axis: None (all elements), an int or a tuple of ints.
        b: optional weights broadcasting with ``a`` (may be negative, zero, or traced).
        keepdims: keep the reduced axes with length 1.
        return_sign: also return the sign of the sum; the result is then
            ``log|Σ b exp(a)|`` (real) and the sign (plain for real input, the
            traced phase for complex input).

    Returns:
        The reduced array, or ``(result, sign)`` with ``return_sign``.  A
        negative sum without ``return_sign`` gives NaN, as in SciPy.

    Raises:
        TypeError: ``axis`` is not None, an int or a tuple of ints.
        ValueError: ``axis`` is out of range or repeated; NaN/+inf in traced ``a``.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda a: logsumexp(a, b=np.array([1.0, 3.0])))(np.zeros(2))
        array([0.25, 0.75])

    References:
        P. Blanchard, D. J. Higham, N. J. Higham, "Accurately computing the
        log-sum-exp and softmax functions", IMA J. Numer. Anal. 41 (2021), eq. (1.1).
    """
    if not _traced(a, b):
        return sc.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)
    shape = np.shape(getval(a))
    if b is not None:
        shape = np.broadcast_shapes(shape, np.shape(getval(b)))
        a = np.broadcast_to(a, shape) if np.shape(getval(a)) != shape else a
    axes = _axes(axis, len(shape), "logsumexp")
    cplx = np.iscomplexobj(getval(a)) or np.iscomplexobj(getval(b))
    if b is None and not cplx and not return_sign:
        flat, _ = _to_last(a, axes)
        return _keep(_ops.logsumexp(flat, axis=-1), shape, axes, keepdims)
    m = _util.value_mask(_lse_shift, a, axes)  # recomputed by diffsci.jit's compiled code
    e = np.exp(a - m)
    s = np.sum(e if b is None else b * e, axis=axes, keepdims=True)
    if cplx:
        out = np.log(s) + m
        res, sign = (np.real(out), s / np.abs(s)) if return_sign else (out, None)
    else:
        sign = _util.value_mask(np.sign, s)  # recomputed by diffsci.jit's compiled code
        res = np.log(np.abs(s)) + m
        if not return_sign:
            res = np.where(_util.value_mask(np.less, sign, 0), np.nan, res)
    if not keepdims:
        res = np.squeeze(res, axis=axes)
        sign = None if sign is None else np.squeeze(sign, axis=axes)
    return (res, sign) if return_sign else res


def _lse_shift(a, axes):
    """The shift of a stable log-sum-exp: the largest real part (0 where not finite)."""
    m = np.max(np.real(a), axis=axes, keepdims=True) if axes else np.real(a)
    return np.where(np.isfinite(m), m, 0)


def softmax(x, axis=None):
    """``scipy.special.softmax``: ``exp(x) / sum(exp(x), axis)``, differentiable.

    Traced input goes through the fused, stable :func:`diffsci.softmax` (several
    axes are merged into one); plain input through SciPy.

    Args:
        x: real array; traced ``x`` must be finite or ``-inf`` (probability 0).
        axis: None (all elements, SciPy's default), an int or a tuple of ints.

    Returns:
        An array of ``x``'s shape whose slices along ``axis`` sum to 1.  A
        slice that is all ``-inf`` gives zeros for traced input (NaN in SciPy).

    Raises:
        TypeError: ``axis`` is malformed, or traced ``x`` is not float32/float64.
        ValueError: ``axis`` is out of range; NaN or ``+inf`` in traced ``x``.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda x: softmax(x)[1])(np.zeros(2))
        array([-0.25,  0.25])

    References:
        Blanchard, Higham & Higham (2021), eq. (1.2); diffsci/DERIVATIONS.md, "softmax".
    """
    if not is_tracer(x):
        return sc.softmax(x, axis=axis)
    axes = _axes(axis, np.ndim(getval(x)), "softmax")
    flat, undo = _to_last(x, axes)
    return undo(_ops.softmax(flat, axis=-1))


def log_softmax(x, axis=None):
    """``scipy.special.log_softmax``: ``x - logsumexp(x, axis)``, differentiable.

    Args:
        x: real array (traced: finite or ``-inf``).
        axis: None (all elements), an int or a tuple of ints.

    Returns:
        An array of ``x``'s shape: the log-probabilities along ``axis``.

    Raises:
        TypeError, ValueError: as :func:`logsumexp`.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda x: log_softmax(x)[0])(np.zeros(2))
        array([ 0.5, -0.5])

    References:
        Blanchard, Higham & Higham (2021), section 2.
    """
    if not is_tracer(x):
        return sc.log_softmax(x, axis=axis)
    return x - logsumexp(x, axis=axis, keepdims=True)


# ---------------------------------------------------------------- plain SciPy code dispatches
# scipy.special's ufuncs call __array_ufunc__ on traced values: route them here.
for _f in (erf, erfc, erfcx, erfinv, erfcinv, ndtr, log_ndtr, ndtri, gamma, gammaln, digamma,
           expit, logit, i0, i0e, i1, i1e, beta, betaln, xlogy, xlog1py):
    register_numpy_function(getattr(sc, _f.__name__), _f)
del _f


# ---------------------------------------------------------------- the rest of the table
# Bessel functions, zeta, entropies ...: diffsci/scipy/_special_more.py; incomplete gamma and
# beta: _special_gammainc.py (they build their primitives with the helpers above, so they are
# imported last).
from . import _special_extra, _special_gammainc, _special_more  # noqa: E402, I001
from ._special_extra import (  # noqa: E402, F401
    boxcox, boxcox1p, comb, dawsn, fresnel, loggamma, owens_t, sici, sph_harm_y, wofz,
)
from ._special_gammainc import (  # noqa: E402, F401
    betainc, betaincinv, gammainc, gammainccinv, gammaincc, gammaincinv,
)
from ._special_more import (  # noqa: E402, F401
    STATIC, binom, entr, exp1, expi, expn, factorial, gammasgn, hyp1f1, hyp2f1,
    iv, ive, j0, j1, jn, jv, k0, k0e, k1, k1e, kl_div, kn, kv, kve, log_expit, multigammaln,
    poch, rel_entr, rgamma, spence, y0, y1, yn, yv, zeta,
)

__all__ = sorted(__all__ + _special_more.__all__ + _special_gammainc.__all__
                 + _special_extra.__all__)
for _f in (j0, j1, y0, y1, k0, k0e, k1, k1e, exp1, expi, spence, log_expit, entr, rgamma,
           rel_entr, kl_div, poch, gammainc, gammaincc, betainc, gammasgn, gammaincinv,
           gammainccinv, betaincinv, binom, dawsn, wofz, loggamma, boxcox, boxcox1p, owens_t):
    register_numpy_function(getattr(sc, _f.__name__), _f)
for _f in (jv, yv, yn, iv, ive, kv, kve, kn, expn, zeta, hyp1f1, hyp2f1):  # sc.jn is sc.jv
    register_numpy_function(getattr(sc, _f.__name__), _f)
del _f
