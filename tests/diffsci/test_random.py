"""diffsci.random: counter-based normals are deterministic and standard normal."""

import numpy as np
from numba import njit

from diffsci.random import mix64, normal_pair


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
