"""diffsci.scipy.signal: values equal SciPy's; gradients against finite differences (to
second order, both modes) and against dense Jacobians built from SciPy itself."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.signal as ss

import diffsci as ds
import diffsci.numpy as dnp
from diffsci.scipy import signal
from diffsci.testing import check_grads

R = np.random.default_rng(3)


def traced_value(f, *args):
    return ds.pullback(f, *args)[0]


def dense_jacobian(linear, shape):
    """Jacobian of a linear map, column by column from unit arrays of ``shape``."""
    n = int(np.prod(shape))
    cols = [np.ravel(linear(e.reshape(shape))) for e in np.eye(n)]
    return np.stack(cols, axis=-1)


SHAPES = [((5,), (3,)), ((2,), (4,)), ((4,), (4,)), ((3, 4), (2, 2)), ((2, 3), (3, 2)),
          ((2, 2), (3, 4)), ((1,), (1,))]


@pytest.mark.parametrize("s1,s2", SHAPES)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("method", ["direct", "fft"])
def test_convolve_correlate_equal_scipy_and_their_jacobians(s1, s2, mode, method):
    if mode == "valid" and not (all(a >= b for a, b in zip(s1, s2))
                                or all(b >= a for a, b in zip(s1, s2))):
        pytest.skip("no valid output for these shapes")
    a, v = R.standard_normal(s1), R.standard_normal(s2) + 0.5j * R.standard_normal(s2)
    for ours, theirs in ((signal.convolve, ss.convolve), (signal.correlate, ss.correlate)):
        want = theirs(a, v, mode, method)
        np.testing.assert_allclose(traced_value(lambda a, v: ours(a, v, mode, method), a, v),
                                   want, rtol=1e-12, atol=1e-12)
        for argnum in (0, 1):
            def f(x):
                args = (x, v) if argnum == 0 else (a, x)
                return dnp.real(ours(*args, mode, method))
            x0 = (a, v.real)[argnum]
            jac = ds.jacobian(f)(x0).reshape(want.size, -1)
            ref = dense_jacobian(lambda e: theirs(*((e, v) if argnum == 0 else (a, e)), mode,
                                                  method).real, x0.shape)
            np.testing.assert_allclose(jac, ref, atol=1e-11)


@pytest.mark.parametrize("f", [
    lambda a, v: signal.convolve(a, v, "same"),
    lambda a, v: signal.correlate(a, v, "valid", method="direct"),
    lambda a, v: signal.fftconvolve(a, v),
    lambda a, v: signal.convolve2d(a, v, "same"),
    lambda a, v: signal.correlate2d(a, v),
])
def test_convolution_gradients_second_order(f):
    check_grads(f, (R.standard_normal((4, 3)), R.standard_normal((2, 2))), order=2,
                modes=("rev", "fwd"))


def test_fftconvolve_and_2d_equal_scipy():
    a, v = R.standard_normal((4, 5)), R.standard_normal((3, 2))
    for ours, theirs in ((signal.fftconvolve, ss.fftconvolve), (signal.convolve2d, ss.convolve2d),
                         (signal.correlate2d, ss.correlate2d)):
        for mode in ("full", "same", "valid"):
            np.testing.assert_allclose(traced_value(lambda a: ours(a, v, mode), a),
                                       theirs(a, v, mode), rtol=1e-12, atol=1e-13)


_AXES_CASES = [((3, 5), (3, 4), 1), ((3, 5), (1, 4), 1), ((3, 5), (3, 1), 0),
               ((4, 5, 6), (4, 2, 3), (1, 2)), ((2, 5), (2, 3), [0, 1]), ((3, 7), (1, 7), 0),
               ((1, 4, 3), (2, 3, 3), (1,)), ((2, 3, 6), (2, 1, 4), -1)]


@pytest.mark.parametrize("s1,s2,axes", _AXES_CASES)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fftconvolve_axes_equals_scipy_and_its_jacobians(s1, s2, axes, mode):
    """axes= on traced values: SciPy's values and broadcasting; each operand's Jacobian equals
    the dense Jacobian of SciPy's (linear) map, column by column."""
    a, v = R.standard_normal(s1), R.standard_normal(s2)
    try:
        want = ss.fftconvolve(a, v, mode, axes=axes)
    except ValueError:
        with pytest.raises(ValueError):
            traced_value(lambda a: signal.fftconvolve(a, v, mode, axes), a)
        return
    np.testing.assert_allclose(traced_value(lambda a: signal.fftconvolve(a, v, mode, axes), a),
                               want, rtol=1e-12, atol=1e-13)
    for argnum in (0, 1):
        x0 = (a, v)[argnum]
        f = lambda x: signal.fftconvolve(*((x, v) if argnum == 0 else (a, x)), mode, axes)
        jac = ds.jacobian(f)(x0).reshape(want.size, -1)
        ref = dense_jacobian(lambda e: ss.fftconvolve(*((e, v) if argnum == 0 else (a, e)),
                                                      mode, axes=axes), x0.shape)
        np.testing.assert_allclose(jac, ref, atol=1e-12)


def test_fftconvolve_axes_complex_and_second_order():
    a = R.standard_normal((2, 4)) + 1j * R.standard_normal((2, 4))
    v = R.standard_normal((1, 3))
    np.testing.assert_allclose(traced_value(lambda a: signal.fftconvolve(a, v, "same", 1), a),
                               ss.fftconvolve(a, v, "same", axes=1), atol=1e-13)
    check_grads(lambda a, v: signal.fftconvolve(a, v, "full", axes=1),
                (R.standard_normal((3, 4)), R.standard_normal((3, 2))), order=2,
                modes=("rev", "fwd"))


# ---------------------------------------------------------------- lfilter
FILTERS = [  # (b, a): FIR, one pole, two poles (stable), a[0] != 1, complex
    (np.array([0.5, 0.2, -0.1]), np.array([1.0])),
    (np.array([1.0]), np.array([1.0, -0.6])),
    (np.array([0.3, 0.1]), np.array([1.0, -0.5, 0.2])),
    (np.array([0.4, 0.2, 0.1, 0.05]), np.array([2.0, 0.3])),
    (np.array([0.5 + 0.2j, 0.1]), np.array([1.0, -0.3 + 0.4j])),
]


@pytest.mark.parametrize("b,a", FILTERS)
def test_lfilter_equals_scipy_and_its_jacobian_in_x(b, a):
    x = R.standard_normal((2, 7))
    for axis in (-1, 0):
        want = ss.lfilter(b, a, x, axis=axis)
        np.testing.assert_allclose(traced_value(lambda x: signal.lfilter(b, a, x, axis), x),
                                   want, rtol=1e-13, atol=1e-14)
        jac = ds.jacobian(lambda x: dnp.real(signal.lfilter(b, a, x, axis)))(x)
        ref = dense_jacobian(lambda e: ss.lfilter(b, a, e, axis=axis).real, x.shape)
        np.testing.assert_allclose(jac.reshape(x.size, x.size), ref, atol=1e-13)


@pytest.mark.parametrize("b,a", FILTERS)
def test_lfilter_gradients_in_all_arguments_second_order(b, a):
    x = R.standard_normal((2, 6))
    if np.iscomplexobj(b):
        x = x + 1j * R.standard_normal(x.shape)
    check_grads(lambda b, a, x: signal.lfilter(b, a, x), (b, a, x), order=2,
                modes=("rev", "fwd"))
    check_grads(lambda b, a, x: signal.lfilter(b, a, x, axis=0), (b, a, x.T), order=1,
                modes=("rev", "fwd"))


def test_lfilter_coefficient_gradients_closed_form():
    # One pole: the impulse response is y[n] = p^n, so dy[n]/dp = n p^(n-1).
    p, n = 0.7, np.arange(8)
    imp = np.eye(1, 8)[0]
    jac = ds.jacobian(lambda p: signal.lfilter([1.0], dnp.stack([1.0, -p]), imp))(p)
    np.testing.assert_allclose(jac, n * p ** np.maximum(n - 1, 0), rtol=1e-13)
    # Linear in b: the columns are the filter applied to the delayed input.
    a, x = np.array([1.0, -0.5, 0.2]), R.standard_normal(9)
    jb = ds.jacobian(lambda b: signal.lfilter(b, a, x))(np.array([0.3, 0.1, 0.2]))
    np.testing.assert_allclose(jb, dense_jacobian(lambda e: ss.lfilter(e, a, x), (3,)),
                               atol=1e-14)


def test_plain_values_are_scipys():
    b, a, x = FILTERS[2][0], FILTERS[2][1], R.standard_normal(10)
    assert np.array_equal(signal.lfilter(b, a, x), ss.lfilter(b, a, x))
    assert np.array_equal(signal.convolve(x, b), ss.convolve(x, b))


@pytest.mark.parametrize("call,exc,match", [
    (lambda x: signal.convolve(x, x[None]), ValueError, "same dimensionality"),
    (lambda x: signal.convolve(x, x, mode="middle"), ValueError, "mode must be"),
    (lambda x: signal.convolve(x[None, :2], x[:, None], "valid"), ValueError, "at least as large"),
    (lambda x: signal.fftconvolve(dnp.stack([x, x]), dnp.stack([x, x, x]), axes=1), ValueError,
     "length 1"),
    (lambda x: signal.fftconvolve(x, x, axes=3), ValueError, "axes must be ints"),
    (lambda x: signal.fftconvolve(x, x, axes=(0, 0)), ValueError, "distinct"),
    (lambda x: signal.lfilter(x, [0.0, 1.0], x), ValueError, "a\\[0\\]"),
    (lambda x: signal.lfilter(x[None], [1.0], x), ValueError, "1-d"),
    (lambda x: signal.lfilter(x, [1.0], x, zi=[0.0, 0.0]), NotImplementedError, "zi="),
    (lambda x: signal.convolve2d(x[None], x[None], boundary="wrap"), NotImplementedError,
     "boundary"),
])
def test_bad_input_names_the_function(call, exc, match):
    with pytest.raises(exc, match=match):
        ds.grad(lambda x: dnp.sum(dnp.real(call(x))))(np.array([0.3, 1.4, -0.6]))


def test_convolution_is_commutative_in_value_and_gradient():
    a, v = R.standard_normal(6), R.standard_normal(4)
    for m1, m2 in itertools.product(["direct", "fft"], repeat=2):
        np.testing.assert_allclose(traced_value(lambda a: signal.convolve(a, v, method=m1), a),
                                   traced_value(lambda a: signal.convolve(v, a, method=m2), a),
                                   atol=1e-12)


@pytest.mark.parametrize("kw", [{}, {"type": "constant"}, {"axis": 0}, {"bp": [3, 7]},
                                {"bp": 4, "type": "l", "axis": 1}])
def test_detrend_equals_scipy_and_is_linear(kw):
    x = R.standard_normal((3, 10)) + 1j * R.standard_normal((3, 10))
    for xx in (x.real, x):
        np.testing.assert_allclose(traced_value(lambda x: signal.detrend(x, **kw), xx),
                                   ss.detrend(xx, **kw), atol=1e-12)
    check_grads(lambda x: signal.detrend(x, **kw), (x.real,), order=2)
    jac = ds.jacobian(lambda x: signal.detrend(x, **kw))(x.real).reshape(30, 30)
    ref = dense_jacobian(lambda e: ss.detrend(e, **kw), (3, 10)).reshape(30, 30)
    np.testing.assert_allclose(jac, ref, atol=1e-12)


def test_detrend_rejects_bad_input():
    with pytest.raises(ValueError, match="type must be"):
        ds.grad(lambda x: dnp.sum(signal.detrend(x, type="cubic")))(np.ones(4))
    with pytest.raises(ValueError, match="breakpoints"):
        ds.grad(lambda x: dnp.sum(signal.detrend(x, bp=[9])))(np.ones(4))


WELCH = [{"nperseg": 16}, {"nperseg": 10, "noverlap": 3, "nfft": 15},
         {"nperseg": 8, "detrend": "linear", "scaling": "spectrum"},
         {"nperseg": 12, "detrend": False, "return_onesided": False},
         {"window": "hamming", "nperseg": 9, "fs": 3.0}]


@pytest.mark.parametrize("kw", WELCH)
def test_welch_and_csd_equal_scipy_with_gradients(kw):
    x, y = R.standard_normal((2, 40)), R.standard_normal((2, 40))
    for ours, theirs, args in [(signal.welch, ss.welch, (x,)), (signal.csd, ss.csd, (x, y)),
                               (signal.csd, ss.csd, (x + 0.5j * y, y))]:
        f, p = traced_value(lambda *a: ours(*a, **kw), *args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SciPy: complex input switches to two-sided
            f0, p0 = theirs(*args, **kw)
        np.testing.assert_array_equal(f, f0)
        np.testing.assert_allclose(p, p0, rtol=1e-12, atol=1e-15)
    check_grads(lambda x: signal.welch(x, **kw)[1], (x,), order=2)
    check_grads(lambda x, y: signal.csd(x, y, **kw)[1], (x, y), order=1)
    # quadratic: sum_f welch(x)_f = x^T M x, its gradient 2 M x; 2 M_ij by polarisation
    xs = x[0, :20]
    g = ds.grad(lambda x: dnp.sum(signal.welch(x, **kw)[1]))(xs)
    e = np.eye(20)
    q = [np.sum(ss.welch(e[i], **kw)[1]) for i in range(20)]
    hess = np.array([[np.sum(ss.welch(e[i] + e[j], **kw)[1]) - q[i] - q[j]
                      for j in range(20)] for i in range(20)])
    np.testing.assert_allclose(g, hess @ xs, rtol=1e-10, atol=1e-13)


def test_welch_axis_and_bad_input():
    xt = R.standard_normal((40, 2))
    np.testing.assert_allclose(traced_value(lambda x: signal.welch(x, nperseg=8, axis=0)[1],
                                            xt), ss.welch(xt, nperseg=8, axis=0)[1], rtol=1e-12)
    with pytest.raises(ValueError, match="noverlap must be less"):
        ds.grad(lambda x: dnp.sum(signal.welch(x, nperseg=4, noverlap=4)[1]))(np.ones(8))
    with pytest.raises(NotImplementedError, match="median"):
        ds.grad(lambda x: dnp.sum(signal.welch(x, nperseg=4, average="median")[1]))(np.ones(8))


STFT = [{"nperseg": 8}, {"nperseg": 10, "noverlap": 3, "nfft": 12, "boundary": "even"},
        {"nperseg": 7, "boundary": "odd", "padded": False, "scaling": "psd"},
        {"nperseg": 8, "boundary": None, "detrend": "linear"},
        {"nperseg": 6, "boundary": "constant", "return_onesided": False}, {"nperseg": 8, "axis": 0}]


@pytest.mark.parametrize("kw", STFT)
def test_stft_equals_scipy_and_its_jacobian(kw):
    x = R.standard_normal((30, 2) if kw.get("axis") == 0 else (2, 30))
    f, t, z = traced_value(lambda x: signal.stft(x, **kw), x)
    f0, t0, z0 = ss.stft(x, **kw)
    np.testing.assert_array_equal(f, f0)
    np.testing.assert_allclose(t, t0, rtol=1e-15)
    np.testing.assert_allclose(z, z0, rtol=1e-12, atol=1e-15)
    check_grads(lambda x: signal.stft(x, **kw)[2], (x,), order=1)
    if not kw.get("detrend"):  # linear in x: the Jacobian is SciPy's stft of unit signals
        jac = ds.jacobian(lambda x: dnp.real(signal.stft(x, **kw)[2]))(x).reshape(z0.size, -1)
        ref = dense_jacobian(lambda e: ss.stft(e, **kw)[2].real, x.shape).reshape(z0.size, -1)
        np.testing.assert_allclose(jac, ref, atol=1e-13)


def test_stft_complex_input_and_bad_boundary():
    x = R.standard_normal(30) + 1j * R.standard_normal(30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy: complex input switches to two-sided
        want = ss.stft(x, nperseg=8)[2]
    np.testing.assert_allclose(traced_value(lambda x: signal.stft(x, nperseg=8)[2], x), want,
                               atol=1e-14)
    with pytest.raises(ValueError, match="unknown boundary"):
        ds.grad(lambda x: dnp.sum(dnp.abs(signal.stft(x, nperseg=4, boundary="wrap")[2])))(
            np.ones(8))


ISTFT = [({"nperseg": 8}, {"nperseg": 8}),
         ({"nperseg": 10, "noverlap": 6, "nfft": 12}, {"nperseg": 10, "noverlap": 6, "nfft": 12}),
         ({"nperseg": 7, "scaling": "psd"}, {"nperseg": 7, "scaling": "psd"}),
         ({"nperseg": 8, "return_onesided": False}, {"nperseg": 8, "input_onesided": False})]


@pytest.mark.parametrize("skw,ikw", ISTFT)
def test_istft_equals_scipy_and_inverts_stft(skw, ikw):
    x = R.standard_normal((2, 30))
    z = ss.stft(x, **skw)[2]
    t, y = traced_value(lambda z: signal.istft(z, **ikw), z)
    t0, y0 = ss.istft(z, **ikw)
    np.testing.assert_array_equal(t, t0)
    np.testing.assert_allclose(y, y0, rtol=1e-12, atol=1e-14)
    check_grads(lambda z: signal.istft(z, **ikw)[1], (z,), order=1)
    # istft(stft(x)) = x, traced through both: the gradient of <w, x_rec> in x is w
    w = R.standard_normal(x.shape)
    g = ds.grad(lambda x: dnp.sum(w * dnp.real(
        signal.istft(signal.stft(x, **skw)[2], **ikw)[1][..., :30])))(x)
    np.testing.assert_allclose(g, w, atol=1e-12)


def test_istft_axes_and_nola_warning():
    z = np.moveaxis(ss.stft(R.standard_normal((2, 30)), nperseg=8)[2], 0, -1)  # (f, t, batch)
    np.testing.assert_allclose(
        traced_value(lambda z: signal.istft(z, nperseg=8, time_axis=1, freq_axis=0)[1], z),
        ss.istft(z, nperseg=8, time_axis=1, freq_axis=0)[1], atol=1e-14)
    z2 = ss.stft(R.standard_normal(30), nperseg=8, boundary=None, padded=False)[2]
    with pytest.warns(UserWarning, match="NOLA"):
        traced_value(lambda z: signal.istft(z, nperseg=8, boundary=False), z2)
