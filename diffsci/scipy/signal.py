"""``scipy.signal``, differentiable: convolutions and the linear filter ``lfilter``.

On plain arrays every function is SciPy's own.  On traced values:

=====================  ==================================================================
function               differentiable in
=====================  ==================================================================
convolve, correlate    both inputs (any dimension, modes 'full'/'same'/'valid',
                       methods 'auto'/'direct'/'fft')
fftconvolve            both inputs (``axes=None``)
convolve2d,            both inputs (``boundary='fill'``, ``fillvalue=0``)
correlate2d
lfilter                the numerator ``b``, the denominator ``a`` and the signal ``x``
                       (``zi=None``)
=====================  ==================================================================

The convolutions are one primitive, the full N-d convolution, whose adjoint is the full
convolution of the cotangent with the other operand conjugated and reversed, cropped
(DERIVATIONS.md §Convolution, eqs. CV1–CV2); 'same' and 'valid' crop its output.  ``lfilter``
is a primitive whose adjoints are filters themselves (DERIVATIONS.md §Linear filter, eqs.
LF1–LF4): the signal's is the filter run backwards in time with conjugated coefficients,
the coefficients' are correlations of that backward run with the input and the output.
Every rule is written with differentiable calls, so derivatives of any order exist.

Example:
    >>> import numpy as np, diffsci as ds
    >>> from diffsci.scipy import signal
    >>> x = np.array([1.0, 0.0, 0.0, 0.0])
    >>> float(ds.grad(lambda a1: signal.lfilter([1.0], [1.0, a1], x)[2])(-0.5))  # d(a1²)/da1
    -1.0

References:
    A. V. Oppenheim, R. W. Schafer, *Discrete-Time Signal Processing*, 3rd ed., Pearson
    2010, §6.1 (the direct-form difference equation that ``lfilter`` evaluates).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import signal as _signal

from .._core import defjvp, defvjp, getval, is_tracer, primitive
from ..numpy import _wrap as W
from ..numpy._composite import _numpy_on_plain
from ..numpy._more import _arr, _centered, _conv_p, conv_valid

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "fftconvolve", "lfilter"]

_METHODS = ("auto", "direct", "fft")
_MODES = ("full", "same", "valid")


def _shape(x):
    return np.shape(getval(x))


def _mode_and_shapes(in1, in2, mode, name):
    """The shapes of ``in1`` and ``in2``, after checking ``mode`` and their equal ranks."""
    if mode not in _MODES:
        raise ValueError(f"diffsci.scipy.signal.{name}: mode must be one of {_MODES}, got "
                         f"{mode!r}")
    s1, s2 = _shape(in1), _shape(in2)
    if len(s1) != len(s2):
        raise ValueError(f"diffsci.scipy.signal.{name}: in1 and in2 should have the same "
                         f"dimensionality, got shapes {s1} and {s2}")
    return s1, s2


def _check(in1, in2, mode, method, name):
    if method not in _METHODS:
        raise ValueError(f"diffsci.scipy.signal.{name}: method must be one of {_METHODS}, got "
                         f"{method!r}")
    s1, s2 = _mode_and_shapes(in1, in2, mode, name)
    if mode == "valid" and not (all(a >= b for a, b in zip(s1, s2))
                                or all(b >= a for a, b in zip(s1, s2))):
        raise ValueError(f"diffsci.scipy.signal.{name}: for 'valid' mode, one must be at "
                         f"least as large as the other in every dimension, got shapes {s1} "
                         f"and {s2}")


def _crop(full, s1, s2, mode):
    if mode == "full":
        return full
    if mode == "same":
        return _centered(full, s1)
    return _centered(full, tuple(abs(a - b) + 1 for a, b in zip(s1, s2)))


@_numpy_on_plain(_signal.convolve)
def convolve(in1, in2, mode="full", method="auto"):
    """``scipy.signal.convolve``, differentiable in both inputs (DERIVATIONS.md eq. CV1).

    Args:
        in1, in2: arrays of the same dimension.
        mode: 'full', 'same' (the centre, of ``in1``'s shape) or 'valid'.
        method: 'auto', 'direct' or 'fft', as in SciPy (the adjoints use the same one).

    Returns:
        The convolution, as ``scipy.signal.convolve`` returns it.

    Raises:
        ValueError: unknown mode/method, inputs of different dimension, or 'valid' inputs
            where neither is at least as large as the other in every dimension.
    """
    in1, in2 = _arr(in1), _arr(in2)
    _check(in1, in2, mode, method, "convolve")
    if len(_shape(in1)) == 0:
        return W.multiply(in1, in2)
    if mode == "valid":
        return conv_valid(in1, in2, method)
    return _crop(_conv_p(in1, in2, how=method), _shape(in1), _shape(in2), mode)


@_numpy_on_plain(_signal.correlate)
def correlate(in1, in2, mode="full", method="auto"):
    """``scipy.signal.correlate``: the convolution of ``in1`` with ``in2`` reversed along
    every axis and conjugated; differentiable in both inputs."""
    in1, in2 = _arr(in1), _arr(in2)
    _check(in1, in2, mode, method, "correlate")
    if len(_shape(in1)) == 0:
        return W.multiply(in1, W.conjugate(in2))
    return convolve(in1, W.conjugate(W.flip(in2)), mode, method)


def _conv_axes(axes, ndim, name):
    """``axes`` as a sorted tuple of distinct non-negative axes (None: all)."""
    if axes is None:
        return tuple(range(ndim))
    seq = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    out = []
    for a in seq:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool) or not -ndim <= a < ndim:
            raise ValueError(f"diffsci.scipy.signal.{name}: axes must be ints in "
                             f"[-{ndim}, {ndim}), got {axes!r}")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"diffsci.scipy.signal.{name}: axes must be distinct, got {axes!r}")
    return tuple(sorted(out))


def fft_convolve_core(x, y, full, caxes):
    """The full linear convolution of ``x`` and ``y`` along ``caxes`` (``full`` its sizes),
    by FFTs of those sizes; the other axes broadcast.  Real inputs give a real result."""
    from .. import fft as _fft
    real = not (np.iscomplexobj(getval(x)) or np.iscomplexobj(getval(y)))
    if real:
        return _fft.irfftn(W.multiply(_fft.rfftn(x, full, caxes), _fft.rfftn(y, full, caxes)),
                           full, caxes)
    return _fft.ifftn(W.multiply(_fft.fftn(x, full, caxes), _fft.fftn(y, full, caxes)),
                      full, caxes)


def crop_axes(full, caxes, keep):
    """The centred ``keep[i]`` entries of ``full`` along ``caxes[i]`` (SciPy's crops)."""
    idx = [slice(None)] * len(_shape(full))
    for ax, k in zip(caxes, keep):
        f = _shape(full)[ax]
        idx[ax] = slice((f - k) // 2, (f - k) // 2 + k)
    return W.getitem(full, tuple(idx))


@_numpy_on_plain(_signal.fftconvolve)
def fftconvolve(in1, in2, mode="full", axes=None):
    """``scipy.signal.fftconvolve``: convolution by FFTs along ``axes``, differentiable in both
    inputs.

    Along ``axes`` (default all) the inputs are convolved; along the other axes their
    lengths must be equal or 1, and they broadcast (SciPy's rule).  The adjoint of each
    input is again an FFT convolution (DERIVATIONS.md eq. CV1), here by differentiating
    the transforms of :mod:`diffsci.fft`.

    Args:
        in1, in2: arrays of the same dimension.
        mode: 'full', 'same' (centred, ``in1``'s shape: as in SciPy, a broadcast axis is
            cropped to ``in1``'s length too) or 'valid' (along ``axes``, one input at least
            as long as the other on every axis).
        axes: the axes to convolve over (an int or a sequence; None: all).

    Returns:
        The convolution, as ``scipy.signal.fftconvolve`` returns it.

    Raises:
        ValueError: a bad mode or axis, inputs of different dimension, lengths that do not
            broadcast outside ``axes``, or 'valid' inputs of mixed sizes.

    Example:
        >>> import numpy as np, diffsci as ds
        >>> from diffsci.scipy import signal
        >>> x, k = np.arange(6.0).reshape(2, 3), np.array([[1.0, -1.0]])
        >>> signal.fftconvolve(x, k, axes=1).round(12)     # each row with k
        array([[ 0.,  1.,  1., -2.],
               [ 3.,  1.,  1., -5.]])
        >>> ds.grad(lambda x: signal.fftconvolve(x, k, axes=1)[0, 1] ** 2)(x).round(12)
        array([[-2.,  2.,  0.],
               [ 0.,  0.,  0.]])
    """
    in1, in2 = _arr(in1), _arr(in2)
    if axes is None:
        return convolve(in1, in2, mode, "fft")
    s1, s2 = _mode_and_shapes(in1, in2, mode, "fftconvolve")
    caxes = _conv_axes(axes, len(s1), "fftconvolve")
    for ax in set(range(len(s1))) - set(caxes):
        if s1[ax] != s2[ax] and 1 not in (s1[ax], s2[ax]):
            raise ValueError(f"diffsci.scipy.signal.fftconvolve: in1 and in2 must have equal "
                             f"lengths or a length 1 outside axes; axis {ax} has {s1[ax]} and "
                             f"{s2[ax]} (shapes {s1}, {s2})")
    n1, n2 = [s1[a] for a in caxes], [s2[a] for a in caxes]
    if mode == "valid" and not (all(a >= b for a, b in zip(n1, n2))
                                or all(b >= a for a, b in zip(n1, n2))):
        raise ValueError(f"diffsci.scipy.signal.fftconvolve: for 'valid' mode, one must be at "
                         f"least as large as the other in every convolved dimension, got "
                         f"shapes {s1} and {s2} over axes {caxes}")
    if 0 in n1 or 0 in n2:  # SciPy's empty result: nothing depends on the inputs
        return _signal.fftconvolve(getval(in1), getval(in2), mode, caxes)
    full = fft_convolve_core(in1, in2, [a + b - 1 for a, b in zip(n1, n2)], caxes)
    if mode == "full":
        return full
    if mode == "same":  # SciPy crops every axis to in1's length, the broadcast ones too
        return crop_axes(full, range(len(s1)), s1)
    return crop_axes(full, caxes, [abs(a - b) + 1 for a, b in zip(n1, n2)])


def _check2d(in1, in2, boundary, fillvalue, name):
    if boundary not in ("fill",) or fillvalue != 0:
        raise NotImplementedError(f"diffsci.scipy.signal.{name}: only boundary='fill' with "
                                  f"fillvalue=0 on traced values, got boundary={boundary!r}, "
                                  f"fillvalue={fillvalue!r}")
    if len(_shape(in1)) != 2 or len(_shape(in2)) != 2:
        raise ValueError(f"diffsci.scipy.signal.{name}: in1 and in2 should both be 2-D "
                         f"arrays, got shapes {_shape(in1)} and {_shape(in2)}")


@_numpy_on_plain(_signal.convolve2d)
def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    in1, in2 = _arr(in1), _arr(in2)
    _check2d(in1, in2, boundary, fillvalue, "convolve2d")
    return convolve(in1, in2, mode, "direct")


@_numpy_on_plain(_signal.correlate2d)
def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    in1, in2 = _arr(in1), _arr(in2)
    _check2d(in1, in2, boundary, fillvalue, "correlate2d")
    if mode != "same":
        return correlate(in1, in2, mode, "direct")
    # correlate2d centres 'same' at m // 2 (correlate at (m - 1) // 2): crop the full one.
    full = correlate(in1, in2, "full", "direct")
    return W.getitem(full, tuple(slice(m // 2, m // 2 + n)
                                 for n, m in zip(_shape(in1), _shape(in2))))


# ---------------------------------------------------------------- lfilter
def _lfilter(b, a, x, *, axis=-1):
    return _signal.lfilter(b, a, x, axis=axis)


_lfilter_p = primitive(_lfilter, name="lfilter")


def _real_if(g, like):
    return np.real(g) if np.iscomplexobj(g) and not np.iscomplexobj(like) else g


def _backward(g, a, axis):
    """r = (1/A)ᴴ g: the all-pole filter 1/conj(A) run backwards in time (eq. F2)."""
    one = np.ones(1, np.result_type(getval(a)))
    return np.flip(_lfilter_p(one, np.conj(a), np.flip(g, axis), axis=axis), axis)


def _lags(r, s, ncoef, axis):
    """c_k = Σ_n r[n + k] conj(s[n]) over every axis, for k = 0 .. ncoef - 1 (eqs. F3-F4)."""
    r, s = np.moveaxis(r, axis, -1), np.moveaxis(s, axis, -1)
    n = np.shape(r)[-1]
    out = [np.sum(r[..., k:] * np.conj(s[..., :n - k])) if k < n else
           np.zeros((), np.result_type(getval(r), getval(s))) for k in range(ncoef)]
    return np.stack(out)


def _lfilter_vjp_b(g, ans, b, a, x, axis=-1):
    return _real_if(_lags(_backward(g, a, axis), x, np.shape(b)[0], axis), b)


def _lfilter_vjp_a(g, ans, b, a, x, axis=-1):
    return _real_if(-_lags(_backward(g, a, axis), ans, np.shape(a)[0], axis), a)


def _lfilter_vjp_x(g, ans, b, a, x, axis=-1):
    # eq. F1: the filter with conjugated coefficients, backwards in time.
    out = np.flip(_lfilter_p(np.conj(b), np.conj(a), np.flip(g, axis), axis=axis), axis)
    return _real_if(out, x)


defvjp(_lfilter_p, _lfilter_vjp_b, _lfilter_vjp_a, _lfilter_vjp_x)
# A y = B x  =>  ẏ = (Ḃ x - Ȧ y + B ẋ) / A  (eq. LF0): each term is a filter.
defjvp(_lfilter_p,
       lambda t, ans, b, a, x, axis=-1: _lfilter_p(t, a, x, axis=axis),
       lambda t, ans, b, a, x, axis=-1: -_lfilter_p(t, a, ans, axis=axis),
       lambda t, ans, b, a, x, axis=-1: _lfilter_p(b, a, t, axis=axis))


@_numpy_on_plain(_signal.lfilter)
def lfilter(b, a, x, axis=-1, zi=None):
    """``scipy.signal.lfilter``: y with a[0] y[n] = Σ_k b[k] x[n-k] - Σ_{k≥1} a[k] y[n-k],
    differentiable in ``b``, ``a`` and ``x`` (DERIVATIONS.md §Linear filter, eqs. LF0–LF4).

    Args:
        b, a: 1-d numerator and denominator coefficients (``a[0] != 0``).
        x: the signal, filtered along ``axis``.
        axis: the time axis of ``x``.
        zi: initial conditions; only ``None`` on traced values.

    Returns:
        The filtered signal, of ``x``'s shape.

    Raises:
        ValueError: ``b`` or ``a`` not 1-d, or ``a[0] == 0``.
        NotImplementedError: ``zi`` given with traced values.
    """
    if zi is not None:
        raise NotImplementedError("diffsci.scipy.signal.lfilter: zi= is not supported on "
                                  "traced values")
    b, a, x = _arr(b), _arr(a), _arr(x)
    if len(_shape(b)) != 1 or len(_shape(a)) != 1:
        raise ValueError(f"diffsci.scipy.signal.lfilter: b and a must be 1-d coefficient "
                         f"vectors, got shapes {_shape(b)} and {_shape(a)}")
    if getval(a)[0] == 0:
        raise ValueError("diffsci.scipy.signal.lfilter: a[0] must be nonzero")
    return _lfilter_p(b, a, x, axis=axis)


def _detrend_matrix(n, kind, bp):
    """The plain n x n projection ``I - A A^+`` that removes the per-segment fit."""
    if kind in ("constant", "c"):
        return np.eye(n) - np.full((n, n), 1.0 / n)
    edges = np.sort(np.unique(np.r_[0, bp, n]))
    if np.any(edges > n):
        raise ValueError("diffsci.scipy.signal.detrend: breakpoints must be less than the "
                         "length of data along axis")
    m = np.eye(n)
    for lo, hi in zip(edges[:-1], edges[1:]):
        k = hi - lo
        a = np.stack([np.arange(1, k + 1) / k, np.ones(k)], axis=1)
        m[lo:hi, lo:hi] -= a @ np.linalg.pinv(a)
    return m


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=False):  # noqa: A002  SciPy's
    """``scipy.signal.detrend``: ``data`` minus its least-squares line (``type="linear"``,
    piecewise between the breakpoints ``bp``) or its mean (``"constant"``) along ``axis``.

    A linear map of ``data`` (a plain projection matrix applied along ``axis``), so it is
    differentiable in ``data`` to every order.

    Raises:
        ValueError: ``type`` is not ``"linear"``/``"l"``/``"constant"``/``"c"``, or a
            breakpoint lies beyond the data.

    Example:
        >>> np.round(detrend(np.array([1.0, 2.0, 4.0])), 12).tolist()
        [0.166666666667, -0.333333333333, 0.166666666667]
    """
    if type not in ("linear", "l", "constant", "c"):
        raise ValueError(f"diffsci.scipy.signal.detrend: type must be 'linear' or 'constant', "
                         f"got {type!r}")
    if not is_tracer(data):
        return _signal.detrend(data, axis=axis, type=type, bp=bp, overwrite_data=overwrite_data)
    n = np.shape(getval(data))[axis]
    m = _detrend_matrix(n, type, bp).astype(np.finfo(np.result_type(getval(data), 1.0)).dtype)
    moved = W.moveaxis(data, axis, -1)
    return W.moveaxis(W.matmul(moved, m.T), -1, axis)


__all__ += ["detrend"]


# ---------------------------------------------------------------- spectral estimates
_detrend_along = detrend  # csd's and welch's argument named detrend shadows it


def _window(window, nperseg, n, fname):
    if isinstance(window, (str, tuple)):
        nperseg = min(256 if nperseg is None else int(nperseg), n)
        return _signal.get_window(window, nperseg), nperseg
    win = np.asarray(window, dtype=float)
    if win.ndim != 1:
        raise ValueError(f"diffsci.scipy.signal.{fname}: window must be 1-D")
    if nperseg is not None and int(nperseg) != win.shape[0]:
        raise ValueError(f"diffsci.scipy.signal.{fname}: value specified for nperseg is "
                         f"different from length of window")
    return win, win.shape[0]


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1, average="mean"):
    """``scipy.signal.csd``: Welch's estimate of the cross power spectral density ``P_xy``,
    differentiable in ``x`` and ``y`` (a composite of segment gathers, ``detrend``, the FFT
    and a mean; Welch 1967, IEEE Trans. Audio Electroacoust. 15, 70).

    Returns:
        ``(f, Pxy)``: the plain frequencies and the estimate, as SciPy's.

    Raises:
        NotImplementedError: ``average="median"`` or a callable ``detrend`` with traced input.

    Example:
        >>> f, p = csd(np.arange(8.0), np.arange(8.0), nperseg=4)
        >>> f.tolist()
        [0.0, 0.25, 0.5]
    """
    if not (is_tracer(x) or is_tracer(y)):
        return _signal.csd(x, y, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                           nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                           scaling=scaling, axis=axis, average=average)
    return _csd(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling,
                axis, average, "csd")


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
          return_onesided=True, scaling="density", axis=-1, average="mean"):
    """``scipy.signal.welch``: Welch's power spectral density estimate, the real part of
    ``csd(x, x)``; differentiable in ``x``.

    Example:
        >>> f, p = welch(np.array([1.0, -1.0, 1.0, -1.0]), nperseg=4, detrend=False)
        >>> np.round(p, 12).tolist()
        [0.0, 1.333333333333, 2.666666666667]
    """
    if not is_tracer(x):
        return _signal.welch(x, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                             nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                             scaling=scaling, axis=axis, average=average)
    f, p = _csd(x, x, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling,
                axis, average, "welch")
    return f, W.real(p)


def _csd(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
         average, fname):
    from .. import numpy as dnp
    if average != "mean":
        raise NotImplementedError(f"diffsci.scipy.signal.{fname}: average={average!r} is "
                                  f"supported for plain input only")
    if callable(detrend):
        raise NotImplementedError(f"diffsci.scipy.signal.{fname}: a callable detrend is "
                                  f"supported for plain input only")
    x, y = W.moveaxis(_arr(x), axis, -1), W.moveaxis(_arr(y), axis, -1)
    n = _shape(x)[-1]
    if _shape(y)[-1] != n:
        raise ValueError(f"diffsci.scipy.signal.{fname}: x and y must have the same length "
                         f"along axis, got {n} and {_shape(y)[-1]}")
    win, nperseg = _window(window, nperseg, n, fname)
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise ValueError(f"diffsci.scipy.signal.{fname}: nfft must be greater than or equal "
                         f"to nperseg")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError(f"diffsci.scipy.signal.{fname}: noverlap must be less than nperseg")
    if scaling == "density":
        scale = 1.0 / (fs * np.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / np.sum(win) ** 2
    else:
        raise ValueError(f"diffsci.scipy.signal.{fname}: unknown scaling {scaling!r}")
    cplx = np.iscomplexobj(getval(x)) or np.iscomplexobj(getval(y))
    onesided = return_onesided and not cplx
    def spectrum(v):
        return _segment_fft(v, win, nperseg, noverlap, nfft, detrend, onesided)

    X = spectrum(x)
    Y = X if y is x else spectrum(y)
    p = dnp.conj(X) * Y * scale
    if onesided:
        double = np.ones(_shape(p)[-1])
        double[1:] = 2.0
        if nfft % 2 == 0:
            double[-1] = 1.0
        p = p * double
    p = dnp.mean(p, axis=-2)
    f = np.fft.rfftfreq(nfft, 1 / fs) if onesided else np.fft.fftfreq(nfft, 1 / fs)
    return f, W.moveaxis(p, -1, axis)


def _segment_fft(v, win, nperseg, noverlap, nfft, detrend, onesided):
    """The windowed FFTs of ``v``'s segments along its last axis: (..., nseg, nfreq)."""
    from .. import fft as F
    step = nperseg - noverlap
    nseg = (_shape(v)[-1] - noverlap) // step
    idx = np.arange(nseg)[:, None] * step + np.arange(nperseg)[None, :]
    seg = v[..., idx]
    if detrend:
        seg = _detrend_along(seg, axis=-1, type=detrend)
    seg = seg * win
    return F.rfft(seg, n=nfft) if onesided else F.fft(seg, n=nfft)


def _extend(x, n, boundary, fname):
    """SciPy's boundary extensions of the last axis by ``n`` on each side."""
    from .. import numpy as dnp
    if boundary == "zeros":
        z = np.zeros(_shape(x)[:-1] + (n,), np.result_type(getval(x)))
        return dnp.concatenate([z, x, z], axis=-1)
    if boundary == "constant":
        first = dnp.repeat(x[..., :1], n, axis=-1)
        last = dnp.repeat(x[..., -1:], n, axis=-1)
        return dnp.concatenate([first, x, last], axis=-1)
    left, right = x[..., n:0:-1], x[..., -2:-n - 2:-1]
    if boundary == "even":
        return dnp.concatenate([left, x, right], axis=-1)
    if boundary == "odd":
        return dnp.concatenate([2 * x[..., :1] - left, x, 2 * x[..., -1:] - right], axis=-1)
    raise ValueError(f"diffsci.scipy.signal.{fname}: unknown boundary option {boundary!r}, "
                     f"must be one of ['even', 'odd', 'constant', 'zeros', None]")


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1, scaling="spectrum"):
    """``scipy.signal.stft``: the short-time Fourier transform, linear in ``x`` and
    differentiable in it (segment gathers of the extended, padded signal, window, FFT).

    Returns:
        ``(f, t, Zxx)`` as SciPy's: plain frequencies and segment times, ``Zxx`` of shape
        ``(..., len(f), len(t))``.

    Example:
        >>> f, t, z = stft(np.ones(8), nperseg=4)
        >>> z.shape
        (3, 5)
    """
    if not is_tracer(x):
        return _signal.stft(x, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                            nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                            boundary=boundary, padded=padded, axis=axis, scaling=scaling)
    if scaling not in ("spectrum", "psd"):
        raise ValueError(f"diffsci.scipy.signal.stft: scaling must be 'spectrum' or 'psd', got "
                         f"{scaling!r}")
    if callable(detrend):
        raise NotImplementedError("diffsci.scipy.signal.stft: a callable detrend is supported "
                                  "for plain input only")
    x = W.moveaxis(_arr(x), axis, -1)
    win, nperseg = _window(window, nperseg, _shape(x)[-1], "stft")
    nfft = nperseg if nfft is None else int(nfft)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if nfft < nperseg or noverlap >= nperseg:
        raise ValueError("diffsci.scipy.signal.stft: need nfft >= nperseg > noverlap")
    if boundary is not None:
        x = _extend(x, nperseg // 2, boundary, "stft")
    step = nperseg - noverlap
    if padded:
        nadd = (-(_shape(x)[-1] - nperseg) % step) % nperseg
        if nadd:
            from .. import numpy as dnp
            x = dnp.concatenate([x, np.zeros(_shape(x)[:-1] + (nadd,))], axis=-1)
    scale = math.sqrt(1.0 / (fs * np.sum(win * win)) if scaling == "psd"
                      else 1.0 / np.sum(win) ** 2)
    onesided = return_onesided and not np.iscomplexobj(getval(x))
    z = _segment_fft(x, win, nperseg, noverlap, nfft, detrend, onesided) * scale
    f = np.fft.rfftfreq(nfft, 1 / fs) if onesided else np.fft.fftfreq(nfft, 1 / fs)
    t = np.arange(nperseg / 2, _shape(x)[-1] - nperseg / 2 + 1, step) / float(fs)
    if boundary is not None:
        t = t - (nperseg / 2) / fs
    z = W.moveaxis(z, -1, -2)  # (..., nfreq, nseg)
    ax = axis - 1 if axis < 0 else axis
    return f, t, W.moveaxis(z, -2, ax) if ax != -2 else z


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2, scaling="spectrum"):
    """``scipy.signal.istft``: the inverse STFT by weighted overlap-add (Griffin & Lim 1984,
    IEEE Trans. ASSP 32, 236), linear in ``Zxx`` and differentiable in it: the inverse FFTs of
    the segments, windowed, summed by a plain 0/1 overlap-add matrix and divided by the plain
    window normalisation.

    Returns:
        ``(t, x)`` as SciPy's.

    Example:
        >>> f, t, z = stft(np.arange(8.0), nperseg=4)
        >>> np.round(istft(z, nperseg=4)[1], 12).tolist()
        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    """
    from .. import fft as F
    from .. import numpy as dnp
    if not is_tracer(Zxx):
        return _signal.istft(Zxx, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                             nfft=nfft, input_onesided=input_onesided, boundary=boundary,
                             time_axis=time_axis, freq_axis=freq_axis, scaling=scaling)
    z = _arr(Zxx)
    nd = len(_shape(z))
    if nd < 2 or freq_axis % nd == time_axis % nd:
        raise ValueError("diffsci.scipy.signal.istft: Zxx must be at least 2-d with distinct "
                         "time and frequency axes")
    fa, ta = freq_axis % nd, time_axis % nd
    outer = [a for a in range(nd) if a not in (fa, ta)]
    z = W.transpose(z, outer + [fa, ta])
    nseg, nfreq = _shape(z)[-1], _shape(z)[-2]
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = n_default if nperseg is None else int(nperseg)
    if nfft is None:
        nfft = nperseg if input_onesided and nperseg == n_default + 1 else n_default
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if nfft < nperseg or noverlap >= nperseg or nperseg < 1:
        raise ValueError("diffsci.scipy.signal.istft: need nfft >= nperseg > noverlap")
    win, _ = _window(window, nperseg, nperseg, "istft")
    if scaling == "spectrum":
        gain = np.sum(win)
    elif scaling == "psd":
        gain = np.sqrt(fs * np.sum(win ** 2))
    else:
        raise ValueError(f"diffsci.scipy.signal.istft: scaling must be 'spectrum' or 'psd', "
                         f"got {scaling!r}")
    subs = (F.irfft(z, n=nfft, axis=-2) if input_onesided else F.ifft(z, n=nfft, axis=-2))
    subs = subs[..., :nperseg, :] * (gain * win[:, None])  # (..., nperseg, nseg), windowed
    step = nperseg - noverlap
    length = nperseg + (nseg - 1) * step
    ola = np.zeros((nseg, nperseg, length))  # the overlap-add: segment ii at ii * step
    for ii in range(nseg):
        ola[ii, np.arange(nperseg), ii * step + np.arange(nperseg)] = 1.0
    flat = dnp.reshape(W.moveaxis(subs, -1, -2), _shape(subs)[:-2] + (nseg * nperseg,))
    x = dnp.matmul(flat, ola.reshape(nseg * nperseg, length))
    norm = np.zeros(length)
    for ii in range(nseg):
        norm[ii * step:ii * step + nperseg] += win ** 2
    if boundary:
        x, norm = x[..., nperseg // 2:-(nperseg // 2)], norm[nperseg // 2:-(nperseg // 2)]
    if np.sum(norm > 1e-10) != len(norm):
        warnings.warn("diffsci.scipy.signal.istft: NOLA condition failed, STFT may not be "
                      "invertible" + ("" if boundary else " (possibly the missing boundary)"),
                      stacklevel=2)
    x = x / np.where(norm > 1e-10, norm, 1.0)
    if input_onesided:
        x = dnp.real(x)
    if len(_shape(x)) > 1 and ta != nd - 1:
        x = W.moveaxis(x, -1, ta - 1 if fa < ta else ta)
    return np.arange(_shape(x)[0]) / float(fs), x


__all__ += ["csd", "istft", "stft", "welch"]
