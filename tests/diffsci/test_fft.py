"""Gradients of diffsci.fft: every transform, norm and resizing, against finite differences
and against dense Jacobians.

``SPECS`` covers every public function in both modes to second order.  The transforms are
linear, so ``test_dense_real_jacobian`` builds each one's whole real Jacobian
d(Re y, Im y)/d(Re x, Im x) three ways (central differences, VJPs of the unit cotangents,
JVPs of the unit tangents) and compares them: this is where the Hermitian weighting of
``rfft``/``irfft``'s doubled bins is pinned down.
"""

from __future__ import annotations

import dataclasses
import itertools
import zlib
from collections.abc import Callable

import numpy as np
import pytest

import diffsci as ds
from diffsci import fft as F
from diffsci.testing import check_grads

NORMS = [None, "ortho", "forward"]


def real(*shape):
    return lambda r: r.standard_normal(shape)


def cplx(*shape):
    return lambda r: r.standard_normal(shape) + 1j * r.standard_normal(shape)


@dataclasses.dataclass(frozen=True)
class Spec:
    name: str  # the diffsci.fft function this spec covers
    fun: Callable
    args: tuple
    order: int = 2


S = Spec
SPECS = []
for nm in NORMS:
    SPECS += [
        S("fft", lambda x, nm=nm: F.fft(x, norm=nm), (real(3, 4),)),
        S("fft", lambda x, nm=nm: F.fft(x, n=6, axis=0, norm=nm), (cplx(3, 4),)),
        S("ifft", lambda x, nm=nm: F.ifft(x, n=3, norm=nm), (cplx(2, 5),)),
        S("fftn", lambda x, nm=nm: F.fftn(x, s=(4, 3), axes=(0, 1), norm=nm), (cplx(3, 5),)),
        S("ifftn", lambda x, nm=nm: F.ifftn(x, axes=(0,), norm=nm), (real(3, 4),)),
        S("fft2", lambda x, nm=nm: F.fft2(x, norm=nm), (cplx(2, 3, 4),)),
        S("ifft2", lambda x, nm=nm: F.ifft2(x, s=(2, 5), norm=nm), (cplx(3, 4),)),
        S("rfft", lambda x, nm=nm: F.rfft(x, norm=nm), (real(2, 6),)),
        S("rfft", lambda x, nm=nm: F.rfft(x, n=7, axis=0, norm=nm), (real(5, 2),)),
        S("irfft", lambda x, nm=nm: F.irfft(x, norm=nm), (cplx(2, 4),)),
        S("irfft", lambda x, nm=nm: F.irfft(x, n=5, norm=nm), (cplx(4),)),
        S("irfft", lambda x, nm=nm: F.irfft(x, n=4, axis=0, norm=nm), (real(2, 3),)),
        S("rfftn", lambda x, nm=nm: F.rfftn(x, norm=nm), (real(3, 4),)),
        S("irfftn", lambda x, nm=nm: F.irfftn(x, s=(4, 5), axes=(0, 1), norm=nm), (cplx(3, 3),)),
        S("rfft2", lambda x, nm=nm: F.rfft2(x, s=(3, 3), norm=nm), (real(2, 3, 4),)),
        S("irfft2", lambda x, nm=nm: F.irfft2(x, norm=nm), (cplx(3, 3),)),
        S("hfft", lambda x, nm=nm: F.hfft(x, n=6, norm=nm), (cplx(4),)),
        S("ihfft", lambda x, nm=nm: F.ihfft(x, norm=nm), (real(5),)),
    ]
SPECS += [
    S("fftshift", F.fftshift, (cplx(3, 4),)),
    S("fftshift", lambda x: F.fftshift(x, axes=1), (real(3, 5),)),
    S("ifftshift", F.ifftshift, (real(5, 2),)),
    S("ifftshift", lambda x: F.ifftshift(x, axes=(0,)), (cplx(3, 4),)),
    S("fftfreq", lambda d: F.fftfreq(5, d), (lambda r: r.uniform(0.5, 2.0),)),
    S("rfftfreq", lambda d: F.rfftfreq(6, d), (lambda r: r.uniform(0.5, 2.0),)),
]


def _spec_id(spec, _seen={}):  # noqa: B006 - counter for readable ids
    k = _seen[spec.name] = _seen.get(spec.name, 0) + 1
    return f"{spec.name}-{k}"


@pytest.mark.parametrize("spec", SPECS, ids=[_spec_id(s) for s in SPECS])
def test_grad(spec):
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
    args = tuple(sample(rng) for sample in spec.args)
    check_grads(spec.fun, args, order=spec.order)


def test_every_function_has_a_spec():
    missing = sorted(set(F.__all__) - {s.name for s in SPECS})
    assert not missing, f"diffsci.fft functions without a gradient spec: {missing}"


def test_every_numpy_fft_function_exists():
    assert set(F.__all__) == set(np.fft.__all__)


# ---------------------------------------------------------------- dense Jacobians
def _pairs(z):
    z = np.asarray(z)
    return np.concatenate([np.real(z).ravel(), np.imag(z).ravel()])


def _unit(shape, k, part):
    e = np.zeros(shape, complex)
    e.flat[k] = part
    return e


def real_jacobians(f, x):
    """(differences, from VJPs, from JVPs): rows (Re y, Im y), columns (Re x, Im x)."""
    cplx_in = np.iscomplexobj(x)
    parts = (1.0, 1j) if cplx_in else (1.0,)

    def as_input(t):
        return t if cplx_in else np.real(t)

    y, back = ds.pullback(f, x)
    y = ds.stop_gradient(y)
    fd = np.array([(_pairs(f(x + as_input(_unit(x.shape, k, p)) * 1e-6))
                    - _pairs(f(x - as_input(_unit(x.shape, k, p)) * 1e-6))) / 2e-6
                   for p in parts for k in range(x.size)]).T
    rows = []
    for p in (1.0, 1j):
        for k in range(np.size(y)):
            ct = _unit(np.shape(y), k, p)
            rows.append(_pairs(back(ct if np.iscomplexobj(y) else np.real(ct))[0]))
    vjp = np.array(rows)
    if not cplx_in:
        vjp = vjp[:, :x.size]
    jvp = np.array([_pairs(ds.jvp(f, (x,), (as_input(_unit(x.shape, k, p)),))[1])
                    for p in parts for k in range(x.size)]).T
    return fd, vjp, jvp


_r = np.random.default_rng(3)
XR = _r.standard_normal(6)
XC = _r.standard_normal(4) + 1j * _r.standard_normal(4)
X2 = _r.standard_normal((3, 4)) + 1j * _r.standard_normal((3, 4))
ONE_D = [("rfft", F.rfft, XR), ("irfft", F.irfft, XC), ("fft of real", F.fft, XR),
         ("ifft", F.ifft, XC), ("hfft", F.hfft, XC), ("ihfft", F.ihfft, XR)]
DENSE = [
    (f"{name} n={n} norm={nm}", lambda x, f=f, n=n, nm=nm: f(x, n=n, norm=nm), x)
    for (name, f, x), n, nm in itertools.product(ONE_D, [None, 5, 8], NORMS)
] + [
    (f"{name} s={s}", lambda x, f=f, s=s: f(x, s=s, axes=(0, 1), norm="ortho"), x)
    for name, f, x in [("rfftn", F.rfftn, X2.real), ("irfftn", F.irfftn, X2),
                       ("fftn", F.fftn, X2)]
    for s in [(3, 4), (2, 5), (4, 3)]
]


@pytest.mark.parametrize("name,f,x", DENSE, ids=[d[0] for d in DENSE])
def test_dense_real_jacobian(name, f, x):
    fd, vjp, jvp = real_jacobians(f, x)
    if not np.iscomplexobj(f(x)):  # real output: drop the (zero) rows of its imaginary part
        fd, vjp, jvp = (j[:j.shape[0] // 2] for j in (fd, vjp, jvp))
    np.testing.assert_allclose(vjp, fd, atol=1e-8)
    np.testing.assert_allclose(jvp, fd, atol=1e-8)


# ---------------------------------------------------------------- adjoints, by name
def test_fft_adjoint_is_n_ifft():
    g = XC
    back = ds.pullback(F.fft, XC)[1](g)[0]
    np.testing.assert_allclose(back, 4 * np.fft.ifft(g), rtol=1e-13)
    back = ds.pullback(lambda x: F.fft(x, norm="ortho"), XC)[1](g)[0]
    np.testing.assert_allclose(back, np.fft.ifft(g, norm="ortho"), rtol=1e-13)


def test_rfft_adjoint_halves_the_doubled_bins():
    # <rfft(x), g> = <x, rfft^H g>: the adjoint is n * irfft with bins 1..(n-1)//2 halved.
    n = 6
    g = np.arange(1.0, 5.0) + 1j * np.arange(4.0)
    back = ds.pullback(F.rfft, XR)[1](g)[0]
    w = np.array([1.0, 0.5, 0.5, 1.0])
    np.testing.assert_allclose(back, n * np.fft.irfft(w * g, n), rtol=1e-13)
    np.testing.assert_allclose(np.real(np.vdot(F.rfft(XR), g)), np.dot(XR, back), rtol=1e-13)


def test_irfft_ignores_the_imaginary_dc_and_nyquist_bins():
    back = ds.grad(lambda h: np.sum(F.irfft(h) * np.arange(4.0)))(np.ones(3, complex))
    assert back[0].imag == 0 and back[-1].imag == 0


# ---------------------------------------------------------------- dtypes, dispatch, plain
def test_single_precision_stays_single():
    x = XR.astype(np.float32)
    assert ds.grad(lambda x: np.sum(np.abs(F.fft(x)) ** 2))(x).dtype == np.float32
    assert ds.grad(lambda x: np.sum(np.abs(F.rfft(x)) ** 2))(x).dtype == np.float32
    h = XC.astype(np.complex64)
    assert ds.grad(lambda h: np.sum(F.irfft(h) ** 2))(h).dtype == np.complex64


def test_plain_calls_are_numpys():
    for name in ("fft", "ifft", "rfft", "fftn", "rfft2", "fftshift"):
        np.testing.assert_array_equal(getattr(F, name)(X2.real), getattr(np.fft, name)(X2.real))
    np.testing.assert_array_equal(F.irfft(XC, 7), np.fft.irfft(XC, 7))


def test_numpy_fft_calls_on_traced_values_dispatch():
    x = XR
    want = ds.grad(lambda x: np.sum(np.abs(F.rfft(F.fftshift(x))) ** 2))(x)
    got = ds.grad(lambda x: np.sum(np.abs(np.fft.rfft(np.fft.fftshift(x))) ** 2))(x)
    np.testing.assert_allclose(got, want, rtol=1e-15)


# ---------------------------------------------------------------- errors
def _traced(f):
    return lambda x: ds.grad(lambda x: np.sum(np.abs(f(x))))(x)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: _traced(lambda x: F.fft(x, norm="unitary"))(XR), ValueError, "norm"),
    (lambda: _traced(lambda x: F.fft(x, n=0))(XR), ValueError, "n must be a positive int"),
    (lambda: _traced(lambda x: F.fft(x, axis=3))(XR), ValueError, "axis 3 is out of range"),
    (lambda: _traced(lambda x: F.rfft(x))(XC), TypeError, "a must be real"),
    (lambda: _traced(lambda x: F.fft(x, out=np.empty(6, complex)))(XR), TypeError, "out="),
    (lambda: _traced(lambda x: F.fftn(x, s=(2, 2), axes=(0,)))(X2), ValueError,
     "s and axes must have the same length"),
    (lambda: _traced(lambda x: F.irfft(x, n=2.5))(XC), TypeError, "n must be a positive int"),
], ids=["norm", "n", "axis", "rfft-complex", "out", "s-axes", "n-type"])
def test_bad_input_raises_naming_the_argument(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
