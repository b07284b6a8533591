"""``diffsci.jit`` compiled by Numba: a sample of tests/diffsci/test_jit.py's programs.

Small programs only: Numba compiles each new loop kernel and segment once (about a second
each on this machine when it is loaded; the machine code is then cached on disk under
``DIFFSCI_JIT_CACHE``).  Matrix products, slices and reductions compiled by Numba are checked
against eager mode by benchmarks/bench_jit.py (the LSTM of W3), which asserts equal numbers.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import diffsci as ds
from diffsci._jit import JitWarning, _compile
from diffsci.testing import check_grads

from .test_jit import close
from .test_paper_capabilities import taylor_sin

pytestmark = pytest.mark.kernels


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("jit-cache"))


@pytest.fixture(autouse=True)
def numba_backend(monkeypatch, cache):
    monkeypatch.setattr(_compile, "BACKEND", "numba")
    monkeypatch.setenv("DIFFSCI_JIT_CACHE", cache)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitWarning)  # every program here compiles
        yield


def test_chain_value_and_grad_compiled_equals_eager_and_closed_form():
    def f(x):
        return np.sum(np.exp(np.sin(x) * 1.01 + 0.1) ** 2)

    x = np.array([0.3, -1.2, 2.0])
    vg = ds.jit(ds.value_and_grad(f))
    close(vg(x), ds.value_and_grad(f)(x))
    e = np.exp(np.sin(x) * 1.01 + 0.1)
    close(vg(x)[1], 2 * e ** 2 * 1.01 * np.cos(x))
    spec = next(iter(vg._cache.values())).specs[0]
    assert spec.compiled.n_opaque == 0 and spec.compiled.n_segments == 1
    assert "= k_" in spec.compiled.source  # the elementwise chains are fused loop kernels
    check_grads(ds.jit(f), (x,), modes=("rev",))


def test_float32_compiled():
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    v, g = ds.jit(ds.value_and_grad(lambda x: np.sum(x * np.tanh(x))))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.tanh(x) + x / np.cosh(x) ** 2, rtol=1e-5)


def test_taylor_sin_guards_compiled():
    f = ds.jit(ds.grad(taylor_sin), static_argnames="log")
    quiet = lambda s: None  # noqa: E731
    for x in (1.0, 1.05, 0.1):
        assert f(x, log=quiet) == ds.grad(taylor_sin)(x, log=quiet)
    assert f.stats()["specializations"] == 2


def test_grad_jvp_and_hessian_of_jit_compiled():
    def f(x):
        return np.sum(np.sin(x) * x ** 2)

    x = np.array([0.3, 1.1])
    jf = ds.jit(f)
    closed = np.cos(x) * x ** 2 + 2 * x * np.sin(x)
    close(ds.grad(jf)(x), closed)
    close(ds.grad(jf)(x), ds.grad(f)(x))
    close(ds.jvp(jf, (x,), (np.ones(2),)), ds.jvp(f, (x,), (np.ones(2),)))
    hess = np.diag(-np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x))
    close(ds.hessian(jf)(x), hess, rtol=1e-10)
    close(ds.jacobian(lambda x: ds.vjp(jf, x)[1](1.0)[0])(x), hess, rtol=1e-10)
    vg = jf._derived[("vg", 0, False)]  # grad(jit(f)) is jit(value_and_grad(f))
    for d in (vg, vg._derived["vjp"], jf._derived["vjp"], jf._derived["jvp"],
              jf._derived["vjp"]._derived["vjp"]):
        spec = next(iter(d._cache.values())).specs[0]
        assert spec.compiled.n_opaque == 0  # Numba code, no NumPy fallback
