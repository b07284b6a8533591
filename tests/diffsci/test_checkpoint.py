"""checkpoint and checkpointed_loop: gradients equal the un-checkpointed ones, memory drops,
the binomial schedule is revolve-optimal, and both compose with nesting."""

import gc
import itertools
import tracemalloc
from collections import namedtuple
from functools import cache

import numpy as np
import pytest

import diffsci as ds
from diffsci._checkpoint import (
    LoopStats,
    _Action,
    _schedule,
    _split,
    checkpoint,
    checkpointed_loop,
    min_advances,
)
from diffsci.testing import check_grads

RNG = np.random.default_rng(0)


def _block(x, w):
    """A small nonlinear block with several intermediates."""
    for _ in range(4):
        x = np.tanh(x * w + 0.3) + 0.1 * np.sin(x)
    return x


def _held_bytes(fn, *args):
    """Bytes held by ``ds.pullback(fn, *args)``'s result (tape + residuals + output)."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = ds.pullback(fn, *args)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    return held, result


# ---------------------------------------------------------------------------
# checkpoint
# ---------------------------------------------------------------------------
def test_checkpoint_gradients_equal_plain():
    x = RNG.standard_normal(5)
    w = 0.7
    ck = checkpoint(_block)
    np.testing.assert_array_equal(ck(x, w), _block(x, w))  # no tracers: f itself
    for argnums in (0, 1, (0, 1)):
        g_ck = ds.grad(lambda x, w: np.sum(ck(x, w) ** 2), argnums=argnums)(x, w)
        g_pl = ds.grad(lambda x, w: np.sum(_block(x, w) ** 2), argnums=argnums)(x, w)
        for a, b in zip(ds.tree_leaves(g_ck), ds.tree_leaves(g_pl)):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    check_grads(ck, (x, w), order=1)


def test_checkpoint_second_order():
    # grad of grad: the checkpoint's backward pass runs under the outer trace.
    f = lambda x: np.sum(np.sin(x) ** 2 * x)
    x = np.array([0.3, -1.1, 0.8])
    outers = [  # the function to differentiate twice, given f
        lambda f: lambda x: f(x),
        lambda f: lambda x: f(x) ** 2,  # the inner backward uses f's (traced) output
        lambda f: lambda x: f(np.cos(x)) * np.sum(x),
    ]
    for outer in outers:
        hv = []
        for g in (checkpoint(f), f):
            o = outer(g)
            hv.append(ds.grad(lambda x: np.sum(ds.grad(o)(x) ** 2))(x))
        np.testing.assert_allclose(hv[0], hv[1], rtol=1e-12)
    check_grads(lambda x: checkpoint(_block)(x, 0.9), (x,), order=2)
    # third order, scalar: d³/dx³ of sin(x)·x through a checkpoint
    d3 = ds.grad(ds.grad(ds.grad(checkpoint(lambda x: np.sin(x) * x))))(0.4)
    np.testing.assert_allclose(d3, -3 * np.sin(0.4) - 0.4 * np.cos(0.4), rtol=1e-12)


def test_checkpoint_side_effects_run_twice_under_differentiation():
    calls = []

    def f(x):
        calls.append("f")
        return np.exp(x)

    ck = checkpoint(f)
    ck(1.0)
    assert calls == ["f"]  # plain call: once
    calls.clear()
    g = ds.grad(ck)(1.0)
    assert g == pytest.approx(np.e)
    assert calls == ["f", "f"]  # forward (untraced) + recomputation in the backward pass
    calls.clear()
    y, back = ds.pullback(ck, 1.0)
    assert calls == ["f"]
    back(1.0)
    back(2.0)  # back may be called again: f re-runs each time
    assert calls == ["f", "f", "f"]


def test_checkpoint_pytrees_ints_and_static_kwargs():
    Pt = namedtuple("Pt", "x y")

    def f(p, d, *, scale):
        assert isinstance(d["n"], int)  # integer leaves reach f unchanged
        z = np.sin(p.x) * p.y * d["w"] ** d["n"] * scale
        return {"z": z, "n": d["n"] + 1, "pair": (p.y * 2.0, "tag")}

    ck = checkpoint(f)
    p = Pt(np.array([0.2, 0.5]), 1.3)
    d = {"w": 0.8, "n": 3}

    def loss(fn):
        return lambda p, d: np.sum(fn(p, d, scale=2.0)["z"]) + fn(p, d, scale=2.0)["pair"][0]

    out = ck(p, d, scale=2.0)
    assert out["n"] == 4 and out["pair"][1] == "tag"
    gp_ck = ds.grad(loss(ck))(p, d)
    gp_pl = ds.grad(loss(f))(p, d)
    assert isinstance(gp_ck, Pt)
    np.testing.assert_allclose(gp_ck.x, gp_pl.x, rtol=1e-14)
    np.testing.assert_allclose(gp_ck.y, gp_pl.y, rtol=1e-14)
    # the int leaf passes through; grad w.r.t. the float leaf of d only
    gw = ds.grad(lambda w: loss(ck)(p, {"w": w, "n": 3}))(0.8)
    gw_pl = ds.grad(lambda w: loss(f)(p, {"w": w, "n": 3}))(0.8)
    assert gw == pytest.approx(gw_pl, rel=1e-14)
    # the output's int leaf stays a plain int under tracing
    y, _ = ds.pullback(lambda p: ck(p, d, scale=1.0), p)
    assert y["n"] == 4


def test_nested_checkpoints():
    calls = {"inner": 0, "outer": 0}

    def inner(x):
        calls["inner"] += 1
        return np.sin(x) * x

    def outer(x):
        calls["outer"] += 1
        return checkpoint(inner)(x) ** 2 + checkpoint(inner)(2 * x)

    ck = checkpoint(outer)
    ref = lambda x: (np.sin(x) * x) ** 2 + np.sin(2 * x) * 2 * x
    x = np.array([0.4, 1.7])
    g = ds.grad(lambda x: np.sum(ck(x)))(x)
    np.testing.assert_allclose(g, ds.grad(lambda x: np.sum(ref(x)))(x), rtol=1e-13)
    # outer: forward + recomputation; inner (two call sites): forward, outer's
    # recomputation (untraced inner forward), inner's own recomputation.
    assert calls == {"outer": 2, "inner": 6}
    check_grads(ck, (x,), order=2)


def test_checkpoint_memory_held_between_passes_drops():
    def f(x):
        for _ in range(50):
            x = np.sin(x) * 1.01  # 50+ intermediates of 1e5 float64 each (800 kB)
        return x

    x = RNG.standard_normal(100_000)
    held_plain, (y_plain, back_plain) = _held_bytes(f, x)
    held_ck, (y_ck, back_ck) = _held_bytes(checkpoint(f), x)
    assert held_plain > 40 * x.nbytes  # the plain tape keeps the intermediates
    assert held_ck < held_plain / 5, (held_ck, held_plain)
    assert held_ck < 4 * x.nbytes  # inputs + outputs only
    np.testing.assert_array_equal(y_ck, y_plain)
    v = RNG.standard_normal(x.shape)
    np.testing.assert_allclose(back_ck(v)[0], back_plain(v)[0], rtol=1e-12)


def test_checkpoint_rejects_captured_traced_values_and_non_callables():
    with pytest.raises(TypeError, match="callable"):
        checkpoint(3.0)
    # p reaches f through a closure while x is traced at the same level: the
    # gradient through p would be lost, so it is an error, not a wrong number.
    with pytest.raises(ValueError, match="closes over"):
        ds.grad(lambda p: checkpoint(lambda x: x * p)(p))(2.0)
    # a closure over a value that is *not* differentiated is fine
    c = 3.0
    assert ds.grad(lambda x: checkpoint(lambda x: x * c)(x))(2.0) == pytest.approx(3.0)
    # only closed-over values are traced (checkpoint inputs are constants): plain recording
    assert ds.grad(lambda p: checkpoint(lambda x: x * p)(2.0))(5.0) == pytest.approx(2.0)


def test_checkpoint_and_loop_under_forward_mode_and_hessian():
    if not (hasattr(ds, "jvp") and hasattr(ds, "hessian")):
        pytest.skip("forward mode not exported yet")
    f = lambda x: np.sin(x) * np.exp(x)
    x, t = np.array([0.1, 0.9]), np.array([1.0, -2.0])
    y, yt = ds.jvp(checkpoint(f), (x,), (t,))
    y0, yt0 = ds.jvp(f, (x,), (t,))
    np.testing.assert_allclose(y, y0)
    np.testing.assert_allclose(yt, yt0, rtol=1e-12)
    s = lambda x: np.sum(f(x) ** 2)
    np.testing.assert_allclose(ds.hessian(checkpoint(s))(x), ds.hessian(s)(x), rtol=1e-12)
    # the loop: JVP through the custom_vjp, Hessian as forward over reverse
    ck = lambda u, a: checkpointed_loop(_step, u, 13, 3, (a, 0.1))
    pl = lambda u, a: _plain_loop(_step, u, 13, (a, 0.1))
    u, du = (x, 2 * x), (t, -t)
    for p_, q_ in zip(ds.tree_leaves(ds.jvp(ck, (u, 0.7), (du, 0.3))),
                      ds.tree_leaves(ds.jvp(pl, (u, 0.7), (du, 0.3)))):
        np.testing.assert_allclose(p_, q_, rtol=1e-12)
    L = lambda loop: lambda q: np.sum(loop((q, q), 0.7)[0] ** 2)
    np.testing.assert_allclose(ds.hessian(L(ck))(x), ds.hessian(L(pl))(x), rtol=1e-11)


# ---------------------------------------------------------------------------
# The binomial schedule
# ---------------------------------------------------------------------------
@cache
def _dp_min_advances(l, c):
    """Brute-force minimum over every first-snapshot position (eq. C4's recursion)."""
    if l <= 1:
        return 0
    if c == 1:
        return l * (l - 1) // 2
    return min(m + _dp_min_advances(l - m, c - 1) + _dp_min_advances(m, c) for m in range(1, l))


def _dry_run(n, k):
    """Execute the schedule symbolically: advances, reversals, peak snapshots."""
    stored = {0}
    pos, advances, peak, reversed_ = 0, 0, 1, []
    for act, p in _schedule(0, n, k):
        if act is _Action.RESTORE:
            assert p in stored
            pos = p
        elif act is _Action.ADVANCE:
            assert p > pos
            advances += p - pos
            pos = p
        elif act is _Action.STORE:
            assert pos == p and p not in stored
            stored.add(p)
            peak = max(peak, len(stored))
        elif act is _Action.FREE:
            stored.remove(p)
        else:
            assert pos == p
            reversed_.append(p)
    return advances, reversed_, peak


def test_closed_form_matches_brute_force():
    for l, c in itertools.product(range(0, 80), range(1, 6)):
        assert min_advances(l, c) == _dp_min_advances(l, c), (l, c)
    # textbook values: k = 1 is quadratic, k >= n - 1 stores every carry
    assert min_advances(10, 1) == 45 and min_advances(10, 9) == 9 and min_advances(10, 100) == 9


def test_split_interval_is_exactly_the_set_of_minimisers():
    # eq. (C5): the closed-form interval of optimal first-snapshot distances
    for l, c in itertools.product(range(2, 120), range(2, 7)):
        cost = {j: j + _dp_min_advances(j, c) + _dp_min_advances(l - j, c - 1)
                for j in range(1, l)}
        best = min(cost.values())
        optimal = [j for j, v in cost.items() if v == best]
        r = LoopStats(l, c).repetitions
        lo = max(1, _binom(c, r - 2), l - _binom(c - 1, r))
        hi = min(l - 1, _binom(c, r - 1), l - _binom(c - 1, r - 1))
        assert optimal == list(range(lo, hi + 1)), (l, c)
        assert _split(l, c) == hi


@pytest.mark.parametrize("k", [1, 2, 3, 5, 10])
def test_schedule_is_valid_and_revolve_optimal(k):
    for n in list(range(0, 60)) + [100, 211, 1000]:
        if k == 1 and n > 100:
            continue
        advances, reversed_, peak = _dry_run(n, k)
        assert reversed_ == list(range(n - 1, -1, -1))  # every step once, last first
        assert advances == min_advances(n, k), (n, k)
        assert peak <= k


# ---------------------------------------------------------------------------
# checkpointed_loop
# ---------------------------------------------------------------------------
def _step(u, a, b):
    """A damped nonlinear oscillator chain: differentiable in u, a and b."""
    q, p = u
    return (q + 0.1 * p, p - 0.1 * (a * np.sin(q) + b * p))


def _plain_loop(step, carry, n, args):
    for _ in range(n):
        carry = step(carry, *args)
    return carry


def _loss(loop):
    def loss(u0, a, b):
        q, p = loop(u0, a, b)
        return np.sum(q ** 2) + np.sum(np.cos(p))

    return loss


U0 = (RNG.standard_normal(4), RNG.standard_normal(4))
A, B = 1.3, RNG.uniform(0.1, 0.3, 4)


@pytest.mark.parametrize("n,k", [(0, 1), (0, 3), (1, 1), (1, 4), (2, 1), (7, 1), (7, 2),
                                 (20, 3), (20, 20), (20, 50), (37, 4), (64, 6)])
def test_loop_gradients_equal_plain_loop(n, k):
    ck = _loss(lambda u, a, b: checkpointed_loop(_step, u, n, k, (a, b)))
    pl = _loss(lambda u, a, b: _plain_loop(_step, u, n, (a, b)))
    g_ck = ds.grad(ck, argnums=(0, 1, 2))(U0, A, B)
    g_pl = ds.grad(pl, argnums=(0, 1, 2))(U0, A, B)
    for x, y in zip(ds.tree_leaves(g_ck), ds.tree_leaves(g_pl)):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n,k", [(1, 1), (10, 1), (10, 2), (50, 3), (100, 5), (300, 10),
                                 (30, 30)])
def test_loop_stats_within_revolve_bound(n, k):
    y, back = ds.pullback(
        lambda u, a, b: checkpointed_loop(_step, u, n, k, (a, b), return_stats=True),
        U0, A, B)
    (q, p), stats = y
    assert isinstance(stats, LoopStats)
    assert stats.taped == 1 and stats.max_stored <= k  # the forward pass tapes step n-1 only
    back(((np.ones(4), np.ones(4)), stats))
    assert stats.max_stored <= k
    assert stats.taped == n  # each step taped once
    assert stats.advances == stats.advance_bound == min_advances(n, k)
    r = stats.repetitions
    assert stats.advances == r * n - _binom(k + 1, r - 1)  # eq. (C3)
    assert stats.step_evaluations == n + stats.advance_bound


def _binom(c, r):
    from math import comb

    return comb(c + r, c) if r >= 0 else 0


def test_loop_forward_only_is_the_plain_loop():
    out, stats = checkpointed_loop(_step, U0, 25, 3, (A, B), return_stats=True)
    ref = _plain_loop(_step, U0, 25, (A, B))
    np.testing.assert_array_equal(out[0], ref[0])
    np.testing.assert_array_equal(out[1], ref[1])
    assert stats.advances == 25 and stats.taped == 0 and stats.max_stored == 0
    assert checkpointed_loop(_step, U0, 0, 3, (A, B)) is U0


def test_loop_pytree_carry_with_int_leaf_and_pytree_args():
    State = namedtuple("State", "x v count")

    def step(s, params):
        acc = -params["k"] * s.x - params["c"] * s.v ** 3
        return State(s.x + 0.05 * s.v, s.v + 0.05 * acc, s.count + 1)

    s0 = State(np.array([1.0, 0.5]), np.array([0.0, -0.2]), 0)
    params = {"k": np.array([2.0, 3.0]), "c": 0.4}

    def loss(loop):
        def f(x0, params):
            s = loop(State(x0, s0.v, 0), params)
            assert int(s.count) == 40
            return np.sum(s.x ** 2 + s.v)
        return f

    ck = loss(lambda s, p: checkpointed_loop(step, s, 40, 4, (p,)))
    pl = loss(lambda s, p: _plain_loop(step, s, 40, (p,)))
    gx_ck, gp_ck = ds.grad(ck, argnums=(0, 1))(s0.x, params)
    gx_pl, gp_pl = ds.grad(pl, argnums=(0, 1))(s0.x, params)
    np.testing.assert_allclose(gx_ck, gx_pl, rtol=1e-12)
    assert set(gp_ck) == {"k", "c"}
    np.testing.assert_allclose(gp_ck["k"], gp_pl["k"], rtol=1e-12)
    np.testing.assert_allclose(gp_ck["c"], gp_pl["c"], rtol=1e-12)
    # differentiating the whole state (int leaf included) through pullback
    y, back = ds.pullback(lambda x, v: checkpointed_loop(step, State(x, v, 0), 40, 4, (params,)),
                          s0.x, s0.v)
    assert y.count == 40
    gx, gv = back(State(np.ones(2), np.ones(2), np.zeros((), int)))
    y2, back2 = ds.pullback(lambda x, v: _plain_loop(step, State(x, v, 0), 40, (params,)),
                            s0.x, s0.v)
    gx2, gv2 = back2(State(np.ones(2), np.ones(2), np.zeros((), int)))
    np.testing.assert_allclose(gx, gx2, rtol=1e-12)
    np.testing.assert_allclose(gv, gv2, rtol=1e-12)


def test_loop_check_grads():
    x0 = (np.array([0.3, -0.4]), np.array([0.1, 0.2]))
    f = lambda u, a, b: checkpointed_loop(_step, u, 9, 2, (a, b))
    check_grads(f, (x0, 0.8, np.array([0.2, 0.1])), order=1)
    check_grads(lambda u, a: checkpointed_loop(_step, u, 5, 2, (a, 0.1)), (x0, 0.8), order=2)


def test_loop_composes_with_outer_functions_and_second_order():
    def outer(loop):
        def f(theta):
            u0 = (np.sin(theta), np.cos(theta) * 0.5)  # before the loop
            q, p = loop(u0, np.sum(theta ** 2), 0.2 * theta)
            return np.sum(np.tanh(q) * p) + np.sum(theta * q)  # after the loop
        return f

    ck = outer(lambda u, a, b: checkpointed_loop(_step, u, 23, 3, (a, b)))
    pl = outer(lambda u, a, b: _plain_loop(_step, u, 23, (a, b)))
    th = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(ds.grad(ck)(th), ds.grad(pl)(th), rtol=1e-12)
    # grad of grad (Hessian-vector product via reverse over reverse)
    v = np.array([1.0, 0.5, -2.0])
    hv_ck = ds.grad(lambda t: np.sum(ds.grad(ck)(t) * v))(th)
    hv_pl = ds.grad(lambda t: np.sum(ds.grad(pl)(t) * v))(th)
    np.testing.assert_allclose(hv_ck, hv_pl, rtol=1e-11)
    # the cotangent traced but the loop's inputs not: grad w.r.t. a weight on the output
    w_ck = ds.grad(lambda w: np.sum(ds.grad(
        lambda t: w * np.sum(checkpointed_loop(_step, (t, t), 8, 2, (1.0, 0.1))[0]))(th)))(2.0)
    w_pl = ds.grad(lambda w: np.sum(ds.grad(
        lambda t: w * np.sum(_plain_loop(_step, (t, t), 8, (1.0, 0.1))[0]))(th)))(2.0)
    assert w_ck == pytest.approx(w_pl, rel=1e-12)


def test_loop_with_checkpointed_step_and_repeated_back():
    step = checkpoint(lambda u, a, b: _step(u, a, b))
    y, back = ds.pullback(lambda u, a: checkpointed_loop(step, u, 15, 3, (a, B)), U0, A)
    y2, back2 = ds.pullback(lambda u, a: _plain_loop(_step, u, 15, (a, B)), U0, A)
    ybar = (np.ones(4), -np.ones(4))
    for _ in range(2):  # back can be called again: the snapshots are not consumed
        g, g2 = back(ybar), back2(ybar)
        for x, z in zip(ds.tree_leaves(g), ds.tree_leaves(g2)):
            np.testing.assert_allclose(x, z, rtol=1e-12)


def test_loop_memory_held_between_passes_drops():
    def step(u, a):
        return u + 0.01 * (np.roll(u, 1) - 2 * u + np.roll(u, -1)) - 0.01 * a * u ** 3

    u0 = RNG.standard_normal(20_000)
    held_plain, _ = _held_bytes(lambda u: _plain_loop(step, u, 100, (0.5,)), u0)
    held_ck, (_, back) = _held_bytes(lambda u: checkpointed_loop(step, u, 100, 4, (0.5,)), u0)
    assert held_ck < held_plain / 5, (held_ck, held_plain)
    # ≤ 4 snapshots + one step's tape + the output + the pullback's private copy of u0
    assert held_ck < 17 * u0.nbytes
    g = back(np.ones_like(u0))[0]
    g_pl = ds.pullback(lambda u: _plain_loop(step, u, 100, (0.5,)), u0)[1](np.ones_like(u0))[0]
    np.testing.assert_allclose(g, g_pl, rtol=1e-12)


def test_loop_validation_errors_name_the_argument():
    with pytest.raises(TypeError, match="step must be callable"):
        checkpointed_loop(3, 1.0, 2, 1)
    with pytest.raises(ValueError, match=r"n \(the number of steps\) must be >= 0"):
        checkpointed_loop(np.sin, 1.0, -1, 2)
    for bad in (2.0, True, "3"):
        with pytest.raises(TypeError, match="n .* must be an int"):
            checkpointed_loop(np.sin, 1.0, bad, 2)
    with pytest.raises(ValueError, match="snapshots .* must be >= 1"):
        checkpointed_loop(np.sin, 1.0, 3, 0)
    with pytest.raises(TypeError, match="snapshots .* must be an int"):
        checkpointed_loop(np.sin, 1.0, 3, 2.5)
    with pytest.raises(TypeError, match="args must be a tuple"):
        checkpointed_loop(lambda c, a: c * a, 1.0, 3, 2, args=2.0)
    assert checkpointed_loop(np.sin, 1.0, np.int64(2), np.int32(1)) == np.sin(np.sin(1.0))
    with pytest.raises(TypeError, match="same structure and leaf shapes"):
        ds.grad(lambda x: np.sum(checkpointed_loop(lambda c: np.append(c, 1.0), x, 3, 2)))(
            np.ones(2))
    with pytest.raises(ValueError, match="closes over"):
        ds.grad(lambda p: np.sum(checkpointed_loop(lambda c: c * p, p, 3, 2)))(2.0)
