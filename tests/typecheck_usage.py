"""Each package's first task, written as a user's typed script: ``tests/test_typecheck.py`` runs
mypy over it (against the packages' type hints) and then runs it.

Every function here is annotated, so mypy checks each call against the public signatures.
"""

from __future__ import annotations

import numpy as np

import diffsci as ds
import finance
import quantum
import raytrace as rt
import sde
from diffsci.optim import Adam
from diffsci.scipy.integrate import odeint
from diffsci.typing import Array, ArrayLike


def decay_fit() -> float:
    """diffsci: fit the rate k of dy/dt = -k y to data by gradient descent through odeint."""
    t = np.linspace(0.0, 1.0, 6)
    data = np.exp(-0.7 * t)

    def loss(k: ArrayLike) -> Array:
        ys = odeint(lambda y, s, rate: -rate * y, np.array([1.0]), t, k)
        return np.mean((ys[:, 0] - data) ** 2)

    params, history = ds.fit(loss, np.array(0.2), Adam(0.1), steps=150, progress=False)
    assert history["loss"].shape == (150,)
    return float(params)


def bell_vqe() -> float:
    """quantum: ⟨Z0 + Z1⟩ = 2 cos θ after RY(θ)·CNOT, and its gradient −2 sin θ."""
    circuit = quantum.Circuit(2).ry(0).cnot(0, 1)
    theta = np.array([0.4])
    energy: Array = quantum.expval(circuit, theta, quantum.Z(0) + quantum.Z(1))
    gradient = ds.grad(lambda th: quantum.expval(circuit, th, quantum.Z(0) + quantum.Z(1)))(theta)
    assert abs(float(gradient[0]) + 2 * np.sin(0.4)) < 1e-10
    bits: np.ndarray = quantum.sample(circuit, theta, shots=16, seed=0)
    assert bits.shape[0] == 16
    return float(energy)


def gbm_mean() -> float:
    """sde: GBM paths and the gradient of their mean at t = 1 with respect to (μ, σ)."""
    gbm = sde.SDE(lambda t, y, p: p[0] * y, lambda t, y, p: p[1] * y, noise="diagonal")
    ts = np.linspace(0.0, 1.0, 11)
    p = np.array([0.5, 0.2])
    ys = sde.sdeint(gbm, np.ones((64, 1)), ts, p, dt=0.01, seed=0)
    g = ds.grad(lambda q: np.mean(sde.sdeint(gbm, np.ones((64, 1)), ts, q, dt=0.01)[-1]))(p)
    assert np.shape(g) == (2,)
    return float(np.mean(ys[-1]))


def option_greeks() -> tuple[float, float]:
    """finance: a Black–Scholes price and its vega, closed form and by AD."""
    price = finance.bsm_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
    g = finance.greeks(finance.bsm_price, spot=100.0, strike=100.0, expiry=1.0, rate=0.05,
                       vol=0.2)
    mc: finance.MCResult = finance.mc_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05,
                                            vol=0.2, n_paths=20_000, seed=1)
    assert abs(float(mc.price) - float(price)) < 5 * mc.stderr
    return float(price), float(g["vega"])


def sphere_colour() -> Array:
    """raytrace: the gradient of an image loss with respect to a sphere's diffuse colour."""
    cam = rt.Camera(eye=(0.0, 0.0, -5.0), width=8, height=8)
    light = rt.PointLight((2.0, 2.0, -5.0), 500.0)
    target = np.zeros((8, 8, 3))

    def loss(colour: ArrayLike) -> Array:
        sphere = rt.Sphere((0.0, 0.0, 0.0), 1.0, rt.Material(diffuse=colour))
        return rt.mse(rt.render(rt.Scene(cam, (sphere,), (light,))), target)

    return ds.grad(loss)(np.array([0.8, 0.2, 0.2]))


def main() -> None:
    assert abs(decay_fit() - 0.7) < 0.05
    assert abs(bell_vqe() - 2 * np.cos(0.4)) < 1e-12
    assert gbm_mean() > 1.0
    price, vega = option_greeks()
    assert abs(price - 10.450583572185565) < 1e-9 and abs(vega - 37.5245) < 1e-3
    assert np.all(sphere_colour() > 0.0)  # a darker sphere is closer to the black target


if __name__ == "__main__":
    main()
