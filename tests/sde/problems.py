"""Reference problems with exact solutions on a given Brownian path (shared by the sde tests)."""

import numpy as np

import sde

MU, SIGMA = 0.5, 0.5


def gbm(calculus="ito"):
    """dX = μX dt + σX dW (Itô or Stratonovich), params = (μ, σ)."""
    return sde.SDE(lambda t, y, p: p[0] * y, lambda t, y, p: p[1] * y, noise="diagonal",
                   calculus=calculus)


def gbm_exact(y0, t, W, mu=MU, sigma=SIGMA, calculus="ito"):
    """X_t = X0 exp((μ − σ²/2) t + σ W_t) (Itô), X0 exp(μ t + σ W_t) (Stratonovich)."""
    c = mu - 0.5 * sigma**2 if calculus == "ito" else mu
    return y0 * np.exp(c * t + sigma * W)


def scalar_gbm(calculus="ito"):
    """Two coordinates driven by one Brownian motion: dX_i = μ_i X_i dt + σ_i X_i dW."""
    return sde.SDE(lambda t, y, p: p[0] * y, lambda t, y, p: p[1] * y, noise="scalar",
                   calculus=calculus)


def additive_ou():
    """dX = θ(μ − X) dt + σ dW with 2 coordinates and a 2×2 constant σ, params = (θ, μ, σ)."""
    def diffusion(t, y, p):
        return np.broadcast_to(p[2], (y.shape[0], 2, 2)) + 0.0 * p[2]

    return sde.SDE(lambda t, y, p: p[0] * (p[1] - y), diffusion, noise="additive")


class FineLevyPath(sde.BrownianPath):
    """A Brownian path on a fine grid whose ``levy_area`` over any pair of fine grid points is
    computed from the fine path (trapezoid rule), so a coarse SRA1 solve and a fine reference
    solve see the same noise."""

    def levy_area(self, s, t):
        i, _ = self._index(s)
        j, _ = self._index(t)
        W = self._W[i:j + 1] - self._W[i]
        u = self.ts[i:j + 1] - self.ts[i]
        h = u[-1]
        bridge = W - (u / h)[:, None, None] * W[-1]
        return np.trapezoid(bridge, u, axis=0) / h
