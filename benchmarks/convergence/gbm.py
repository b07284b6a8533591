"""Strong order of every diagonal-noise solver on geometric Brownian motion.

dX = 0.5 X dt + X dW, X₀ = 1, T = 1, 4096 paths, dt = 2⁻²…2⁻⁹ (``--quick``: 64 paths,
dt = 2⁻²…2⁻⁵, a smoke test). Itô solvers solve the Itô SDE, exact X_T = exp((μ − σ²/2)T + σW_T);
Stratonovich solvers the Stratonovich SDE with the same coefficients, exact X_T = exp(μT + σW_T);
W_T is that of the one Brownian path every dt is solved on. GBM's noise is diagonal and
commutative (g_i depends on y_i only), where the Heun-type Stratonovich solvers reach order 1.

Usage: ``PYTHONPATH=. python benchmarks/convergence/gbm.py [--quick] [--paths N] [--json PATH]``

References: P. E. Kloeden, E. Platen, *Numerical Solution of Stochastic Differential Equations*,
Springer 1992 (Euler–Maruyama Thm 10.2.2; Milstein Thm 10.3.5 and §11.1; Heun-type Stratonovich
schemes §15.1, order 1 for commutative noise); A. Rößler, SIAM J. Numer. Anal. 48(3), 2010
(SRI, order 1.5); P. Kidger et al., NeurIPS 2021 (reversible Heun).
"""

from __future__ import annotations

import time

import _common
import numpy as np

import sde

MU, SIGMA = 0.5, 1.0


def _gbm(calculus):
    return sde.SDE(lambda t, y, p: MU * y, lambda t, y, p: SIGMA * y, calculus=calculus)


def _exact(calculus):
    c = MU - 0.5 * SIGMA**2 if calculus == "ito" else MU

    def exact(bm, paths):
        return np.exp(c + SIGMA * bm.increment(0.0, 1.0))

    return exact


CASES = [
    _common.Case("euler", "GBM (Itô)", _gbm("ito"), _exact("ito"), 0.5,
                 "0.5 (Euler–Maruyama, Kloeden & Platen Thm 10.2.2)"),
    _common.Case("milstein", "GBM (Itô)", _gbm("ito"), _exact("ito"), 1.0,
                 "1.0 (Milstein, diagonal commutative noise, K&P Thm 10.3.5, §11.1)"),
    _common.Case("milstein", "GBM (Stratonovich)", _gbm("stratonovich"), _exact("stratonovich"),
                 1.0, "1.0 (Milstein, diagonal commutative noise, K&P Thm 10.3.5, §11.1)"),
    _common.Case("sri", "GBM (Itô)", _gbm("ito"), _exact("ito"), 1.5,
                 "1.5 (Rößler 2010, SRI2, diagonal noise)"),
    _common.Case("heun", "GBM (Stratonovich)", _gbm("stratonovich"), _exact("stratonovich"),
                 1.0, "1.0 for commutative noise (K&P §15.1; 0.5 for general noise)"),
    _common.Case("euler_heun", "GBM (Stratonovich)", _gbm("stratonovich"),
                 _exact("stratonovich"), 1.0,
                 "1.0 for commutative noise (K&P §15.1; 0.5 for general noise)"),
    _common.Case("reversible_heun", "GBM (Stratonovich)", _gbm("stratonovich"),
                 _exact("stratonovich"), 1.0,
                 "1.0 for commutative noise, as for Heun (Kidger et al. 2021 prove 0.5 for "
                 "general and 1.0 for additive noise; 1.0 here is the Heun-type expectation, "
                 "not a theorem of that paper)"),
]


def main():
    args = _common.parse(__doc__)
    t0 = time.perf_counter()
    paths, ks = _common.sizes(args)
    bm = _common.levy_path(paths, 1, max(ks))
    rows = [_common.measure(case, bm, max(ks), ks) for case in CASES]
    _common.report("Strong order on GBM dX = 0.5X dt + X dW, X0 = 1, T = 1", rows, args,
                   paths, ks, t0)


if __name__ == "__main__":
    main()
