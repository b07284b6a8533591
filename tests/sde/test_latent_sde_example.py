"""Smoke test of the latent-SDE gallery example's ELBO (examples/sde/04_latent_sde.py)."""

import importlib

import numpy as np

import diffsci as ds

ex = importlib.import_module("examples.sde.04_latent_sde")


def _params():
    return {"net": ds.nn.MLP.init(0, [3, 8, 1], activation="tanh"),
            "q0": np.array([0.1, np.log(0.4)]), "p0": np.array([0.0, np.log(0.5)])}


def test_neg_elbo_reversible_gradient_equals_backprop():
    t, x = ex.make_data(n=6)
    p = _params()
    v1, g1 = ds.value_and_grad(lambda q: ex.neg_elbo(q, t, x, 4, 3, adjoint="reversible"))(p)
    v2, g2 = ds.value_and_grad(lambda q: ex.neg_elbo(q, t, x, 4, 3, adjoint="backprop"))(p)
    assert np.isfinite(v1) and abs(v1 - v2) <= 1e-10 * abs(v2)
    for a, b in zip(ds.tree_leaves(g1), ds.tree_leaves(g2)):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


def test_gauss_kl_zero_at_equality_and_positive_otherwise():
    assert abs(ex.gauss_kl(0.3, -0.2, 0.3, -0.2)) < 1e-15
    assert ex.gauss_kl(0.0, 0.0, 1.0, 0.5) > 0
