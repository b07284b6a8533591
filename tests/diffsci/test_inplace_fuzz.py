"""A property-based fuzzer for mutation: random programs of views, in-place writes,
augmented assignments through slices, ``out=``/``where=`` and writes into the argument.

Each program is a list of small integer-coded operations interpreted by :func:`run` on a
namespace of arrays.  Every decision the interpreter takes depends on shapes only, so the
program does the same thing on plain NumPy arrays and on traced ones.  It runs once in
plain NumPy (the reference, and central finite differences) and once under each transform:
reverse mode (``grad``), forward mode (``jvp``), a forward-mode Jacobian and mixed mode
(``forwarddiff`` inside ``grad``).  Every outcome must equal NumPy's value and the finite
differences, or be an :class:`~diffsci.InPlaceError`; the caller's array is never modified.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import diffsci as ds

SHAPE = (3, 4)

# Index patterns, tried in order of the code until one fits the array's shape.
INDEXES = [
    (slice(1, None),), (slice(None, None, 2),), (0,), (slice(None), 1), (Ellipsis,),
    (slice(None, -1), slice(1, None)), (-1,), (slice(None), slice(None, None, 2)),
    ([0, 2],), (slice(None), [1, 0]), (1, 2), (slice(0, 2), 0),
]
# View-making operations (each returns a view in NumPy for the arrays used here).
VIEWS = [
    lambda a: a[1:], lambda a: a.T, lambda a: a[::2], lambda a: a[..., 1:],
    lambda a: a.reshape(-1),
    lambda a: np.swapaxes(a, 0, -1), lambda a: np.expand_dims(a, 0), lambda a: a[None][0],
    lambda a: np.squeeze(a), lambda a: a.ravel(), lambda a: np.moveaxis(a, 0, -1),
    lambda a: np.diagonal(a) if a.ndim == 2 else a[:1],
]


def _fits(a, idx):
    try:
        np.empty(np.shape(a))[idx]
        return True
    except (IndexError, ValueError):
        return False


def _index(a, code):
    for k in range(len(INDEXES)):
        idx = INDEXES[(code + k) % len(INDEXES)]
        if _fits(a, idx) and np.empty(np.shape(a))[idx].size > 0:
            return idx
    return Ellipsis


def _mask(a):
    n = int(np.prod(np.shape(a)))
    return (np.arange(n) % 3 != 1).reshape(np.shape(a))


def _writable(a):
    """Writable as in NumPy (diagonals and broadcasts are read-only views)."""
    v = ds.stop_gradient(a)
    return isinstance(v, np.ndarray) and v.ndim > 0 and v.flags.writeable


def run(x, program):
    """Interpret ``program`` on ``x`` (plain or traced); returns a scalar."""
    names = [x, x * 1.0]
    for op, i, j, c in program:
        a = names[i % len(names)]
        b = names[j % len(names)]
        k = (c % 7) * 0.25 + 0.5  # a constant in [0.5, 2]
        if op == 0:  # a view
            names.append(VIEWS[c % len(VIEWS)](a))
        elif op == 1:  # a new value
            names.append(np.sin(a) * k if c % 2 else a * a + k)
        elif op == 2 and _writable(a):  # a[idx] = f(a[idx], b)
            idx = _index(a, c)
            a[idx] = np.cos(a[idx]) * k + np.reshape(b, (-1,))[0]
        elif op == 3 and _writable(a):  # augmented assignment through a slice
            idx = _index(a, c)
            v = np.reshape(b, (-1,))[j % max(np.size(b), 1)]
            if c % 3 == 0:
                a[idx] += v * k
            elif c % 3 == 1:
                a[idx] *= k
            else:
                a[idx] -= a[idx] * v
        elif op == 4 and _writable(a):  # whole-array in-place operator
            if c % 2:
                a += np.reshape(b, (-1,))[0] * k
            else:
                a *= k
        elif op == 5 and _writable(a):  # ufunc with out= (and where=)
            if c % 3 == 0:
                np.sin(a, out=a)
            elif c % 3 == 1:
                np.multiply(a, k, out=a)
            else:
                np.add(a, np.reshape(b, (-1,))[0], out=a, where=_mask(a))
        elif op == 6 and _writable(a) and np.ndim(a) >= 1:  # in-place sort
            a.sort(axis=-1)
    out = 0.0
    for n, v in enumerate(names):
        out = out + np.sum(np.sin(v * (0.3 + 0.1 * n)))
    return out


ops = st.tuples(st.integers(0, 6), st.integers(0, 20), st.integers(0, 20), st.integers(0, 50))
programs = st.lists(ops, min_size=1, max_size=8)


def _x(seed):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, SHAPE)


def _fd_grad(program, x, eps=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = eps
        g.flat[k] = (run(x + e, program) - run(x - e, program)) / (2 * eps)
    return g


def _close(a, b, what):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=what)


FUZZ = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(programs, st.integers(0, 3))
def test_reverse_mode_equals_numpy_and_finite_differences(program, seed):
    x = _x(seed)
    x0 = x.copy()
    value = run(x.copy(), program)
    try:
        v, g = ds.value_and_grad(lambda x: run(x, program))(x)
    except ds.InPlaceError:
        return
    np.testing.assert_array_equal(x, x0, err_msg="grad modified the caller's array")
    _close(v, value, "value")
    _close(g, _fd_grad(program, x0), "gradient")


@FUZZ
@given(programs, st.integers(0, 3))
def test_forward_mode_equals_numpy_and_finite_differences(program, seed):
    x = _x(seed)
    x0 = x.copy()
    u = np.random.default_rng(seed + 10).standard_normal(SHAPE)
    value = run(x.copy(), program)
    try:
        v, t = ds.jvp(lambda x: run(x, program), (x,), (u,))
    except ds.InPlaceError:
        return
    np.testing.assert_array_equal(x, x0, err_msg="jvp modified the caller's array")
    _close(v, value, "value")
    _close(t, np.sum(_fd_grad(program, x0) * u), "tangent")


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs, st.integers(0, 3))
def test_mixed_and_forward_jacobians_equal_reverse(program, seed):
    x = _x(seed)
    try:
        g = ds.grad(lambda x: run(x, program))(x)
    except ds.InPlaceError:
        return
    jf = ds.jacfwd(lambda x: run(x, program))(x)
    _close(jf, g, "jacfwd")
    gm = ds.grad(lambda x: ds.forwarddiff(lambda x: run(x, program))(x))(x)
    _close(gm, g, "forwarddiff")


# ---------------------------------------------------------------- the reproducers
def test_reproducers_from_the_review():
    x = np.array([.3, .7, 1.1, 1.9])
    x0 = x.copy()

    def f(x):
        x[0] = 2.0 * x[1]
        return np.sum(x ** 2)

    np.testing.assert_allclose(ds.grad(f)(x), [0, 7, 2.2, 3.8], rtol=1e-14)
    np.testing.assert_allclose(ds.jacfwd(f)(x), [0, 7, 2.2, 3.8], rtol=1e-14)
    np.testing.assert_array_equal(x, x0)

    def g(x):
        y = x * 1.0
        v = y[:2]
        y[0] = 5.0 * y[2]
        return np.sum(v * v)

    x3 = np.array([.3, .7, 1.1])
    assert ds.jvp(g, (x3,), (np.array([0., 0., 1.]),))[1] == pytest.approx(55.0, rel=1e-14)
    np.testing.assert_allclose(ds.grad(g)(x3), [0, 1.4, 55.0], rtol=1e-14)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs, st.integers(0, 3), st.sampled_from(["rev", "fwd"]))
def test_second_order_is_exact_or_refused(program, seed, mode):
    """Nested differentiation of a mutating program: the Hessian, or an InPlaceError."""
    x = _x(seed)
    try:
        H = ds.hessian(lambda x: run(x, program), mode=mode)(x)
    except ds.InPlaceError:
        return
    eps = 1e-5
    g = ds.grad(lambda x: run(x, program))
    fd = np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps)
                   for e in np.eye(x.size).reshape(-1, *x.shape)], axis=-1)
    np.testing.assert_allclose(H, fd.reshape(H.shape), rtol=1e-5, atol=1e-6)
