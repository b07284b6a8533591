"""Your own Brownian increments: a subclass of sde.AbstractBrownian (``increment`` or torchsde's
``__call__(ta, tb)`` style) accepted by sdeint, and the Brownian motion sdeint made, returned by
``return_brownian=True``. The same increments through a user source give the built-in solution
and gradients, for every gradient method and for solvers that need Lévy area."""

import numpy as np
import pytest

import diffsci as ds
import sde

pytestmark = pytest.mark.kernels  # the built-in BrownianInterval runs Numba kernels

TS = np.array([0.0, 0.4, 1.0])
Y0 = np.array([[1.0, 0.5], [0.8, 1.2], [1.1, 0.9]])
P = np.array([0.5, 0.4])
DT = 0.05
PROB = sde.SDE(lambda t, y, p: -p[0] * y + np.sin(y[:, ::-1]),
               lambda t, y, p: p[1] * np.cos(y) + 0.1, calculus="stratonovich")


class Table(sde.AbstractBrownian):
    """Increments stored per step of a grid; a query must be a union of whole steps."""

    def __init__(self, grid, dW, H=None):
        self.grid, self.dW, self.H = np.asarray(grid), np.asarray(dW), H
        self.t0, self.t1, self.shape = float(grid[0]), float(grid[-1]), self.dW.shape[1:]
        self.has_levy_area = H is not None
        self.queries = 0

    def _index(self, t):
        i = int(np.argmin(np.abs(self.grid - t)))
        assert abs(self.grid[i] - t) < 1e-9, t
        return i

    def increment(self, s, t):
        self.queries += 1
        i, j = self._index(s), self._index(t)
        sign = 1.0 if j >= i else -1.0
        i, j = min(i, j), max(i, j)
        return sign * self.dW[i:j].sum(axis=0)

    def levy_area(self, s, t):
        i, j = self._index(s), self._index(t)
        assert j == i + 1
        return self.H[i]


class TorchStyle(sde.AbstractBrownian):
    """torchsde's BaseBrownian protocol: only ``__call__(ta, tb)``, returning a list."""

    def __init__(self, inner):
        self.inner = inner
        self.t0, self.t1, self.shape = inner.t0, inner.t1, inner.shape

    def __call__(self, ta, tb):
        return self.inner.increment(ta, tb).tolist()


def _grid():
    return np.linspace(0.0, 1.0, int(round(1.0 / DT)) + 1)


def _table_from(bm, levy=False):
    g = _grid()
    dW = np.stack([bm.increment(a, b) for a, b in zip(g[:-1], g[1:])])
    H = np.stack([bm.levy_area(a, b) for a, b in zip(g[:-1], g[1:])]) if levy else None
    return Table(g, dW, H)


@pytest.mark.parametrize("adjoint,method", [
    ("backprop", "heun"), ("checkpoint", "euler_heun"), ("reversible", "reversible_heun"),
    ("stochastic", "heun"), ("backprop", "reversible_heun"),
])
def test_user_increments_equal_the_builtin_path_values_and_gradients(adjoint, method):
    ys, bm = sde.sdeint(PROB, Y0, TS, P, method=method, dt=DT, seed=7, adjoint=adjoint,
                        return_brownian=True)
    assert isinstance(bm, sde.BrownianInterval) and bm.shape == (3, 2)
    table = _table_from(bm)
    for user in (table, TorchStyle(bm)):
        ys_user = sde.sdeint(PROB, Y0, TS, P, method=method, dt=DT, brownian=user,
                             adjoint=adjoint)
        np.testing.assert_allclose(ys_user, ys, rtol=1e-13, atol=1e-13)

        def loss(y0, p, brownian):
            return np.sum(np.sin(sde.sdeint(PROB, y0, TS, p, method=method, dt=DT,
                                            brownian=brownian, adjoint=adjoint)))
        g_ref = ds.grad(lambda y0, p: loss(y0, p, bm), argnums=(0, 1))(Y0, P)
        g_user = ds.grad(lambda y0, p: loss(y0, p, user), argnums=(0, 1))(Y0, P)
        for a, b in zip(g_user, g_ref):
            np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)
    assert table.queries > 0
    # the returned Brownian motion is the one the default solve used
    np.testing.assert_array_equal(
        sde.sdeint(PROB, Y0, TS, P, method=method, dt=DT, brownian=bm, adjoint=adjoint), ys)


def test_user_gradient_by_finite_differences():
    bm = sde.sdeint(PROB, Y0, TS, P, method="heun", dt=DT, seed=3, return_brownian=True)[1]
    table = _table_from(bm)
    from diffsci.testing import check_grads

    check_grads(lambda y0, p: np.sum(np.sin(sde.sdeint(PROB, y0, TS, p, method="heun", dt=DT,
                                                       brownian=table))), (Y0, P),
                modes=("rev", "fwd"))


def test_user_levy_area_for_sri():
    """SRI reads H from the user source: same as the BrownianPath sdeint made."""
    gbm = sde.SDE(lambda t, y, p: p[0] * y, lambda t, y, p: p[1] * y)
    ys, bm = sde.sdeint(gbm, Y0, TS, P, method="sri", dt=DT, seed=2, return_brownian=True)
    assert isinstance(bm, sde.BrownianPath) and bm.has_levy_area
    table = _table_from(bm, levy=True)
    np.testing.assert_allclose(sde.sdeint(gbm, Y0, TS, P, method="sri", dt=DT, brownian=table),
                               ys, rtol=1e-13)
    no_levy = _table_from(bm)
    with pytest.raises(ValueError, match=r"method 'sri' needs the space-time Lévy area .* "
                                         r"brownian \(Table\)"):
        sde.sdeint(gbm, Y0, TS, P, method="sri", dt=DT, brownian=no_levy)


def test_return_brownian_adaptive_is_the_interval_it_stepped_on():
    ys, bm = sde.sdeint(PROB, Y0, TS, P, method="heun", dt=0.1, adaptive=True, rtol=1e-3,
                        return_brownian=True, seed=4)
    assert isinstance(bm, sde.BrownianInterval)
    again = sde.sdeint(PROB, Y0, TS, P, method="heun", dt=0.1, adaptive=True, rtol=1e-3,
                       brownian=bm)
    np.testing.assert_array_equal(again, ys)


def test_bad_user_sources():
    bm = sde.BrownianInterval(0.0, 1.0, (3, 2), seed=0)

    class WrongShape(TorchStyle):
        def __call__(self, ta, tb):
            return np.zeros((2, 2))

    class NoSpan(sde.AbstractBrownian):
        shape = (3, 2)

        def increment(self, s, t):
            return np.zeros(self.shape)

    class Nan(TorchStyle):
        def __call__(self, ta, tb):
            return np.full((3, 2), np.nan)

    with pytest.raises(ValueError, match=r"sdeint: brownian.increment\(0.0, 0.05\) \(WrongShape"
                                         r"\) returned shape \(2, 2\), expected .* \(3, 2\)"):
        sde.sdeint(PROB, Y0, TS, P, method="heun", dt=DT, brownian=WrongShape(bm))
    with pytest.raises(TypeError, match=r"sdeint: brownian \(NoSpan\) has no attribute 't0'"):
        sde.sdeint(PROB, Y0, TS, P, method="heun", dt=DT, brownian=NoSpan())
    with pytest.raises(ValueError, match=r"\(Nan\) returned non-finite values"):
        sde.sdeint(PROB, Y0, TS, P, method="heun", dt=DT, brownian=Nan(bm))
    with pytest.raises(ValueError, match=r"adaptive=True needs brownian to be a "
                                         r"BrownianInterval .* got TorchStyle"):
        sde.sdeint(PROB, Y0, TS, P, method="heun", adaptive=True, brownian=TorchStyle(bm))
    with pytest.raises(TypeError, match="must define increment.*or __call__"):
        class Neither(sde.AbstractBrownian):
            pass
    with pytest.raises(TypeError, match=r"brownian must be an sde.AbstractBrownian"):
        sde.sdeint(PROB, Y0, TS, P, brownian=lambda s, t: 0.0)
    with pytest.raises(ValueError, match=r"sdeint: brownian spans"):
        sde.sdeint(PROB, Y0, np.array([0.0, 2.0]), P, brownian=TorchStyle(bm))
