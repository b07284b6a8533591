"""diffsci.random: counter-based normals (Box–Muller pairs and the ziggurat) are deterministic and
standard normal."""

import numpy as np
from numba import njit
from scipy import stats

from diffsci.random import _ZIG_R, _ZIG_RATIO, _ZIG_X, mix64, normal, normal_pair


@njit(cache=True)
def _draw(key, n):
    out = np.empty(2 * n)
    for i in range(n):
        a, b = normal_pair(key, i)
        out[2 * i] = a
        out[2 * i + 1] = b
    return out


def _key(seed):
    return np.uint64(mix64(np.uint64(seed)))  # Numba returns a Python int: keep it unsigned


def test_same_key_and_index_same_numbers_in_any_order():
    key = _key(7)
    z = _draw(key, 1000)
    assert normal_pair(key, 999) == (z[1998], z[1999])
    np.testing.assert_array_equal(_draw(key, 1000), z)
    assert not np.array_equal(_draw(_key(8), 1000), z)


def test_moments_of_a_standard_normal():
    z = _draw(_key(123), 200_000)
    assert abs(z.mean()) < 5 / np.sqrt(z.size)
    assert abs(z.var() - 1) < 5 * np.sqrt(2 / z.size)
    assert abs(np.mean(z[::2] * z[1::2])) < 5 / np.sqrt(z.size / 2)  # the pair is independent


@njit(cache=True)
def _draw_zig(key, n):
    out = np.empty(n)
    for i in range(n):
        out[i] = normal(key, i)
    return out


def test_ziggurat_same_key_and_index_same_number_in_any_order():
    key = _key(7)
    z = _draw_zig(key, 5000)
    assert all(normal(key, i) == z[i] for i in (4999, 0, 1234, 17))
    assert not np.array_equal(_draw_zig(_key(8), 5000), z)


def test_ziggurat_is_standard_normal():
    """KS test, moments and tail masses (the base layer's tail beyond r, the wedges) against
    the exact normal law; every bound is ≥ 5 standard errors, at fixed keys."""
    z = _draw_zig(_key(123), 2_000_000)
    n = z.size
    assert stats.kstest(z, "norm").pvalue > 1e-4
    assert abs(z.mean()) < 5 / np.sqrt(n)
    assert abs(z.var() - 1) < 5 * np.sqrt(2 / n)
    assert abs(stats.kurtosis(z)) < 5 * np.sqrt(24 / n)
    assert abs(np.mean(z[:-1] * z[1:])) < 5 / np.sqrt(n)  # consecutive indices independent
    for c in (0.5, 2.0, _ZIG_R, 4.0):
        p = 2 * stats.norm.sf(c)
        assert abs(np.mean(np.abs(z) > c) - p) < 5 * np.sqrt(p * (1 - p) / n) + 1e-7, c


def test_ziggurat_tables_cover_the_density():
    """Every layer has the same area v (the rectangles x[j]·(f(x[j+1]) − f(x[j])) and the base
    strip with its tail), and the edges fall from r to 0 (the top layer has no core rectangle:
    its ratio is 0, every draw there takes the wedge test)."""
    x, ratio = _ZIG_X, _ZIG_RATIO
    f = np.exp(-0.5 * x**2)
    v = x[0] * f[1]
    areas = x[1:-1] * (f[2:] - f[1:-1])
    np.testing.assert_allclose(areas, v, rtol=1e-9)
    tail = np.sqrt(np.pi / 2) * 2 * stats.norm.sf(_ZIG_R)  # ∫_r^∞ f
    np.testing.assert_allclose(_ZIG_R * f[1] + tail, v, rtol=1e-9)
    assert np.all(np.diff(x[1:]) < 0) and x[-1] == 0 and ratio[-1] == 0
    assert np.all((0 < ratio[:-1]) & (ratio[:-1] < 1))
