"""``diffsci.nn.conv``: convolution over some axes, contraction over others, outer product over
the rest — the arithmetic of a convolutional layer, for arrays of any rank.

The convolution theorem makes it one contraction in frequency space: transform both operands
along their convolved axes to the full length ``n_a + n_b - 1``, contract the paired ``dot_axes``
(an outer product over the remaining ones) with :func:`diffsci.numpy.einsum`, transform back
and crop.  Every step is a differentiable diffsci call (the FFTs of :mod:`diffsci.fft`, einsum),
so derivatives of any order in both operands come from their rules; the adjoint of each operand
is the correlation of the cotangent with the other one (DERIVATIONS.md §Convolution, eq. CV1).

References:
    A. V. Oppenheim, R. W. Schafer, *Discrete-Time Signal Processing*, 3rd ed., Pearson 2010,
    §8.7 (linear convolution by the DFT of zero-padded operands).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import fft as _fft
from .. import numpy as dnp
from .._core import getval
from ..scipy.signal import crop_axes
from ..typing import Array, ArrayLike

__all__ = ["conv"]

_MODES = ("full", "same", "valid")


def _axis_list(spec, ndim, what, which):
    if not hasattr(spec, "__iter__") or any(
            not isinstance(a, (int, np.integer)) or isinstance(a, bool) for a in spec):
        raise TypeError(f"diffsci.nn.conv: {what} must be a pair of sequences of ints, got "
                        f"{spec!r} for {which}")
    seq = [int(a) for a in spec]
    if any(not -ndim <= a < ndim for a in seq):
        raise ValueError(f"diffsci.nn.conv: {what} for {which} must lie in [-{ndim}, {ndim}) "
                         f"(it has {ndim} axes), got {spec!r}")
    return [a % ndim for a in seq]


def _pair(spec, what):
    if not isinstance(spec, (tuple, list)) or len(spec) != 2:
        raise TypeError(f"diffsci.nn.conv: {what} must be a pair (axes of a, axes of b), got "
                        f"{spec!r}")
    return spec


def conv(a: ArrayLike, b: ArrayLike, axes: Sequence[Sequence[int]] | None = None,
         dot_axes: Sequence[Sequence[int]] = ((), ()), mode: str = "full") -> Array:
    """Convolve ``a`` and ``b`` over paired axes, contract over others, broadcast the rest.

    ``axes = (ca, cb)`` pairs ``a``'s axes ``ca[i]`` with ``b``'s ``cb[i]`` for convolution
    (``scipy.signal.convolve`` along each pair: the kernel is flipped); ``dot_axes = (da, db)``
    pairs axes that are summed over, as in ``numpy.tensordot``.  The result's axes are
    ``a``'s remaining axes, then ``b``'s remaining axes, then the convolved ones (in the order
    of ``ca``).  A 2-d convolutional layer, ``x`` (batch, c_in, H, W) with ``w``
    (c_out, c_in, kh, kw), is ``conv(x, w, axes=([2, 3], [2, 3]), dot_axes=([1], [1]),
    mode="valid")`` of shape (batch, c_out, H - kh + 1, W - kw + 1).

    Args:
        a, b: real or complex arrays.
        axes: ``(ca, cb)``, equally long; None: every axis of both (equal ranks).
        dot_axes: ``(da, db)``, equally long, with equal lengths along each pair.
        mode: along each convolved pair, 'full' (``n_a + n_b - 1``), 'same' (``n_a``,
            centred, as SciPy's) or 'valid' (``|n_a - n_b| + 1``; one operand at least as long
            as the other on every pair, as SciPy requires).

    Returns:
        The array described above (real when both operands are real).

    Raises:
        TypeError: ``axes``/``dot_axes`` not pairs of int sequences.
        ValueError: an axis out of range or used twice, pairs of unequal length, contracted
            axes of unequal length, a bad mode, or mixed sizes in 'valid' mode.

    Example:
        >>> import numpy as np, diffsci as ds
        >>> x, k = np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0])
        >>> ds.nn.conv(x, k, axes=([1], [0]))                 # each row with k
        array([[ 0.,  1.,  1., -2.],
               [ 3.,  1.,  1., -5.]])
        >>> ds.grad(lambda k: ds.nn.conv(x, k, axes=([1], [0]))[1, 1])(k).round(12)
        array([4., 3.])
    """
    a, b = dnp.asarray(a), dnp.asarray(b)
    na, nb = np.ndim(getval(a)), np.ndim(getval(b))
    if mode not in _MODES:
        raise ValueError(f"diffsci.nn.conv: mode must be one of {_MODES}, got {mode!r}")
    if axes is None:
        if na != nb:
            raise ValueError(f"diffsci.nn.conv: axes=None convolves every axis, which needs "
                             f"equal ranks; got {na} and {nb}")
        axes = (range(na), range(nb))
    ca, cb = (_axis_list(s, n, "axes", w) for s, n, w in zip(_pair(axes, "axes"), (na, nb),
                                                             ("a", "b")))
    da, db = (_axis_list(s, n, "dot_axes", w) for s, n, w in zip(
        _pair(dot_axes, "dot_axes"), (na, nb), ("a", "b")))
    if len(ca) != len(cb) or len(da) != len(db):
        raise ValueError(f"diffsci.nn.conv: the two halves of axes and of dot_axes must be "
                         f"equally long, got axes={axes!r}, dot_axes={dot_axes!r}")
    for used, which in ((ca + da, "a"), (cb + db, "b")):
        if len(set(used)) != len(used):
            raise ValueError(f"diffsci.nn.conv: an axis of {which} appears twice in axes and "
                             f"dot_axes ({axes!r}, {dot_axes!r})")
    sa, sb = np.shape(getval(a)), np.shape(getval(b))
    for i, j in zip(da, db):
        if sa[i] != sb[j]:
            raise ValueError(f"diffsci.nn.conv: contracted axes must be equally long, a's axis "
                             f"{i} has {sa[i]}, b's axis {j} has {sb[j]}")
    la, lb = [sa[i] for i in ca], [sb[j] for j in cb]
    if mode == "valid" and not (all(x >= y for x, y in zip(la, lb))
                                or all(y >= x for x, y in zip(la, lb))):
        raise ValueError(f"diffsci.nn.conv: for 'valid' mode one operand must be at least as "
                         f"long as the other along every convolved pair, got {la} and {lb}")
    ia = [i for i in range(na) if i not in ca + da]
    ib = [j for j in range(nb) if j not in cb + db]
    k, d = len(ca), len(da)
    at = dnp.transpose(a, ia + da + ca)  # (outer of a, contracted, convolved)
    bt = dnp.transpose(b, ib + db + cb)
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    la_, lb_ = [next(letters) for _ in ia], [next(letters) for _ in ib]
    ld, lc = [next(letters) for _ in da], [next(letters) for _ in ca]
    spec = "".join(la_ + ld + lc) + "," + "".join(lb_ + ld + lc) + "->" + "".join(la_ + lb_ + lc)
    if k == 0:
        return dnp.einsum(spec, at, bt)
    full = [x + y - 1 for x, y in zip(la, lb)]
    shape = tuple(sa[i] for i in ia) + tuple(sb[j] for j in ib)
    if 0 in la or 0 in lb:  # an empty convolution: nothing depends on the operands
        dt = np.result_type(getval(a), getval(b))
        out = np.zeros(shape + tuple(max(n, 0) for n in full), dt)
    else:
        # the convolution theorem: contract in frequency space, one inverse transform
        real = not (np.iscomplexobj(getval(a)) or np.iscomplexobj(getval(b)))
        fwd, inv = (_fft.rfftn, _fft.irfftn) if real else (_fft.fftn, _fft.ifftn)
        ax_a = list(range(len(ia) + d, len(ia) + d + k))
        ax_b = list(range(len(ib) + d, len(ib) + d + k))
        prod = dnp.einsum(spec, fwd(at, full, ax_a), fwd(bt, full, ax_b))
        out = inv(prod, full, list(range(len(shape), len(shape) + k)))
    if mode != "full":
        keep = la if mode == "same" else [abs(x - y) + 1 for x, y in zip(la, lb)]
        out = crop_axes(out, list(range(len(shape), len(shape) + k)), keep)
    return out
