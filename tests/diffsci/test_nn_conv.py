"""diffsci.nn.conv: convolution over paired axes, contraction over others, outer product over the
rest.  Values against a loop of SciPy convolutions over random axis layouts, a PyTorch
convolutional layer (values and gradients), finite differences to second order."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.signal as ss

import diffsci as ds
from diffsci.nn import conv
from diffsci.testing import check_grads

R = np.random.default_rng(11)


def _layout(r):
    """A random layout: conv pairs, dot pairs and outer axes for a and b, with sizes."""
    k, d = int(r.integers(0, 3)), int(r.integers(0, 3))
    oa, ob = int(r.integers(0, 2)), int(r.integers(0, 2))
    la, lb = list(r.integers(1, 5, k)), list(r.integers(1, 4, k))
    if r.random() < 0.5:  # 'valid' needs one operand at least as long on every pair
        la = [max(x, y) for x, y in zip(la, lb)]
    ld = list(r.integers(1, 4, d))
    kinds_a = ["c"] * k + ["d"] * d + ["o"] * oa
    kinds_b = ["c"] * k + ["d"] * d + ["o"] * ob
    perm_a, perm_b = r.permutation(len(kinds_a)), r.permutation(len(kinds_b))
    shape_a, shape_b = [0] * len(kinds_a), [0] * len(kinds_b)
    ca, cb, da, db = [0] * k, [0] * k, [0] * d, [0] * d
    outer = iter(r.integers(1, 4, oa + ob))
    for perm, kinds, shape, lens, cpos, dpos in ((perm_a, kinds_a, shape_a, la, ca, da),
                                                 (perm_b, kinds_b, shape_b, lb, cb, db)):
        for pos, (kind, idx) in zip(perm, _indexed(kinds)):
            if kind == "c":
                shape[pos], cpos[idx] = lens[idx], int(pos)
            elif kind == "d":
                shape[pos], dpos[idx] = ld[idx], int(pos)
            else:
                shape[pos] = next(outer)
    return tuple(shape_a), tuple(shape_b), (ca, cb), (da, db)


def _indexed(kinds):
    seen = {}
    for kind in kinds:
        seen[kind] = seen.get(kind, -1) + 1
        yield kind, seen[kind]


def _reference(a, b, axes, dot_axes, mode):
    """Loops over the outer and contracted indices, SciPy's convolve on each k-d slice."""
    (ca, cb), (da, db) = [list(x) for x in axes], [list(x) for x in dot_axes]
    ia = [i for i in range(a.ndim) if i not in ca + da]
    ib = [j for j in range(b.ndim) if j not in cb + db]
    at, bt = np.transpose(a, ia + da + ca), np.transpose(b, ib + db + cb)
    sa, sb = at.shape[:len(ia)], bt.shape[:len(ib)]
    sd = at.shape[len(ia):len(ia) + len(da)]
    out = None
    for i in itertools.product(*map(range, sa)):
        for j in itertools.product(*map(range, sb)):
            acc = 0
            for dd in itertools.product(*map(range, sd)):
                x, y = at[i + dd], bt[j + dd]
                acc = acc + (ss.convolve(x, y, mode) if x.ndim else x * y)
            if out is None:
                out = np.zeros(sa + sb + np.shape(acc), np.result_type(a, b))
            out[i + j] = acc
    return out


LAYOUTS = [_layout(np.random.default_rng(s)) for s in range(40)]


@pytest.mark.parametrize("layout", LAYOUTS, ids=[f"layout{s}" for s in range(40)])
def test_conv_equals_a_loop_of_scipy_convolutions(layout):
    shape_a, shape_b, axes, dot_axes = layout
    a, b = R.standard_normal(shape_a), R.standard_normal(shape_b)
    for mode in ("full", "same", "valid"):
        la = [shape_a[i] for i in axes[0]]
        lb = [shape_b[j] for j in axes[1]]
        if mode == "valid" and not (all(x >= y for x, y in zip(la, lb))
                                    or all(y >= x for x, y in zip(la, lb))):
            with pytest.raises(ValueError, match="valid"):
                conv(a, b, axes, dot_axes, mode)
            continue
        want = _reference(a, b, axes, dot_axes, mode)
        got = ds.pullback(lambda a, b: conv(a, b, axes, dot_axes, mode), a, b)[0]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layout", LAYOUTS[:12], ids=[f"layout{s}" for s in range(12)])
def test_conv_jacobians_equal_the_loops(layout):
    """conv is bilinear: its Jacobian in each operand is the reference's, column by column."""
    shape_a, shape_b, axes, dot_axes = layout
    a, b = R.standard_normal(shape_a), R.standard_normal(shape_b)
    for argnum, x0 in enumerate((a, b)):
        def f(x):
            return conv(*((x, b) if argnum == 0 else (a, x)), axes, dot_axes, "full")
        want = _reference(a, b, axes, dot_axes, "full")
        jac = ds.jacobian(f)(x0).reshape(want.size, -1)
        cols = [_reference(*((e.reshape(x0.shape), b) if argnum == 0 else
                             (a, e.reshape(x0.shape))), axes, dot_axes, "full").ravel()
                for e in np.eye(x0.size)]
        np.testing.assert_allclose(jac, np.stack(cols, -1), atol=1e-12)


def test_conv_is_a_pytorch_conv2d_layer_values_and_gradients():
    torch = pytest.importorskip("torch")
    x, w = R.standard_normal((2, 3, 6, 5)), R.standard_normal((4, 3, 3, 2))
    g = R.standard_normal((2, 4, 4, 4))

    def ours(x, w):
        return conv(x, w, axes=([2, 3], [2, 3]), dot_axes=([1], [1]), mode="valid")
    y, back = ds.pullback(ours, x, w)
    gx, gw = back(g)
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    yt = torch.nn.functional.conv2d(xt, wt.flip(-1, -2))  # torch's conv2d is a correlation
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gx, xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw, wt.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axes,dot_axes,mode", [
    (([1], [0]), ((), ()), "same"),
    (([1], [1]), ([0], [0]), "valid"),
    (([], []), ([0], [1]), "full"),
])
def test_conv_gradients_second_order_both_modes(axes, dot_axes, mode):
    a, b = R.standard_normal((3, 4)), R.standard_normal((2, 3)) if axes[1] == [0] else \
        R.standard_normal((3, 2))
    if dot_axes == ([0], [1]):
        b = R.standard_normal((2, 3))
    check_grads(lambda a, b: conv(a, b, axes, dot_axes, mode), (a, b), order=2,
                modes=("rev", "fwd"))


def test_conv_complex_operands():
    a = R.standard_normal((2, 5)) + 1j * R.standard_normal((2, 5))
    b = R.standard_normal((3, 2)) + 1j * R.standard_normal((3, 2))
    axes, dots = ([1], [0]), ((), ())
    np.testing.assert_allclose(conv(a, b, axes, dots), _reference(a, b, axes, dots, "full"),
                               atol=1e-12)
    check_grads(lambda a, b: conv(a, b, axes, dots, "same"), (a, b), modes=("rev", "fwd"))


def test_conv_float32_and_axes_none():
    a = R.standard_normal((4, 3)).astype(np.float32)
    b = R.standard_normal((2, 2)).astype(np.float32)
    y = conv(a, b)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, ss.convolve(a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kw,exc,match", [
    (dict(axes=([0], [0]), mode="middle"), ValueError, "mode must be"),
    (dict(axes=([0], [0, 1])), ValueError, "equally long"),
    (dict(axes=([5], [0])), ValueError, "must lie in"),
    (dict(axes=([0], [0]), dot_axes=([0], [1])), ValueError, "appears twice"),
    (dict(axes=([], []), dot_axes=([0], [0])), ValueError, "equally long, a's axis 0"),
    (dict(axes=[0]), TypeError, "pair"),
    (dict(axes=([0.5], [0])), TypeError, "sequences of ints"),
    (dict(axes=None), ValueError, "equal ranks"),
])
def test_conv_bad_arguments_are_named(kw, exc, match):
    with pytest.raises(exc, match=match):
        conv(np.ones((3, 2)), np.ones((2,)) if kw.get("axes") is None else np.ones((2, 2)), **kw)
