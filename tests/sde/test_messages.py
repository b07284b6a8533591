"""The exact key parts of sde's user-facing messages: higher derivatives through the fast paths
(every path x every higher-order transform), enum arguments (every enum, grammatical), Lévy area
missing for each solver that needs it."""

import numpy as np
import pytest

import diffsci as ds
import sde
from sde import _ops

pytestmark = pytest.mark.kernels

RNG = np.random.default_rng(0)
DW = RNG.standard_normal((3, 20)) * 0.1
X0 = 0.5 + RNG.random(3)
T = np.linspace(0.05, 1.0, 20)

# (name, f(scalar parameter) -> a scalar loss through the fast path)
FAST_PATHS = [
    ("ou_paths", lambda th: np.sum(_ops.ou_paths(X0, th, 1.0, 0.3, 0.01, DW))),
    ("gbm_paths", lambda mu: np.sum(_ops.gbm_paths(X0, mu, 0.3, T, np.cumsum(DW, 1)))),
    ("cir_paths", lambda k: np.sum(_ops.cir_paths(X0, k, 0.5, 0.3, 0.01, DW))),
    ("heston_paths", lambda k: np.sum(_ops.heston_paths(X0, 0.04 + 0 * X0, 0.0, k, 0.04, 0.3,
                                                        -0.5, 0.01, DW, DW[::-1])[0])),
    ("langevin_paths", lambda g: np.sum(_ops.langevin_paths(X0, X0, 0.0, 1.0, g, 0.3, 0.01,
                                                            DW)[0])),
]
HIGHER = [
    ("grad of grad", lambda f: ds.grad(ds.grad(f))(0.7)),
    ("hessian", lambda f: ds.hessian(f)(0.7)),
    ("jvp of grad", lambda f: ds.jvp(ds.grad(f), (0.7,), (1.0,))),
    ("grad of jvp", lambda f: ds.grad(lambda x: ds.jvp(f, (x,), (1.0,))[1])(0.7)),
    ("jvp", lambda f: ds.jvp(f, (0.7,), (1.0,))),
]


@pytest.mark.parametrize("name,f", FAST_PATHS, ids=[n for n, _ in FAST_PATHS])
@pytest.mark.parametrize("how,transform", HIGHER, ids=[h for h, _ in HIGHER])
def test_fast_paths_refuse_higher_order_with_the_first_order_message(name, f, how, transform):
    assert np.isfinite(ds.grad(f)(0.7))  # first order works
    with pytest.raises(NotImplementedError) as excinfo:
        transform(f)
    msg = str(excinfo.value)
    assert msg.startswith(f"{name}: the hand-written adjoint kernel is reverse mode, first "
                          f"order only"), msg
    assert "use sde.sdeint" in msg and "custom_vjp" not in msg


GBM = sde.SDE(lambda t, y, p: 0.5 * y, lambda t, y, p: 0.2 * y)
Y0, TS = np.ones((2, 1)), np.array([0.0, 1.0])

# (argument name in the message, enum, call with a bad value)
ENUM_ARGS = [
    ("sdeint: adjoint", sde.Adjoint, lambda v: sde.sdeint(GBM, Y0, TS, adjoint=v)),
    ("sdeint: method", sde.Method, lambda v: sde.sdeint(GBM, Y0, TS, method=v)),
    ("sdeint: error_estimate", sde.ErrorEstimate,
     lambda v: sde.sdeint(GBM, Y0, TS, method="euler", adaptive=True, error_estimate=v)),
    ("SDE: noise", sde.Noise, lambda v: sde.SDE(GBM.drift, GBM.diffusion, noise=v)),
    ("SDE: calculus", sde.Calculus, lambda v: sde.SDE(GBM.drift, GBM.diffusion, calculus=v)),
]


@pytest.mark.parametrize("arg,kind,call", ENUM_ARGS, ids=[a for a, _, _ in ENUM_ARGS])
def test_enum_messages_name_argument_and_choices_with_the_right_article(arg, kind, call):
    article = "an" if kind.__name__[0] in "AEIOU" else "a"
    for bad in ("nope", 3, 1.5, True):
        with pytest.raises(ValueError) as excinfo:
            call(bad)
        msg = str(excinfo.value)
        assert msg.startswith(f"{arg} must be {article} {kind.__name__} or one of "), msg
        assert all(repr(m.value) in msg for m in kind) and f"got {bad!r}" in msg
    for member in kind:  # and every member's string name is accepted, any case
        for text in (member.value, member.value.upper(), member.name):
            assert sde._model.as_enum(kind, text, arg) is member


@pytest.mark.parametrize("method,prob", [
    ("sri", GBM),
    ("sra1", sde.SDE(lambda t, y, p: -y, lambda t, y, p: 0.3 + 0 * y[:, :, None],
                     noise="additive")),
])
def test_levy_area_missing_names_the_method(method, prob):
    bm = sde.BrownianInterval(0.0, 1.0, (2, 1), seed=0)
    with pytest.raises(ValueError) as excinfo:
        sde.sdeint(prob, Y0, TS, method=method, brownian=bm, dt=0.1)
    msg = str(excinfo.value)
    assert msg.startswith(f"sdeint: method {method!r} needs the space-time Lévy area"), msg
    assert "BrownianInterval" in msg and "levy_area=True" in msg and "SRA1)" not in msg
    with pytest.raises(ValueError, match=r"\(needed by the SRA1 and SRI solvers\)"):
        bm.levy_area(0.0, 0.5)
