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


CHECKS = [
    GpuCheck(package="sde", name="ou_euler", make_inputs=_ou_inputs, cpu_fn=_kernels.ou_euler,
             cuda_fn=_cuda.ou_euler, reference_fn=_ou_reference, size=1 << 16, sim_size=32,
             rtol=1e-12),
    GpuCheck(package="sde", name="gbm_exact", make_inputs=_gbm_inputs,
             cpu_fn=_kernels.gbm_exact, cuda_fn=_cuda.gbm_exact, reference_fn=_gbm_reference,
             size=1 << 16, sim_size=32, rtol=1e-12),
]
