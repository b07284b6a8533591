"""Bad input at the boundary, as a table: each row names the call, the exception and the key
parts of its message (function, argument, what was expected, what came). Then the accepted
spellings: lists and tuples as arrays, ints as floats, enum strings in any case."""

import numpy as np
import pytest

import diffsci as ds
import sde
from sde import _ops

pytestmark = pytest.mark.kernels  # the fast-path rows run the Numba kernels

GBM = sde.SDE(lambda t, y, p: p[0] * y, lambda t, y, p: p[1] * y)
Y0 = np.ones((3, 2))
TS = np.array([0.0, 0.5, 1.0])
P = np.array([0.5, 0.2])
DW = np.random.default_rng(0).normal(0, 0.1, (3, 10))


def run(**kw):
    args = dict(sde=GBM, y0=Y0, ts=TS, params=P, dt=0.1)
    args.update(kw)
    return sde.sdeint(args.pop("sde"), args.pop("y0"), args.pop("ts"), args.pop("params"),
                      **args)


def ou(**kw):
    args = dict(y0=np.zeros(3), theta=2.0, mu=1.0, sigma=0.3, dt=0.01, dW=DW)
    args.update(kw)
    return _ops.ou_paths(**args)


NAN_Y0 = Y0.copy()
NAN_Y0[1, 0] = np.nan

BAD = [  # (id, call, exception, key parts of the message)
    ("y0 NaN", lambda: run(y0=NAN_Y0), ValueError,
     ["sdeint: y0 has non-finite entries", "index (1, 0)"]),
    ("y0 inf", lambda: run(y0=np.full((2, 2), np.inf)), ValueError, ["sdeint: y0", "non-finite"]),
    ("y0 bool", lambda: run(y0=np.ones((2, 2), bool)), TypeError,
     ["sdeint: y0 must be a real", "got bool"]),
    ("y0 complex", lambda: run(y0=np.ones((2, 2), complex)), TypeError,
     ["sdeint: y0 must be a real", "complex"]),
    ("y0 ragged", lambda: run(y0=[[1.0, 2.0], [1.0]]), ValueError, ["sdeint: y0 must be a real"]),
    ("y0 3-D", lambda: run(y0=np.ones((2, 2, 2))), ValueError,
     ["sdeint: y0 must have shape (batch, d) or (d,)", "(2, 2, 2)"]),
    ("y0 empty", lambda: run(y0=np.ones((0, 2))), ValueError, ["sdeint: y0", "(0, 2)"]),
    ("ts NaN", lambda: run(ts=[0.0, np.nan, 1.0]), ValueError, ["sdeint: ts has non-finite"]),
    ("ts bool", lambda: run(ts=[False, True]), TypeError, ["sdeint: ts must be a real", "bool"]),
    ("ts decreasing", lambda: run(ts=[0.0, 1.0, 0.5]), ValueError,
     ["sdeint: ts must be a strictly increasing"]),
    ("ts one time", lambda: run(ts=[0.0]), ValueError, ["sdeint: ts must be", "at least 2"]),
    ("ts traced", lambda: ds.grad(lambda t1: np.sum(run(ts=np.stack([0.0 * t1, t1]))))(1.0),
     TypeError, ["sdeint: ts is not differentiable", "traced"]),
    ("dt bool", lambda: run(dt=True), ValueError, ["sdeint: dt must be a finite number > 0",
                                                   "bool True"]),
    ("dt NaN", lambda: run(dt=float("nan")), ValueError, ["sdeint: dt must be a finite"]),
    ("dt inf", lambda: run(dt=float("inf")), ValueError, ["sdeint: dt must be a finite"]),
    ("dt negative", lambda: run(dt=-0.1), ValueError, ["sdeint: dt must be", "-0.1"]),
    ("dt string", lambda: run(dt="0.1"), ValueError, ["sdeint: dt must be", "str '0.1'"]),
    ("dt traced", lambda: ds.grad(lambda h: np.sum(run(dt=h)))(0.1), TypeError,
     ["sdeint: dt is not differentiable"]),
    ("params NaN", lambda: run(params=(0.5, np.array([np.nan]))), ValueError,
     ["sdeint: params leaf 1", "non-finite"]),
    ("params bool", lambda: run(params=(0.5, True)), TypeError,
     ["sdeint: params leaf 1 is a bool"]),
    ("params do not broadcast", lambda: run(sde=sde.SDE(lambda t, y, p: p * y, lambda t, y, p:
                                                        0.1 * y), params=np.ones(3)),
     ValueError, ["sdeint: drift(t, y, params) raised", "y0 of shape (3, 2)", "(3,)",
                  "broadcast"]),
    ("drift NaN at t0", lambda: run(sde=sde.SDE(lambda t, y, p: np.full_like(y, np.nan),
                                                lambda t, y, p: 0.1 * y)),
     ValueError, ["sdeint: drift is non-finite at t = ts[0]", "path 0"]),
    ("seed negative", lambda: run(seed=-1), ValueError, ["sdeint: seed must be an int >= 0"]),
    ("seed bool", lambda: run(seed=True), ValueError, ["sdeint: seed must be an int", "bool"]),
    ("seed float", lambda: run(seed=1.5), ValueError, ["sdeint: seed must be an int"]),
    ("snapshots 0", lambda: run(snapshots=0), ValueError,
     ["sdeint: snapshots must be an int >= 1"]),
    ("adaptive string", lambda: run(adaptive="yes"), TypeError,
     ["sdeint: adaptive must be True or False", "'yes'"]),
    ("rtol NaN", lambda: run(adaptive=True, rtol=float("nan")), ValueError,
     ["sdeint: rtol must be a finite number >= 0"]),
    ("atol bool", lambda: run(adaptive=True, atol=True), ValueError, ["sdeint: atol must be"]),
    ("max_steps bool", lambda: run(adaptive=True, max_steps=True), ValueError,
     ["sdeint: max_steps must be an int >= 1"]),
    ("dt_min bool", lambda: run(adaptive=True, dt_min=True), ValueError,
     ["sdeint: dt_min must be a finite number > 0"]),
    ("brownian type", lambda: run(brownian=np.zeros((3, 2))), TypeError, ["sdeint: brownian"]),
    ("brownian shape", lambda: run(brownian=sde.BrownianInterval(0, 1, (4, 2))), ValueError,
     ["sdeint: brownian has shape (4, 2), expected (batch, m) = (3, 2)"]),
    ("ou y0 NaN", lambda: ou(y0=np.array([0.0, np.nan, 0.0])), ValueError,
     ["ou_paths: y0 has non-finite entries"]),
    ("ou theta bool", lambda: ou(theta=True), ValueError,
     ["ou_paths: theta must be a real scalar", "bool"]),
    ("ou sigma NaN", lambda: ou(sigma=float("nan")), ValueError,
     ["ou_paths: sigma must be finite"]),
    ("ou dW NaN", lambda: ou(dW=np.full((3, 10), np.nan)), ValueError,
     ["ou_paths: dW has non-finite"]),
    ("ou dW bool", lambda: ou(dW=np.zeros((3, 10), bool)), TypeError,
     ["ou_paths: dW must be a real"]),
    ("ou dW 1-D", lambda: ou(dW=np.zeros(10)), ValueError, ["ou_paths: dW must have shape"]),
    ("ou y0 vs dW", lambda: ou(y0=np.zeros(4)), ValueError,
     ["ou_paths: y0 must have shape (3,) (one per path), got (4,)"]),
    ("ou dt traced", lambda: ds.grad(lambda h: np.sum(ou(dt=h)))(0.01), TypeError,
     ["ou_paths: dt is not differentiable"]),
    ("ou dW traced", lambda: ds.grad(lambda w: np.sum(ou(dW=w)))(DW), TypeError,
     ["ou_paths: dW is not differentiable"]),
    ("gbm t traced", lambda: ds.grad(lambda t: np.sum(_ops.gbm_paths(
        np.ones(3), 0.1, 0.2, t, np.cumsum(DW, 1))))(np.linspace(0.1, 1, 10)), TypeError,
     ["gbm_paths: t is not differentiable"]),
    ("heston dZ shape", lambda: _ops.heston_paths(np.ones(3), np.ones(3), 0.0, 1.0, 0.04, 0.3, 0.0,
                                                0.01, DW, DW[:2]), ValueError,
     ["heston_paths: dZ must have shape (3, 10), got (2, 10)"]),
]


@pytest.mark.parametrize("call,exc,parts", [row[1:] for row in BAD], ids=[row[0] for row in BAD])
def test_bad_input_table(call, exc, parts):
    with pytest.raises(exc) as excinfo:
        call()
    msg = str(excinfo.value)
    for part in parts:
        assert part in msg, (part, msg)
    assert "lower dt" not in msg  # never blamed on the step when an input is at fault


def test_nan_y0_is_not_reported_as_a_step_problem():
    """The reviewer's case: NaN in y0 used to read 'non-finite at t=0.1 ... lower dt'."""
    with pytest.raises(ValueError, match=r"sdeint: y0 has non-finite entries"):
        sde.sdeint(GBM, NAN_Y0, TS, P, dt=0.1)


def test_lists_tuples_ints_and_enum_strings_are_accepted():
    ref = run()
    np.testing.assert_array_equal(run(y0=Y0.tolist(), ts=tuple(TS), params=list(P)), ref)
    np.testing.assert_array_equal(run(y0=np.ones((3, 2), dtype=int), ts=[0, 0.5, 1]), ref)
    np.testing.assert_array_equal(run(dt=np.float32(0.1), seed=np.int64(0)), ref)
    np.testing.assert_array_equal(run(method="EULER", adjoint="Backprop"), ref)
    strat = sde.SDE(GBM.drift, GBM.diffusion, noise="Diagonal", calculus="Stratonovich")
    assert strat.calculus is sde.Calculus.STRATONOVICH and strat.noise is sde.Noise.DIAGONAL
    ys = run(sde=strat, method="Euler-Heun", adaptive=True, error_estimate="DOUBLING")
    assert np.all(np.isfinite(ys))
    np.testing.assert_array_equal(ou(y0=[0.0, 0.0, 0.0], dW=DW.tolist()), ou())
