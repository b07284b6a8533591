"""Stochastic differential equations with gradients: solvers, Brownian paths, adjoints, neural SDEs.

>>> import numpy as np, diffsci as ds, sde
>>> gbm = sde.SDE(lambda t, y, p: p[0] * y, lambda t, y, p: p[1] * y, noise="diagonal")
>>> ts = np.linspace(0.0, 1.0, 11)
>>> ys = sde.sdeint(gbm, np.ones((8, 1)), ts, np.array([0.5, 0.2]), dt=0.01, seed=0)
>>> ys.shape
(11, 8, 1)
>>> g = ds.grad(lambda p: np.mean(sde.sdeint(gbm, np.ones((8, 1)), ts, p, dt=0.01)[-1]))(
...     np.array([0.5, 0.2]))

Gradients: ``adjoint="backprop"`` (through the solver), ``"checkpoint"`` (the same, in bounded
memory), ``"reversible"`` (reversible Heun, exact at O(1) memory), ``"stochastic"`` (Li et al.
2020); every method differentiates ``y0`` and ``params``, values the drift and diffusion close
over only ``"backprop"`` (the others refuse them, never a silent zero). Noise: the seeded
``BrownianInterval`` sdeint makes (``return_brownian=True`` hands it back), a ``BrownianPath``,
increments drawn by the caller on the step grid (``BrownianIncrements``: they may be traced,
so a ``diffsci.jit`` training step takes fresh noise each call), or your own source: subclass
``AbstractBrownian`` with ``increment(s, t)`` or ``__call__(s, t)``. Adaptive steps:
``sdeint(..., adaptive=True, rtol=..., atol=...)`` with an embedded error estimate (heun,
milstein) or step doubling (``error_estimate=``). Fitting:
``ensemble_stats``, ``pseudo_loglik`` (Euler), ``moment_loss``. Model fast paths (Numba kernels
with hand-written adjoints, numba.cuda forward kernels): ``ou_paths``, ``gbm_paths``,
``cir_paths``, ``heston_paths``, ``langevin_paths``. Derivations of the hand-written
adjoints are in ``sde/DERIVATIONS.md``.
"""

from ._brownian import AbstractBrownian, BrownianIncrements, BrownianInterval, BrownianPath
from ._model import SDE, Adjoint, Calculus, ErrorEstimate, Noise
from ._ops import cir_paths, gbm_paths, heston_paths, langevin_paths, ou_paths
from ._sdeint import sdeint
from ._solvers import (
    SRA1,
    SRI,
    AbstractSolver,
    Euler,
    EulerHeun,
    Heun,
    Method,
    Milstein,
    ReversibleHeun,
)
from ._stats import EnsembleStats, ensemble_stats, moment_loss, pseudo_loglik

__all__ = [
    "SDE",
    "SRA1",
    "SRI",
    "AbstractBrownian",
    "AbstractSolver",
    "Adjoint",
    "BrownianIncrements",
    "BrownianInterval",
    "BrownianPath",
    "Calculus",
    "EnsembleStats",
    "ErrorEstimate",
    "Euler",
    "EulerHeun",
    "Heun",
    "Method",
    "Milstein",
    "Noise",
    "ReversibleHeun",
    "cir_paths",
    "ensemble_stats",
    "gbm_paths",
    "heston_paths",
    "langevin_paths",
    "moment_loss",
    "ou_paths",
    "pseudo_loglik",
    "sdeint",
]
