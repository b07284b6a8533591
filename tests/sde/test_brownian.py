import numpy as np
import pytest

import sde

pytestmark = pytest.mark.kernels  # Numba kernels: the Brownian tree's bridges, the fast paths


def test_interval_same_answer_any_order():
    ts = np.sort(np.random.default_rng(0).uniform(0, 2, 40))
    pairs = list(zip(ts[:-1], ts[1:]))
    a = sde.BrownianInterval(0.0, 2.0, (3, 2), seed=5)
    fwd = [a.increment(s, t) for s, t in pairs]
    again = [a.increment(s, t) for s, t in reversed(pairs)][::-1]
    b = sde.BrownianInterval(0.0, 2.0, (3, 2), seed=5, cache_bytes=0)  # evicts constantly
    fresh = [b.increment(s, t) for s, t in reversed(pairs)][::-1]
    for x, y, z in zip(fwd, again, fresh):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, z)
    # additivity: W(s, u) = W(s, t) + W(t, u)
    np.testing.assert_allclose(a.increment(ts[0], ts[-1]), sum(fwd), atol=1e-12)
    assert not np.array_equal(fwd[0], sde.BrownianInterval(0.0, 2.0, (3, 2), seed=6)
                              .increment(*pairs[0]))


def test_interval_statistics():
    bm = sde.BrownianInterval(0.0, 1.0, (40000,), seed=1)
    cuts = [0.0, 0.3, 0.3 + 1e-3, 0.7, 1.0]
    incs = [bm.increment(s, t) for s, t in zip(cuts[:-1], cuts[1:])]
    for inc, (s, t) in zip(incs, zip(cuts[:-1], cuts[1:])):
        # variance within 4 standard errors (sd of a sample variance: sqrt(2/n))
        assert abs(inc.var() / (t - s) - 1) < 4 * np.sqrt(2 / inc.size)
        assert abs(inc.mean()) < 4 * np.sqrt((t - s) / inc.size)
    c = np.corrcoef(np.stack(incs))
    assert np.all(np.abs(c - np.eye(4)) < 4 / np.sqrt(40000))


def test_interval_validation():
    with pytest.raises(ValueError, match="t0 < t1"):
        sde.BrownianInterval(1.0, 0.0, (2,))
    bm = sde.BrownianInterval(0.0, 1.0, (2,))
    with pytest.raises(ValueError, match="outside the path's span"):
        bm.increment(0.0, 1.5)
    with pytest.raises(ValueError, match="Lévy area"):
        bm.levy_area(0.0, 0.5)
    with pytest.raises(ValueError, match="seed"):
        sde.BrownianInterval(0.0, 1.0, (2,), seed=-1)


def test_path_grid_and_bridge():
    ts = np.linspace(0, 1, 11)
    bm = sde.BrownianPath(ts, (5, 2), seed=3, levy_area=True)
    total = sum(bm.increment(a, b) for a, b in zip(ts[:-1], ts[1:]))
    np.testing.assert_allclose(total, bm.increment(0, 1), atol=1e-14)
    np.testing.assert_array_equal(bm.increment(0.13, 0.57), bm.increment(0.13, 0.57))
    assert bm.levy_area(ts[2], ts[3]).shape == (5, 2)
    with pytest.raises(ValueError, match="not one step"):
        bm.levy_area(ts[2], ts[4])
    with pytest.raises(ValueError, match="strictly increasing"):
        sde.BrownianPath([0.0, 0.0, 1.0], (2,))


def test_coarsen_keeps_the_path_and_merges_levy_areas():
    bm = sde.BrownianPath(np.linspace(0, 1, 65), (20000, 1), seed=4, levy_area=True)
    c4 = bm.coarsen(4)
    assert c4.ts.size == 17
    for a, b in [(0.0, 0.25), (0.5, 1.0), (0.125, 0.875)]:
        np.testing.assert_array_equal(c4.increment(a, b), bm.increment(a, b))
    # merging is associative: two halvings equal one quartering; stride 1 is the identity
    np.testing.assert_allclose(bm.coarsen(2).coarsen(2).levy_area(0.25, 0.3125),
                               c4.levy_area(0.25, 0.3125), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(bm.coarsen(1).levy_area(0.0, 1 / 64), bm.levy_area(0.0, 1 / 64),
                               rtol=1e-12, atol=1e-15)
    # H ~ N(0, h/12), independent of the increment
    H, dW = c4.levy_area(0.25, 0.3125), c4.increment(0.25, 0.3125)
    assert abs(np.var(H) / (0.0625 / 12) - 1) < 0.05
    assert abs(np.corrcoef(H[:, 0], dW[:, 0])[0, 1]) < 0.03
    with pytest.raises(ValueError, match="stride must be a positive int dividing the 64"):
        bm.coarsen(3)


def test_interval_refuses_increments_inside_one_leaf():
    """Two times in one finest leaf would get independent time-keyed bridges (the wrong joint
    law): the increment is refused with the resolution named; dyadic points are always fine."""
    bm = sde.BrownianInterval(0.0, 1.0, (2,), seed=1, tol=2.0**-10)
    assert bm.tol == 2.0**-10
    s = 0.3 * 2.0**-10 + 0.5
    with pytest.raises(ValueError, match=r"closer than the interval's resolution tol=0\.000977"):
        bm.increment(s, s + 0.2 * 2.0**-10)
    bm.increment(0.5, s)  # a dyadic end: exact
    bm.increment(s, s + 2.0**-10)  # adjacent leaves: exact
    with pytest.raises(ValueError, match="below brownian's resolution"):
        sde.sdeint(sde.SDE(lambda t, y, p: 0 * y, lambda t, y, p: 1 + 0 * y), np.zeros((2, 1)),
                   np.array([0.0, 0.01]), dt=2.0**-12, brownian=sde.BrownianInterval(
                       0.0, 1.0, (2, 1), tol=2.0**-10))


def test_interval_sequential_sweep_computes_each_point_once():
    """A forward sweep of off-grid steps bridges each new point once: about (depth − log2(n))
    levels plus one time bridge per step, not two descents per increment."""
    from sde import _kernels

    calls = {"descend": 0}
    real = _kernels.descend

    def counting(*args):
        calls["descend"] += 1
        return real(*args)

    bm = sde.BrownianInterval(0.0, 1.0, (2, 3), seed=2)
    ts = np.linspace(0.0, 1.0, 101)
    _kernels.descend = counting
    try:
        for a, b in zip(ts[:-1], ts[1:]):
            bm.increment(a, b)
    finally:
        _kernels.descend = real
    assert calls["descend"] <= 101  # one kernel call per new point at most
    assert len(bm._points) <= 4


def test_interval_cache_holds_only_used_rows():
    """Nodes computed by one descent share one block; an on-grid query allocates only the rows
    it walks, so the cache's memory is bounded by its entries (not by blocks kept alive)."""
    bm = sde.BrownianInterval(0.0, 1.0, (4, 8), seed=0, cache_bytes=1 << 30)
    for t in np.linspace(0.0, 1.0, 65)[1:]:
        bm.increment(0.0, t)
    bases = {id(v.base): v.base for v in bm._cache.values() if v.base is not None}
    held = sum(b.nbytes for b in bases.values())
    assert held <= len(bm._cache) * 32 * 8
