"""GPU checks of the sde model kernels (collected by ``benchmarks/gpu_check.py``)."""

from __future__ import annotations

import numpy as np

from diffsci.devices import GpuCheck

from . import _cuda, _kernels

_N_STEPS = 64


def _ou_inputs(rng, size):
    return (rng.standard_normal(size), 2.0, 1.0, 0.3, 0.01,
            rng.standard_normal((size, _N_STEPS)) * 0.1)


def _ou_reference(y0, theta, mu, sigma, dt, dW):
    y = np.empty((y0.size, dW.shape[1] + 1))
    y[:, 0] = y0
    for k in range(dW.shape[1]):
        y[:, k + 1] = y[:, k] + theta * (mu - y[:, k]) * dt + sigma * dW[:, k]
    return y


def _gbm_inputs(rng, size):
    t = np.linspace(0.0, 1.0, _N_STEPS)
    W = np.cumsum(rng.standard_normal((size, _N_STEPS)) * 0.1, axis=1)
    return 1.0 + rng.random(size), 0.5, 0.3, t, W


def _gbm_reference(y0, mu, sigma, t, W):
    return y0[:, None] * np.exp((mu - 0.5 * sigma**2) * t + sigma * W)


def _cir_inputs(rng, size):
    return (0.04 + 0.01 * rng.random(size), 2.0, 0.04, 0.5, 0.01,
            rng.standard_normal((size, _N_STEPS)) * 0.1)


def _cir_reference(y0, kappa, theta, sigma, dt, dW):
    y = np.empty((y0.size, dW.shape[1] + 1))
    y[:, 0] = y0
    for k in range(dW.shape[1]):
        xp = np.maximum(y[:, k], 0.0)
        y[:, k + 1] = y[:, k] + kappa * (theta - xp) * dt + sigma * np.sqrt(xp) * dW[:, k]
    return y


def _heston_inputs(rng, size):
    return (1.0 + 0.1 * rng.random(size), 0.04 + 0.01 * rng.random(size), 0.02, 2.0, 0.04, 0.6,
            -0.7, 0.01, rng.standard_normal((size, _N_STEPS)) * 0.1,
            rng.standard_normal((size, _N_STEPS)) * 0.1)


def _heston_reference(s0, v0, mu, kappa, theta, xi, rho, dt, dW1, dZ):
    x = np.empty((s0.size, dW1.shape[1] + 1))
    v = np.empty_like(x)
    x[:, 0], v[:, 0] = np.log(s0), v0
    for k in range(dW1.shape[1]):
        vp = np.maximum(v[:, k], 0.0)
        dw2 = rho * dW1[:, k] + np.sqrt(1 - rho**2) * dZ[:, k]
        x[:, k + 1] = x[:, k] + (mu - 0.5 * vp) * dt + np.sqrt(vp) * dW1[:, k]
        v[:, k + 1] = v[:, k] + kappa * (theta - vp) * dt + xi * np.sqrt(vp) * dw2
    return np.exp(x), v


def _langevin_inputs(rng, size):
    return (rng.standard_normal(size), rng.standard_normal(size), 4.0, -4.0, 0.5, 0.7, 0.01,
            rng.standard_normal((size, _N_STEPS)) * 0.1)


def _langevin_reference(x0, v0, a, b, gamma, sigma, dt, dW):
    x = np.empty((x0.size, dW.shape[1] + 1))
    v = np.empty_like(x)
    x[:, 0], v[:, 0] = x0, v0
    for k in range(dW.shape[1]):
        force = -(a * x[:, k] ** 2 + b) * x[:, k] - gamma * v[:, k]
        x[:, k + 1] = x[:, k] + v[:, k] * dt
        v[:, k + 1] = v[:, k] + force * dt + sigma * dW[:, k]
    return x, v


CHECKS = [
    GpuCheck(package="sde", name="ou_euler", make_inputs=_ou_inputs, cpu_fn=_kernels.ou_euler,
             cuda_fn=_cuda.ou_euler, reference_fn=_ou_reference, size=1 << 16, sim_size=32,
             rtol=1e-12),
    GpuCheck(package="sde", name="gbm_exact", make_inputs=_gbm_inputs,
             cpu_fn=_kernels.gbm_exact, cuda_fn=_cuda.gbm_exact, reference_fn=_gbm_reference,
             size=1 << 16, sim_size=32, rtol=1e-12),
    GpuCheck(package="sde", name="cir_euler", make_inputs=_cir_inputs,
             cpu_fn=_kernels.cir_euler, cuda_fn=_cuda.cir_euler, reference_fn=_cir_reference,
             size=1 << 16, sim_size=32, rtol=1e-12),
    GpuCheck(package="sde", name="heston_euler", make_inputs=_heston_inputs,
             cpu_fn=_kernels.heston_euler, cuda_fn=_cuda.heston_euler,
             reference_fn=_heston_reference, size=1 << 16, sim_size=32, rtol=1e-12),
    GpuCheck(package="sde", name="langevin_euler", make_inputs=_langevin_inputs,
             cpu_fn=_kernels.langevin_euler, cuda_fn=_cuda.langevin_euler,
             reference_fn=_langevin_reference, size=1 << 16, sim_size=32, rtol=1e-12),
]
