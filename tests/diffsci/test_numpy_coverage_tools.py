"""The measuring tools of issue 13: ``tools/coverage_count.py`` (diffsci against JAX) and the
autograd shim of ``benchmarks/autograd_suite`` (autograd's API names mapped onto diffsci).

Both are checked on small cases where the right answer is known: the count's exclusion rule and
its comparison (agreement, a wrong rule caught, central differences as referee), and the shim's
operators against diffsci's own.  Neither downloads anything.
"""

from __future__ import annotations

import importlib
import os
import sys

import numpy as np
import pytest

import diffsci as ds
import diffsci.numpy as dnp

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def cc():
    pytest.importorskip("jax")
    sys.path.insert(0, os.path.join(REPO, "tools"))
    try:
        yield importlib.import_module("coverage_count")
    finally:
        sys.path.remove(os.path.join(REPO, "tools"))


def test_exclusion_rule(cc):
    import jax.numpy as jnp
    assert cc._exclusion("jax.numpy", "sin", jnp.sin) is None
    assert cc._exclusion("jax.numpy", "r_", jnp.r_) is None  # indexed with values: counted
    assert cc._exclusion("jax.numpy", "argmax", jnp.argmax) == "integer or boolean result"
    assert cc._exclusion("jax.numpy", "floor", jnp.floor) == "piecewise constant"
    assert cc._exclusion("jax.numpy", "float32", jnp.float32) == "class or dtype"
    assert cc._exclusion("jax.numpy", "pi", jnp.pi) == "not callable"
    import jax.scipy.special as js
    assert cc._exclusion("jax.scipy.special", "bessel_jn", js.bessel_jn).startswith("JAX's own")


def test_compare_agrees_and_catches_a_wrong_rule(cc):
    import jax.numpy as jnp
    x = np.array([0.3, -1.2, 2.0])
    assert cc.compare(dnp.sin, jnp.sin, (x,), 0) == "agree"
    assert cc.compare(dnp.sin, jnp.cos, (x,), 0) == "values differ"
    wrong = ds.primitive(lambda x: np.sin(x))
    ds.defvjp(wrong, lambda g, ans, x: g * np.sin(x))  # not cos: a wrong rule
    assert cc.compare(wrong, jnp.sin, (x,), 0) == "disagree"
    # JAX's gradient wrong where diffsci's is right: central differences decide
    import jax
    bad_jax = jax.custom_vjp(jnp.sin)
    bad_jax.defvjp(lambda x: (jnp.sin(x), x), lambda x, g: (g * 2.0,))
    assert cc.compare(dnp.sin, bad_jax, (x,), 0) == cc.FD_SIDE
    # complex inputs are compared as real and imaginary parts
    z = x + 0.5j
    assert cc.compare(dnp.exp, jnp.exp, (z,), 0) == "agree"


def test_every_counted_name_is_classified_and_specs_load(cc):
    specs = cc._load_specs()
    assert len(specs[("jax.numpy", "sin")]) >= 1
    assert specs[("jax.numpy", "abs")] == specs[("jax.numpy", "absolute")]  # aliases
    status, results = cc._spec_status(specs[("jax.numpy", "sin")], "jax.numpy", "sin", dnp,
                                      importlib.import_module("jax.numpy"))
    assert status == "agree", results


# ---------------------------------------------------------------- the autograd shim
@pytest.fixture(scope="module")
def ag():
    shim = os.path.join(REPO, "benchmarks", "autograd_suite", "shim")
    saved = {k: v for k, v in sys.modules.items() if k == "autograd" or k.startswith("autograd.")}
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, shim)
    try:
        mod = importlib.import_module("autograd")
        assert mod.__file__.startswith(shim)
        yield mod
    finally:
        sys.path.remove(shim)
        for k in [k for k in sys.modules if k == "autograd" or k.startswith("autograd.")]:
            del sys.modules[k]
        sys.modules.update(saved)


def test_shim_operators_are_diffsci_s(ag):
    f = lambda x, y: dnp.sum(dnp.sin(x) * y ** 2)  # noqa: E731
    x, y = np.array([0.3, 1.2]), np.array([2.0, -1.0])
    np.testing.assert_allclose(ag.grad(f)(x, y), np.cos(x) * y ** 2)
    np.testing.assert_allclose(ag.grad(f, 1)(x, y), 2 * np.sin(x) * y)
    np.testing.assert_allclose(ag.elementwise_grad(dnp.sin)(x), np.cos(x))
    np.testing.assert_allclose(ag.jacobian(dnp.sin)(x), np.diag(np.cos(x)))
    np.testing.assert_allclose(ag.hessian(lambda x: dnp.sum(x ** 3))(x), np.diag(6 * x))
    vjp, ans = ag.make_vjp(dnp.sin)(x)
    np.testing.assert_allclose(vjp(np.ones(2)), np.cos(x))
    np.testing.assert_allclose(ag.deriv(dnp.sin)(x), np.cos(x))
    assert ag.grad(f, 1).__name__ == "grad_of_<lambda>_wrt_argnum_1"


def test_shim_check_grads_catches_a_wrong_rule(ag):
    from autograd.extend import defvjp, primitive
    from autograd.test_util import check_grads
    good = primitive(lambda x: x ** 2)
    defvjp(good, lambda ans, x: lambda g: 2 * x * g)
    check_grads(good, modes=["rev"], order=1)(np.array([0.5, 1.5]))
    bad = primitive(lambda x: x ** 2)
    defvjp(bad, lambda ans, x: lambda g: 3 * x * g)
    with pytest.raises(AssertionError):
        check_grads(bad, modes=["rev"], order=1)(np.array([0.5, 1.5]))
