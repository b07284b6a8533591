"""``diffsci.fft``: numpy.fft, differentiable (every transform, every ``norm``).

Three primitives carry all transforms: the complex transform ``_c2c`` (any
axes, forward or inverse), the real-to-complex ``_r2c`` (``rfft``) and the
complex-to-real ``_c2r`` (``irfft``) along one axis.  ``fft2``, ``fftn``,
``rfftn``, ``irfftn``, ``hfft``, ``ihfft`` ... compose them exactly as NumPy
does.  Each is a linear map, so its JVP is the map itself and its VJP is its
adjoint, which is again a transform:

* complex transforms: the inverse transform with the *dual* normalisation
  (``backward`` <-> ``forward``, ``ortho`` itself): the adjoint of
  ``fft(norm="backward")`` is ``n * ifft``;
* ``rfft`` and ``irfft``: the other one with the dual normalisation and a
  Hermitian weighting of the bins that stand for two frequencies (1/2 for
  ``rfft``'s adjoint, 2 for ``irfft``'s);
* the zero-padding or cropping done by ``n=``/``s=``: crop or pad back.

A real input's cotangent is the real part.  The rules call the primitives, so
every order works.  On plain arrays every function is NumPy's own.  Derivations:
``diffsci/DERIVATIONS.md``, section "diffsci.fft" (F1)-(F4).
"""

from __future__ import annotations

import operator

import numpy as np

from ._core import defjvp, defvjp, getval, is_tracer, primitive

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn", "ifftshift",
    "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
]

# The normalisation of a transform's adjoint: "backward" scales the inverse by 1/n, so the
# adjoint of an unscaled transform is the inverse transform *without* that factor.
_DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


# ---------------------------------------------------------------- the primitives
def _c2c_plain(x, s, axes, norm, inverse):
    return (np.fft.ifftn if inverse else np.fft.fftn)(x, s=s, axes=axes, norm=norm)


def _r2c_plain(x, n, axis, norm):
    return np.fft.rfft(x, n=n, axis=axis, norm=norm)


def _c2r_plain(x, n, axis, norm):
    return np.fft.irfft(x, n=n, axis=axis, norm=norm)


_c2c = primitive(_c2c_plain, name="fftn")
_r2c = primitive(_r2c_plain, name="rfft")
_c2r = primitive(_c2r_plain, name="irfft")


def _resize(y, shape, axes):
    """``y`` cropped or zero-padded along ``axes`` to ``shape``: the adjoint of the
    crop-or-pad a transform applies to its input (cropping and padding are mutual adjoints)."""
    ys = np.shape(getval(y))
    pad = [(0, 0)] * len(ys)
    crop = [slice(None)] * len(ys)
    for a in axes:
        if ys[a] > shape[a]:
            crop[a] = slice(0, shape[a])
        elif ys[a] < shape[a]:
            pad[a] = (0, shape[a] - ys[a])
    if any(c != slice(None) for c in crop):
        y = y[tuple(crop)]
    if any(p != (0, 0) for p in pad):
        y = np.pad(y, pad)
    return y


def _real_if_real(c, x):
    return np.real(c) if not np.iscomplexobj(getval(x)) else c


def _bins(g, n, axis, doubled):
    """Weights along ``axis`` for the n//2 + 1 bins of a real transform of length n:
    ``doubled`` on the bins that stand for a frequency and its mirror image, 1 on the
    zero frequency and (n even) the Nyquist frequency."""
    m = n // 2 + 1
    w = np.full(m, doubled)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    shape = [1] * np.ndim(getval(g))
    shape[axis] = m
    return w.reshape(shape).astype(np.finfo(np.result_type(getval(g))).dtype)


def _c2c_vjp(g, ans, x, s, axes, norm, inverse):
    back = _c2c(g, s, axes, _DUAL[norm], not inverse)  # (F1)
    return _real_if_real(_resize(back, np.shape(getval(x)), axes), x)


def _r2c_vjp(g, ans, x, n, axis, norm):
    back = _c2r(g * _bins(g, n, axis, 0.5), n, axis, _DUAL[norm])  # (F2)
    return _resize(back, np.shape(getval(x)), (axis,))


def _c2r_vjp(g, ans, x, n, axis, norm):
    back = _r2c(g, n, axis, _DUAL[norm])
    back = back * _bins(back, n, axis, 2.0)  # (F3)
    return _real_if_real(_resize(back, np.shape(getval(x)), (axis,)), x)


defvjp(_c2c, _c2c_vjp)
defvjp(_r2c, _r2c_vjp)
defvjp(_c2r, _c2r_vjp)
# Linear maps: the JVP applies the map to the tangent.
defjvp(_c2c, lambda t, ans, x, s, axes, norm, inverse: _c2c(t, s, axes, norm, inverse))
defjvp(_r2c, lambda t, ans, x, n, axis, norm: _r2c(t, n, axis, norm))
defjvp(_c2r, lambda t, ans, x, n, axis, norm: _c2r(t, n, axis, norm))


# ---------------------------------------------------------------- argument checks
def _norm(norm, fname):
    if norm is None:
        return "backward"
    if norm not in _DUAL:
        raise ValueError(f"diffsci.fft.{fname}: norm must be None, 'backward', 'ortho' or "
                         f"'forward', got {norm!r}")
    return norm


def _no_out(out, fname):
    if out is not None:
        raise TypeError(f"diffsci.fft.{fname}: out= is not supported for traced input; use the "
                        f"returned array")


def _axis(axis, ndim, fname, what="axis"):
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"diffsci.fft.{fname}: {what} must be an int, got {axis!r}") from None
    if not -ndim <= a < ndim:
        raise ValueError(f"diffsci.fft.{fname}: {what} {a} is out of range for an input with "
                         f"{ndim} dimension(s)")
    return a % ndim


def _length(n, default, fname, what="n"):
    if n is None or n == -1:
        return default
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"diffsci.fft.{fname}: {what} must be a positive int, got {n!r}") \
            from None
    if n < 1:
        raise ValueError(f"diffsci.fft.{fname}: {what} must be a positive int, got {n}")
    return n


def _plan(a, s, axes, fname):
    """NumPy's rules for ``s`` and ``axes``: (sizes, axes) as tuples of ints."""
    shape = np.shape(getval(a))
    if axes is None:
        axes = range(-(len(s) if s is not None else len(shape)), 0)
    axes = tuple(_axis(ax, len(shape), fname, "axes entry") for ax in axes)
    if s is None:
        s = [None] * len(axes)
    if len(s) != len(axes):
        raise ValueError(f"diffsci.fft.{fname}: s and axes must have the same length, got "
                         f"{len(s)} and {len(axes)}")
    sizes = tuple(_length(n, shape[ax], fname, "s entry") for n, ax in zip(s, axes))
    return sizes, axes


# ---------------------------------------------------------------- the public functions
def _named(f, name, doc):
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    f.__module__ = __name__
    return f


_DOC = """``numpy.fft.{name}``: {what}, differentiable.

    {rule}  The JVP is the transform itself; the rules are transforms, so every
    order works.  On plain input this is NumPy's function.

    Args:
        a: {input}.
        {size}: {size_doc}
        {axes}: the transformed {axes_doc}.
        norm: None/'backward', 'ortho' or 'forward'.
        out: NumPy's; not supported for traced input.

    Returns:
        {returns} (single precision stays single).

    Raises:
        ValueError: a bad ``norm``, axis or length (the message names it).
        TypeError: ``out`` given for traced input{extra_raise}.

    Example:
        >>> import diffsci as ds
        >>> {example}
        {output}

    References:
        diffsci/DERIVATIONS.md, "diffsci.fft" {ref}.
    """

_C2C_RULE = ("The VJP is the adjoint: ``{adjoint}`` with the dual normalisation\n"
             "    (``backward`` <-> ``forward``), cropped/zero-padded back where ``{size}``\n"
             "    resized the input, real part for a real input.")


def _complex_nd(np_fun, name, inverse, default_axes, what, adjoint, example, output):
    def transform(a, s=None, axes=default_axes, norm=None, out=None):
        if not is_tracer(a):
            return np_fun(a, s, axes, norm, out)
        _no_out(out, name)
        sizes, axes = _plan(a, s, axes, name)
        return _c2c(a, sizes, axes, _norm(norm, name), inverse)
    return _named(transform, name, _DOC.format(
        name=name, what=what, rule=_C2C_RULE.format(adjoint=adjoint, size="s"),
        input="real or complex array", size="s",
        size_doc="output sizes along ``axes`` (the input is cropped or zero-padded).",
        axes="axes", axes_doc="axes" + (" (default the last two)." if default_axes else
                                         " (default all, or the last ``len(s)``)."),
        returns="The complex transform", extra_raise="", example=example, output=output,
        ref="(F1)"))


def _complex_1d(np_fun, name, inverse, what, adjoint, example, output):
    def transform(a, n=None, axis=-1, norm=None, out=None):
        if not is_tracer(a):
            return np_fun(a, n, axis, norm, out)
        _no_out(out, name)
        ax = _axis(axis, np.ndim(getval(a)), name)
        n = _length(n, np.shape(getval(a))[ax], name)
        return _c2c(a, (n,), (ax,), _norm(norm, name), inverse)
    return _named(transform, name, _DOC.format(
        name=name, what=what, rule=_C2C_RULE.format(adjoint=adjoint, size="n"),
        input="real or complex array", size="n",
        size_doc="output length (the input is cropped or zero-padded).",
        axes="axis", axes_doc="axis (default the last).", returns="The complex transform",
        extra_raise="", example=example, output=output, ref="(F1)"))


fft = _complex_1d(np.fft.fft, "fft", False, "the 1-D discrete Fourier transform",
                  "n * ifft", "ds.grad(lambda x: np.real(fft(x)[0]))(np.ones(2))",
                  "array([1., 1.])")
ifft = _complex_1d(np.fft.ifft, "ifft", True, "the 1-D inverse discrete Fourier transform",
                   "fft / n", "ds.grad(lambda x: np.real(ifft(x)[0]))(np.ones(2))",
                   "array([0.5, 0.5])")
fftn = _complex_nd(np.fft.fftn, "fftn", False, None, "the n-D discrete Fourier transform",
                   "ifftn * prod(s)",
                   "ds.grad(lambda x: np.real(fftn(x)[0, 0]))(np.ones((1, 2)))",
                   "array([[1., 1.]])")
ifftn = _complex_nd(np.fft.ifftn, "ifftn", True, None, "the n-D inverse transform",
                    "fftn / prod(s)",
                    "ds.grad(lambda x: np.real(ifftn(x)[0, 0]))(np.ones((1, 2)))",
                    "array([[0.5, 0.5]])")
fft2 = _complex_nd(np.fft.fft2, "fft2", False, (-2, -1), "the 2-D discrete Fourier transform",
                   "ifft2 * prod(s)",
                   "ds.grad(lambda x: np.real(fft2(x)[0, 0]))(np.ones((1, 2)))",
                   "array([[1., 1.]])")
ifft2 = _complex_nd(np.fft.ifft2, "ifft2", True, (-2, -1), "the 2-D inverse transform",
                    "fft2 / prod(s)",
                    "ds.grad(lambda x: np.real(ifft2(x)[0, 0]))(np.ones((1, 2)))",
                    "array([[0.5, 0.5]])")


# ---------------------------------------------------------------- real transforms
def rfft(a, n=None, axis=-1, norm=None, out=None):
    """``numpy.fft.rfft``: the transform of real input, bins 0..n//2, differentiable.

    The VJP is ``irfft(w * g, n, norm=dual)`` with ``w = 1/2`` on the bins
    1..(n-1)//2, each of which stands for itself and its mirror image, and 1 on
    the zero (and, n even, Nyquist) bin: ``irfft`` counts those bins twice,
    the adjoint only once (derivation (F2)).  The JVP is ``rfft`` itself.

    Args:
        a: real array.
        n: transform length (the input is cropped or zero-padded); default its length.
        axis: the transformed axis (default the last).
        norm: None/'backward', 'ortho' or 'forward'.
        out: NumPy's; not supported for traced input.

    Returns:
        The n//2 + 1 complex bins along ``axis``.

    Raises:
        TypeError: ``a`` is complex, or ``out`` is given for traced input.
        ValueError: a bad ``norm``, ``axis`` or ``n``.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda x: np.real(rfft(x)[1]))(np.ones(4))
        array([ 1.,  0., -1.,  0.])

    References:
        diffsci/DERIVATIONS.md, "diffsci.fft" (F2).
    """
    if not is_tracer(a):
        return np.fft.rfft(a, n, axis, norm, out)
    _no_out(out, "rfft")
    if np.iscomplexobj(getval(a)):
        raise TypeError("diffsci.fft.rfft: a must be real, got a complex array; use fft for "
                        "complex input")
    ax = _axis(axis, np.ndim(getval(a)), "rfft")
    return _r2c(a, _length(n, np.shape(getval(a))[ax], "rfft"), ax, _norm(norm, "rfft"))


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """``numpy.fft.irfft``: the real signal with the given bins 0..n//2, differentiable.

    The output is real-linear in the bins (the imaginary parts of the zero and
    Nyquist bins are ignored, so their gradient is 0).  The VJP is
    ``w * rfft(g, n, norm=dual)`` with ``w = 2`` on the bins 1..(n-1)//2, which
    the inverse counts twice (derivation (F3)); the JVP is ``irfft`` itself.

    Args:
        a: complex (or real) array of bins.
        n: output length; default ``2 * (m - 1)`` for m input bins (the input
            is cropped or zero-padded to n//2 + 1 bins).
        axis: the transformed axis (default the last).
        norm: None/'backward', 'ortho' or 'forward'.
        out: NumPy's; not supported for traced input.

    Returns:
        The real signal of length n along ``axis``.

    Raises:
        TypeError: ``out`` given for traced input.
        ValueError: a bad ``norm``, ``axis`` or ``n``.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda h: irfft(h)[0])(np.ones(3, complex))
        array([0.25+0.j, 0.5 +0.j, 0.25+0.j])

    References:
        diffsci/DERIVATIONS.md, "diffsci.fft" (F3).
    """
    if not is_tracer(a):
        return np.fft.irfft(a, n, axis, norm, out)
    _no_out(out, "irfft")
    ax = _axis(axis, np.ndim(getval(a)), "irfft")
    n = _length(n, 2 * (np.shape(getval(a))[ax] - 1), "irfft")
    return _c2r(a, n, ax, _norm(norm, "irfft"))


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """``numpy.fft.rfftn``: ``rfft`` along the last of ``axes``, then ``fftn`` along the rest.

    Differentiable as the composition of :func:`rfft` and :func:`fftn` (NumPy's
    own order of operations).

    Args:
        a: real array.
        s: transform sizes along ``axes`` (input cropped or zero-padded).
        axes: the transformed axes (default all, or the last ``len(s)``).
        norm: None/'backward', 'ortho' or 'forward' (applies to every axis).
        out: NumPy's; not supported for traced input.

    Returns:
        The complex transform, with ``s[-1]//2 + 1`` bins along ``axes[-1]``.

    Raises:
        TypeError: ``a`` is complex, or ``out`` is given for traced input.
        ValueError: a bad ``norm``, axis or size.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda x: np.real(rfftn(x)[0, 0]))(np.ones((2, 2)))
        array([[1., 1.],
               [1., 1.]])

    References:
        diffsci/DERIVATIONS.md, "diffsci.fft" (F2), (F4).
    """
    if not is_tracer(a):
        return np.fft.rfftn(a, s, axes, norm, out)
    _no_out(out, "rfftn")
    sizes, axes = _plan(a, s, axes, "rfftn")
    y = rfft(a, sizes[-1], axes[-1], norm)
    return _c2c(y, sizes[:-1], axes[:-1], _norm(norm, "rfftn"), False) if len(axes) > 1 else y


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """``numpy.fft.irfftn``: ``ifftn`` along all but the last of ``axes``, then ``irfft``.

    Differentiable as the composition of :func:`ifftn` and :func:`irfft`.

    Args:
        a: complex array of bins.
        s: output sizes along ``axes``; the last defaults to ``2 * (m - 1)``.
        axes: the transformed axes (default all, or the last ``len(s)``).
        norm: None/'backward', 'ortho' or 'forward'.
        out: NumPy's; not supported for traced input.

    Returns:
        The real array.

    Raises:
        TypeError: ``out`` given for traced input.
        ValueError: a bad ``norm``, axis or size.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda h: irfftn(h)[0, 0])(np.ones((1, 2), complex))
        array([[0.5+0.j, 0.5+0.j]])

    References:
        diffsci/DERIVATIONS.md, "diffsci.fft" (F3), (F4).
    """
    if not is_tracer(a):
        return np.fft.irfftn(a, s, axes, norm, out)
    _no_out(out, "irfftn")
    shape = np.shape(getval(a))
    if axes is None:
        axes = range(-(len(s) if s is not None else len(shape)), 0)
    axes = tuple(_axis(ax, len(shape), "irfftn", "axes entry") for ax in axes)
    if s is None:
        s = [None] * len(axes)
    if len(s) != len(axes):
        raise ValueError(f"diffsci.fft.irfftn: s and axes must have the same length, got "
                         f"{len(s)} and {len(axes)}")
    sizes = tuple(_length(k, shape[ax], "irfftn", "s entry") for k, ax in zip(s[:-1], axes))
    nrm = _norm(norm, "irfftn")
    y = _c2c(a, sizes, axes[:-1], nrm, True) if len(axes) > 1 else a
    return irfft(y, s[-1], axes[-1], nrm)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """``numpy.fft.rfft2``: :func:`rfftn` over two axes (default the last two).

    Args:
        a, s, axes, norm, out: as in :func:`rfftn`.

    Returns:
        As :func:`rfftn`.

    Raises:
        As :func:`rfftn`.

    Example:
        >>> rfft2(np.ones((2, 2))).shape
        (2, 2)

    References:
        diffsci/DERIVATIONS.md, "diffsci.fft" (F2), (F4).
    """
    return rfftn(a, s, axes, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """``numpy.fft.irfft2``: :func:`irfftn` over two axes (default the last two).

    Args:
        a, s, axes, norm, out: as in :func:`irfftn`.

    Returns:
        As :func:`irfftn`.

    Raises:
        As :func:`irfftn`.

    Example:
        >>> irfft2(np.ones((2, 2))).shape
        (2, 2)

    References:
        diffsci/DERIVATIONS.md, "diffsci.fft" (F3), (F4).
    """
    return irfftn(a, s, axes, norm, out)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """``numpy.fft.hfft``: the real spectrum of a Hermitian-symmetric signal, differentiable.

    NumPy's definition ``irfft(conj(a), n, norm=dual)``, composed of differentiable
    pieces.

    Args:
        a: complex array (the first half of a Hermitian signal).
        n, axis, norm, out: as in :func:`irfft`.

    Returns:
        The real spectrum of length n.

    Raises:
        As :func:`irfft`.

    Example:
        >>> hfft(np.ones(2, complex))
        array([2., 0.])

    References:
        diffsci/DERIVATIONS.md, "diffsci.fft" (F3).
    """
    if not is_tracer(a):
        return np.fft.hfft(a, n, axis, norm, out)
    _no_out(out, "hfft")
    return irfft(np.conj(a), n, axis, _DUAL[_norm(norm, "hfft")])


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """``numpy.fft.ihfft``: the inverse of :func:`hfft`, ``conj(rfft(a, n, norm=dual))``.

    Args:
        a: real array.
        n, axis, norm, out: as in :func:`rfft`.

    Returns:
        The n//2 + 1 complex values.

    Raises:
        As :func:`rfft`.

    Example:
        >>> ihfft(np.ones(2))
        array([1.-0.j, 0.-0.j])

    References:
        diffsci/DERIVATIONS.md, "diffsci.fft" (F2).
    """
    if not is_tracer(a):
        return np.fft.ihfft(a, n, axis, norm, out)
    _no_out(out, "ihfft")
    return np.conj(rfft(a, n, axis, _DUAL[_norm(norm, "ihfft")]))


# ---------------------------------------------------------------- helpers
def _shift(x, axes, sign, fname):
    if not is_tracer(x):
        return (np.fft.fftshift if sign > 0 else np.fft.ifftshift)(x, axes)
    shape = np.shape(getval(x))
    if axes is None:
        axes = tuple(range(len(shape)))
    elif np.ndim(axes) == 0:
        axes = (axes,)
    axes = tuple(_axis(a, len(shape), fname, "axes entry") for a in axes)
    return np.roll(x, tuple(sign * (shape[a] // 2) for a in axes), axes)


def fftshift(x, axes=None):
    """``numpy.fft.fftshift``: the zero frequency moved to the centre (a ``roll``), differentiable.

    Args:
        x: array.
        axes: the axes to shift (default all).

    Returns:
        The shifted array.

    Raises:
        ValueError: an axis out of range.

    Example:
        >>> fftshift(np.arange(4.0))
        array([2., 3., 0., 1.])
    """
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x, axes=None):
    """``numpy.fft.ifftshift``: the inverse of :func:`fftshift`, differentiable.

    Args:
        x: array.
        axes: the axes to shift (default all).

    Returns:
        The shifted array.

    Raises:
        ValueError: an axis out of range.

    Example:
        >>> ifftshift(np.arange(5.0))
        array([2., 3., 4., 0., 1.])
    """
    return _shift(x, axes, -1, "ifftshift")


def fftfreq(n, d=1.0, device=None):
    """``numpy.fft.fftfreq``: the sample frequencies ``k / (n d)``, differentiable in ``d``.

    Args:
        n: window length (a plain int).
        d: sample spacing (may be traced).
        device: NumPy's.

    Returns:
        The n frequencies.

    Example:
        >>> fftfreq(4, 0.5)
        array([ 0. ,  0.5, -1. , -0.5])
    """
    if not is_tracer(d):
        return np.fft.fftfreq(n, d, device=device)
    return np.fft.fftfreq(n, 1.0, device=device) / d


def rfftfreq(n, d=1.0, device=None):
    """``numpy.fft.rfftfreq``: the frequencies of :func:`rfft`'s bins, differentiable in ``d``.

    Args:
        n: window length (a plain int).
        d: sample spacing (may be traced).
        device: NumPy's.

    Returns:
        The n//2 + 1 frequencies.

    Example:
        >>> rfftfreq(4, 0.5)
        array([0. , 0.5, 1. ])
    """
    if not is_tracer(d):
        return np.fft.rfftfreq(n, d, device=device)
    return np.fft.rfftfreq(n, 1.0, device=device) / d
