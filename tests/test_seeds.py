"""Every public function that takes a ``seed`` accepts the whole documented range [0, 2**64) in
any call order, and refuses what is outside it by name.

The class of bug: a Numba dispatcher that already holds an int64 compilation converts a later
Python int argument to int64 and overflows at 2**63 ("int too big to convert"), so a 64-bit seed
(``diffsci.distributed.shard_seeds`` makes them) worked or failed depending on which call came
first. Each case below is called with a small seed first (compiling the int64 version), then with
seeds above 2**63; the same seed must give the same result twice.
"""

import numpy as np
import pytest

import finance
import quantum
import raytrace as rt
import sde

pytestmark = pytest.mark.kernels

SEEDS = [5, 2**63 + 5, 2**64 - 1]
_M = sde.SDE(lambda t, y, p: -p[0] * y, lambda t, y, p: p[1] * np.ones_like(y))
_MC = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2, n_paths=256, n_steps=4)
_HESTON = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, n_paths=256, n_steps=4,
               params=finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04))
_SCENE = rt.Scene(rt.Camera(eye=(0.0, 0.0, -4.0), width=6, height=6),
                  (rt.Sphere((0.0, 0.0, 0.0), 1.0, rt.Material(diffuse=(0.5, 0.5, 0.5))),),
                  (rt.PointLight((3.0, 3.0, -5.0), 800.0),))


def _flat(x):
    if isinstance(x, dict):
        return np.concatenate([_flat(v) for _, v in sorted(x.items())])
    if hasattr(x, "_asdict"):
        return _flat(dict(x._asdict()))
    if isinstance(x, (tuple, list)):
        return np.concatenate([_flat(v) for v in x]) if x else np.zeros(0)
    return np.ravel(np.asarray(x, dtype=float))


CASES = {
    "sde.BrownianInterval": lambda s: sde.BrownianInterval(0.0, 1.0, (2, 3), seed=s)
    .increment(0.1, 0.5),
    "sde.sdeint": lambda s: sde.sdeint(_M, np.ones((4, 1)), np.linspace(0.0, 1.0, 5),
                                       np.array([1.0, 0.3]), seed=s),
    "finance.mc_price": lambda s: finance.mc_price(**_MC, seed=s).price,
    "finance.mc_price(asian)": lambda s: finance.mc_price(**_MC, product="asian", seed=s).price,
    "finance.mc_greeks": lambda s: [g[0] for g in finance.mc_greeks(**_MC, seed=s).values()],
    "finance.mc_greeks(second_order)": lambda s: [
        g[0] for g in finance.mc_greeks(**_MC, second_order=True, seed=s).values()],
    "finance.heston_mc_price(QE)": lambda s: finance.heston_mc_price(**_HESTON, seed=s).price,
    "finance.heston_mc_price(full truncation)": lambda s: finance.heston_mc_price(
        **_HESTON, scheme="full_truncation", seed=s).price,
    "quantum.sample": lambda s: quantum.sample(quantum.Circuit(2).h(0).cnot(0, 1), None,
                                               shots=16, seed=s),
    "quantum.expval_shots": lambda s: quantum.expval_shots(
        quantum.Circuit(1).ry(0), np.array([0.3]), quantum.Z(0), shots=16, seed=s).value,
    "raytrace.render(samples=4)": lambda s: rt.render(_SCENE, samples=4, seed=s),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_seeds_above_2_63_after_a_small_one(name):
    fn = CASES[name]
    for s in SEEDS:
        a, b = _flat(fn(s)), _flat(fn(s))
        assert np.all(np.isfinite(a)), (name, s)
        np.testing.assert_array_equal(a, b, err_msg=f"{name}: seed {s} is not reproducible")


@pytest.mark.parametrize("name", ["sde.BrownianInterval", "sde.sdeint", "finance.mc_price",
                                  "finance.mc_greeks", "finance.heston_mc_price(QE)",
                                  "quantum.sample", "quantum.expval_shots",
                                  "raytrace.render(samples=4)"])
@pytest.mark.parametrize("bad", [-1, 2**64, 1.5, True])
def test_seeds_outside_the_range_are_refused_by_name(name, bad):
    with pytest.raises((ValueError, TypeError), match="seed"):
        CASES[name](bad)
