"""The core's Numba kernel primitives (diffsci/_kernels.py bound in diffsci/_ops.py).

Gradients against central finite differences (orders 1 and 2, float64), values against
scipy.special, -inf masking, dtype preservation, the parallel drivers, and the boundary errors.
"""

import ast
from pathlib import Path

import numpy as np
import pytest
from scipy import special

import diffsci as ds
from diffsci import _kernels as K
from diffsci._ops import logsumexp, softmax
from diffsci.testing import check_grads

pytestmark = pytest.mark.kernels  # runs Numba kernels (make test re-runs them bounds-checked)

RNG = np.random.default_rng(20240607)

# (shape, axis): several ranks, every axis position, negative axes and axis=None.
CASES = [
    ((5,), -1),
    ((5,), None),
    ((3, 4), -1),
    ((3, 4), 0),
    ((2, 3, 4), 1),
    ((2, 3, 4), -3),
    ((2, 3, 4), None),
    ((1, 6), 1),
]


def _x(shape, dtype=np.float64, scale=2.0):
    return (scale * RNG.standard_normal(shape)).astype(dtype)


# ---------------------------------------------------------------- values
@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_matches_scipy(shape, axis, keepdims):
    x = _x(shape)
    got = logsumexp(x, axis, keepdims)
    want = special.logsumexp(x, axis=axis, keepdims=keepdims)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("shape,axis", CASES)
def test_softmax_matches_scipy(shape, axis):
    x = _x(shape)
    got = softmax(x, axis)
    np.testing.assert_allclose(got, special.softmax(x, axis=axis), rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(np.sum(got, axis=axis), 1.0, rtol=1e-14)


def test_stable_for_huge_and_tiny_arguments():
    x = np.array([[1000.0, 1000.0], [-1000.0, -1001.0]])
    np.testing.assert_allclose(logsumexp(x), special.logsumexp(x, axis=-1), rtol=1e-15)
    np.testing.assert_allclose(softmax(x), special.softmax(x, axis=-1), rtol=1e-15)
    assert np.isfinite(ds.grad(lambda x: logsumexp(x).sum())(x)).all()


def test_non_contiguous_input():
    base = _x((6, 8))
    for x in (base.T, base[::-1, ::2], base[:, 1:5]):
        np.testing.assert_allclose(logsumexp(x, 0), special.logsumexp(x, axis=0), rtol=1e-14)
        np.testing.assert_allclose(softmax(x, 0), special.softmax(x, axis=0), rtol=1e-14)
        check_grads(lambda x: softmax(x, 0), (x,))


def test_scalar_and_list_input():
    assert logsumexp(3.0, None) == 3.0
    assert isinstance(logsumexp(np.ones(3)), np.float64)
    np.testing.assert_allclose(logsumexp([1.0, 2.0]), special.logsumexp([1.0, 2.0]))


def test_parallel_drivers_agree_with_scipy():
    # Large enough to take the parallel=True drivers.
    x = _x((512, K.PARALLEL_MIN_ELEMENTS // 256))
    assert x.size >= K.PARALLEL_MIN_ELEMENTS
    np.testing.assert_allclose(logsumexp(x), special.logsumexp(x, axis=-1), rtol=1e-13)
    np.testing.assert_allclose(softmax(x), special.softmax(x, axis=-1), rtol=1e-12, atol=1e-18)
    g = RNG.standard_normal(x.shape[0])
    _, back = ds.pullback(logsumexp, x)
    np.testing.assert_allclose(back(g)[0], g[:, None] * special.softmax(x, axis=-1),
                               rtol=1e-12, atol=1e-18)
    gy = RNG.standard_normal(x.shape)
    y, back = ds.pullback(softmax, x)
    want = y * (gy - np.sum(gy * y, axis=-1, keepdims=True))
    np.testing.assert_allclose(back(gy)[0], want, rtol=1e-10, atol=1e-14)


# ---------------------------------------------------------------- gradients
@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_grads(shape, axis, keepdims):
    check_grads(lambda x: logsumexp(x, axis, keepdims), (_x(shape),), order=2)


@pytest.mark.parametrize("shape,axis", CASES)
def test_softmax_grads(shape, axis):
    check_grads(lambda x: softmax(x, axis), (_x(shape),), order=2)


def test_grad_of_logsumexp_is_softmax_and_hessian():
    x = _x((7,))
    p = special.softmax(x)
    np.testing.assert_allclose(ds.grad(logsumexp)(x), p, rtol=1e-14)
    H = ds.jacobian(ds.grad(logsumexp))(x)  # the traced (second-order) path
    np.testing.assert_allclose(H, np.diag(p) - np.outer(p, p), atol=1e-15)


def test_composed_with_other_ops():
    # log-softmax cross-entropy written two ways, through both primitives.
    x, w = _x((4, 5)), _x((5, 3))
    labels = np.eye(3)[[0, 2, 1, 2]]

    def xent(w):
        z = x @ w
        return -np.sum(labels * (z - logsumexp(z, 1, True)))

    def xent_softmax(w):
        return -np.sum(labels * np.log(softmax(x @ w, 1)))

    check_grads(xent, (w,))  # order 2 needs a traced np.broadcast_to (sum's rule)
    np.testing.assert_allclose(ds.grad(xent)(w), ds.grad(xent_softmax)(w), rtol=1e-12)


# ---------------------------------------------------------------- -inf (masking)
def test_minus_inf_entries_are_masked():
    x = np.array([[0.0, -np.inf, np.log(3.0)], [-np.inf, 1.0, -np.inf]])
    np.testing.assert_allclose(logsumexp(x), special.logsumexp(x, axis=-1), rtol=1e-15)
    np.testing.assert_allclose(softmax(x), [[0.25, 0.0, 0.75], [0.0, 1.0, 0.0]])
    g = ds.grad(lambda x: logsumexp(x).sum())(x)
    np.testing.assert_allclose(g, [[0.25, 0.0, 0.75], [0.0, 1.0, 0.0]])
    gs = ds.grad(lambda x: (softmax(x) * np.arange(3.0)).sum())(x)
    assert np.isfinite(gs).all() and gs[0, 1] == 0.0 and (gs[1] == 0.0).all()


def test_all_minus_inf_slice():
    x = np.array([[-np.inf, -np.inf], [0.0, 1.0]])
    out = logsumexp(x)
    assert out[0] == -np.inf and np.isfinite(out[1])
    g = ds.grad(lambda x: logsumexp(x)[0] + logsumexp(x)[1])(x)
    assert np.isfinite(g).all() and (g[0] == 0.0).all()
    # softmax of a fully masked slice: zeros (documented), zero gradient, no NaN.
    y = softmax(x)
    assert (y[0] == 0.0).all()
    gs = ds.grad(lambda x: (softmax(x) ** 2).sum())(x)
    assert np.isfinite(gs).all() and (gs[0] == 0.0).all()
    # Second order through a masked slice stays finite too.
    hh = ds.grad(lambda x: (ds.grad(lambda x: logsumexp(x).sum())(x) ** 2).sum())(x)
    assert np.isfinite(hh).all() and (hh[0] == 0.0).all()
    assert logsumexp(np.full(3, -np.inf)) == -np.inf
    np.testing.assert_array_equal(ds.grad(logsumexp)(np.full(3, -np.inf)), np.zeros(3))


def test_empty_axis():
    x = np.zeros((2, 0))
    np.testing.assert_array_equal(logsumexp(x), [-np.inf, -np.inf])
    assert softmax(x).shape == (2, 0)


# ---------------------------------------------------------------- dtypes
@pytest.mark.parametrize("axis", [0, -1, None])
def test_float32_preserved(axis):
    x = _x((4, 6), np.float32)
    assert logsumexp(x, axis).dtype == np.float32
    assert softmax(x, axis).dtype == np.float32
    np.testing.assert_allclose(logsumexp(x, axis), special.logsumexp(x.astype(float), axis=axis),
                               rtol=1e-6)
    g = ds.grad(lambda x: logsumexp(x, axis).sum())(x)
    gs = ds.grad(lambda x: (softmax(x, axis) ** 2).sum())(x)
    assert g.dtype == np.float32 and gs.dtype == np.float32
    # Order 1 only: check_grads(order=2) compares the traced and the plain VJP with a float64
    # tolerance, and in float32 the kernel and the composed NumPy adjoint round differently.
    check_grads(lambda x: logsumexp(x, axis), (x,))
    check_grads(lambda x: softmax(x, axis), (x,))


# ---------------------------------------------------------------- errors at the boundary
@pytest.mark.parametrize("fn", [logsumexp, softmax])
@pytest.mark.parametrize("x,axis,exc,match", [
    (np.arange(3), -1, TypeError, r"dtype float32 or float64, got int64"),
    (np.ones(3, np.complex128), -1, TypeError, r"got complex128; complex input"),
    (np.ones(3, np.float16), -1, TypeError, r"got float16"),
    ("abc", -1, TypeError, r"dtype float32 or float64"),
    (np.ones((2, 3)), 2, ValueError, r"axis 2 is out of range for x of shape \(2, 3\)"),
    (np.ones((2, 3)), -3, ValueError, r"expected -2 <= axis < 2"),
    (np.ones((2, 3)), (0, 1), TypeError, r"axis must be an int or None, got tuple"),
    (np.ones((2, 3)), 1.0, TypeError, r"axis must be an int or None, got float"),
    (np.float64(1.0), -1, ValueError, r"x is 0-d, so axis must be None"),
    (np.array([[1.0, np.nan]]), -1, ValueError, r"non-finite entry nan at index \(0, 1\)"),
    (np.array([1.0, 2.0, np.inf]), -1, ValueError, r"non-finite entry inf at index \(2,\)"),
])
def test_bad_input(fn, x, axis, exc, match):
    with pytest.raises(exc, match=match):
        fn(x, axis)
    if exc is ValueError and np.asarray(x).dtype == np.float64 and np.ndim(x):
        with pytest.raises(exc, match=match):  # traced inputs are validated the same way
            ds.grad(lambda x: np.sum(fn(x, axis)))(x)


def test_bad_keepdims():
    with pytest.raises(TypeError, match="keepdims must be a bool, got int"):
        logsumexp(np.ones(3), -1, 1)


# ---------------------------------------------------------------- the kernel contract
def test_kernels_module_does_not_import_diffsci():
    tree = ast.parse(Path(K.__file__).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and not (node.module or "").startswith("diffsci"), node.module
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("diffsci") for a in node.names)


def test_one_record_per_call():
    # The fused op is one custom_vjp record (a single array output needs no projection record),
    # whatever the size.
    tape = ds.extend.Tape()
    x = tape.leaf(_x((3, 50)))
    logsumexp(x, 1)
    softmax(x, 0)
    assert len(tape.records) == 1 + 1 + 1
