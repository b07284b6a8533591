"""The solver's time grid and the Brownian noise along it (plain arrays, shared by every solve)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._brownian import AbstractBrownian

__all__ = ["Grid", "make_grid"]


@dataclass(frozen=True)
class Grid:
    """Step times ``times`` (N+1,), and ``save[i]``: the step index of save time ``ts[i]``."""

    times: np.ndarray
    save: np.ndarray
    brownian: AbstractBrownian
    levy: bool

    @property
    def n_steps(self) -> int:
        return self.times.size - 1

    def noise(self, k: int):
        """``(dW, H)`` of step k (H is None unless the solver needs Lévy area)."""
        s, t = self.times[k], self.times[k + 1]
        dW = self.brownian.increment(s, t)
        return dW, (self.brownian.levy_area(s, t) if self.levy else None)


def make_grid(ts: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Uniform steps of at most ``dt`` inside each save interval: ``(times, save indices)``."""
    pieces = [ts[:1]]
    save = [0]
    for a, b in zip(ts[:-1], ts[1:]):
        n = max(1, math.ceil((b - a) / dt - 1e-9))
        pieces.append(np.linspace(a, b, n + 1)[1:])
        save.append(save[-1] + n)
    return np.concatenate(pieces), np.asarray(save)
