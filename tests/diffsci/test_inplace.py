"""In-place writes on traced arrays (issue #3 §4): x[idx] = v, x += y, out=, undo log, lineage."""

import numpy as np
import pytest

import diffsci as ds
from diffsci._inplace import InPlaceError
from diffsci.testing import check_grads

X = np.array([0.3, 1.2, -0.5, 2.0])


def buffer_loop(x):
    out = np.zeros_like(x)  # traced buffer for traced x
    for i in range(len(x)):
        out[i] = np.sin(x[i]) * x[i]
    return np.sum(out**2)


def functional(x):
    return np.sum((np.sin(x) * x) ** 2)


def test_buffer_filling_loop_equals_functional_version():
    np.testing.assert_allclose(ds.grad(buffer_loop)(X), ds.grad(functional)(X), rtol=1e-14)
    check_grads(buffer_loop, (X,))


def test_inplace_operators_and_saved_values_overwritten_later():
    def f(x):
        y = x * 2
        a = np.sin(y)  # saves y for its backward pass ...
        y += 1.0  # ... which is then overwritten in place
        y *= y
        y -= x
        y /= 3.0
        return np.sum(a * y)

    def g(x):
        y = x * 2
        a = np.sin(y)
        y = ((y + 1.0) * (y + 1.0) - x) / 3.0
        return np.sum(a * y)

    np.testing.assert_allclose(ds.grad(f)(X), ds.grad(g)(X), rtol=1e-14)
    check_grads(f, (X,))


def test_aliases_see_the_write_as_in_numpy():
    def f(x):
        y = x * 1.0
        alias = y
        y += 1.0
        return np.sum(alias)  # numpy semantics: alias is y, so it includes the + 1

    assert ds.value_and_grad(f)(X)[0] == pytest.approx(np.sum(X + 1))


def test_gradients_to_overwritten_array_and_written_values():
    def f(x, v):
        y = x * 1.0
        y[1:3] = v * v  # basic slice
        y[np.array([0, 0, 3])] = v[0] * np.array([1.0, 2.0, 3.0])  # advanced, duplicates
        y[y > 10] = 0.0  # boolean mask (none here)
        return np.sum(y * np.arange(1.0, 5.0))

    v = np.array([0.7, -1.1])
    gx, gv = ds.grad(f, argnums=(0, 1))(X, v)
    np.testing.assert_array_equal(gx, [0, 0, 0, 0])  # every entry of x was overwritten
    # y = [2 v0, v0^2, v1^2, 3 v0] (last duplicate wins) weighted by 1..4
    np.testing.assert_allclose(gv, [2 * 1 + 2 * v[0] * 2 + 3 * 4, 2 * v[1] * 3])
    check_grads(f, (X, v), modes=("rev",))


def test_out_argument_of_ufuncs():
    def f(x):
        buf = np.empty_like(x)
        np.exp(x, out=buf)
        np.multiply(buf, x, out=buf)
        return np.sum(buf)

    np.testing.assert_allclose(ds.grad(f)(X), np.exp(X) * (1 + X))
    with pytest.raises(TypeError, match="out="):
        ds.grad(lambda x: np.sum(np.exp(x, out=np.empty(4))))(X)


def test_writes_restore_memory_after_backward_and_back_is_reusable():
    def f(x):
        y = np.ones_like(x)
        y *= x
        z = np.sin(y)
        y[0] = 100.0
        return z, y

    (z, y), back = ds.pullback(f, X)
    assert y[0] == 100.0
    g1 = back((np.ones(4), np.zeros(4)))[0]
    g2 = back((np.ones(4), np.zeros(4)))[0]
    np.testing.assert_allclose(g1, np.cos(X))
    np.testing.assert_array_equal(g1, g2)
    assert y[0] == 100.0  # the forward's final memory is back in place


def test_write_into_plain_array_is_a_clear_error():
    def f(x):
        out = np.zeros(4)  # plain: cannot hold traced values
        out[0] = x[0]
        return np.sum(out)

    # NumPy re-raises our TypeError as "setting an array element with a sequence"; the
    # traceback shows ours first, naming the fix.
    with pytest.raises((TypeError, ValueError)) as e:
        ds.grad(f)(X)
    chain = [e.value, e.value.__context__, e.value.__cause__]
    assert any("zeros_like" in str(c) for c in chain if c is not None)


def test_stale_view_after_write_to_base_is_exact():
    # row is a view of M taken before the write: NumPy's row sees the new value, and so does
    # its gradient (the backward pass splits row's cotangent between M and the written value).
    def f(x):
        M = np.ones_like(np.stack([x, x]))
        row = M[0]
        M[0, 1] = x[0] * 5
        return np.sum(row * x)

    def functional(x):
        row = np.stack([1.0, x[0] * 5, 1.0, 1.0])
        return np.sum(row * x)

    assert ds.grad(f)(X) == pytest.approx(ds.grad(functional)(X), rel=1e-14)
    check_grads(f, (X,))


def test_write_through_view_then_use_base_is_exact():
    def f(x):
        M = np.ones_like(np.stack([x, x]))
        M[0][1] = x[0]  # writes through a temporary view: M sees it, as in NumPy
        return np.sum(M * M)

    assert ds.grad(f)(X) == pytest.approx([2 * X[0], 0, 0, 0], rel=1e-14)
    check_grads(f, (X,))


def test_view_of_another_dtype_is_refused():
    def f(z):
        w = z * 1.0
        re = w.real  # a float view into complex memory
        w[0] = 3.0 * z[1]
        return np.sum(re * re)

    with pytest.raises(InPlaceError, match="another dtype"):
        ds.grad(f)(np.array([1.0 + 2j, 0.5 - 1j]))


def test_disjoint_view_is_fine():
    def f(x):
        M = np.ones_like(np.stack([x, x]))
        row = M[0]
        M[1, 1] = x[0] * 5
        return np.sum(row * x) + np.sum(M)

    check_grads(f, (X,))


def test_mutation_under_jvp():
    y, t = ds.jvp(buffer_loop, (X,), (np.ones(4),))
    y2, t2 = ds.jvp(functional, (X,), (np.ones(4),))
    assert y == pytest.approx(y2) and t == pytest.approx(t2)

    def g(x):
        b = np.zeros_like(x)
        b[1:] = x[:-1] ** 2
        b += x
        return b

    np.testing.assert_allclose(ds.jacfwd(g)(X), ds.jacrev(g)(X))


def test_nested_mutation_is_refused_clearly():
    with pytest.raises(TypeError, match="several levels"):
        ds.grad(ds.grad(buffer_loop_scalar))(0.3)


def buffer_loop_scalar(s):
    b = np.zeros_like(np.stack([s, s]))
    b[0] = s * s
    return np.sum(b)


def test_mutation_inside_checkpoint():
    def inner(x):
        out = np.zeros_like(x)
        for i in range(len(x)):
            out[i] = np.sin(x[i]) * x[i]
        out *= 2.0
        return out

    g_ck = ds.grad(lambda x: np.sum(ds.checkpoint(inner)(x) ** 2))(X)
    g_plain = ds.grad(lambda x: np.sum(inner(x) ** 2))(X)
    np.testing.assert_allclose(g_ck, g_plain, rtol=1e-14)


def test_checkpointed_function_that_mutates_its_input_is_refused():
    def inner(x):
        x[0] = 7.0 * x[1]  # writes into the saved input: the recomputation would differ
        return x * x

    with pytest.raises(ValueError, match="modified its argument in place"):
        ds.grad(lambda x: np.sum(ds.checkpoint(inner)(x * 1.0)))(X)

    def step(c):
        c += 0.1 * np.sin(c)  # in-place update of the carry
        return c

    with pytest.raises(ValueError, match="in-place update"):
        ds.grad(lambda x: np.sum(ds.checkpointed_loop(step, x * 1.0, 10, snapshots=3)))(X)
