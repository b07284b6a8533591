"""Shared machinery of the strong-order scripts: one Brownian path for every step size, the
least-squares order, the table.

Every solve of a script runs on one :class:`sde.BrownianPath` with space-time Lévy areas, drawn on
the finest grid and coarsened exactly (:meth:`sde.BrownianPath.coarsen`) to each step size, so the
errors at different dt are errors against the same path (and the same exact solution). The strong
error at dt is ``E|X_T − X̂_T|`` over the paths; the measured order is the least-squares slope of
``log error`` against ``log dt``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass

import numpy as np

import sde

TOLERANCE = 0.1  # |measured − theory| allowed (the criterion)


@dataclass(frozen=True)
class Case:
    """One row: a solver on a problem with a known solution on the path.

    Attributes:
        solver: the ``sdeint`` method name.
        problem: a short problem label.
        sde_: the :class:`sde.SDE`.
        exact: ``exact(bm, paths) -> X_T`` on the path ``bm`` (shape ``(paths, d)``), or None to
            use ``reference`` instead.
        theory: the strong order theory gives on this problem.
        why: where ``theory`` comes from.
        y0: the initial value per path, a ``(d,)`` array.
    """

    solver: str
    problem: str
    sde_: sde.SDE
    exact: object
    theory: float
    why: str
    y0: tuple = (1.0,)


@dataclass(frozen=True)
class Row:
    solver: str
    problem: str
    theory: float
    measured: float
    err_finest: float
    errors: list
    ok: bool
    why: str


def parse(description):
    parser = argparse.ArgumentParser(description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes (64 paths, dt = 2^-2..2^-5): a smoke test, not a "
                             "measurement")
    parser.add_argument("--paths", type=int, default=None, help="paths (default 4096)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    return parser.parse_args()


def sizes(args):
    """``(paths, ks)``: dt = 2^-k for k in ks."""
    if args.quick:
        return args.paths or 64, list(range(2, 6))
    return args.paths or 4096, list(range(2, 10))


def levy_path(paths, m, k_finest, seed=0):
    """A Brownian path with Lévy areas on the grid of step 2^-k_finest over [0, 1]."""
    return sde.BrownianPath(np.linspace(0.0, 1.0, 2**k_finest + 1), (paths, m), seed=seed,
                            levy_area=True)


def order(dts, errs):
    """The least-squares slope of log(err) against log(dt)."""
    return float(np.polyfit(np.log(dts), np.log(errs), 1)[0])


def measure(case: Case, bm: sde.BrownianPath, k_finest: int, ks, exact=None) -> Row:
    """Solve ``case`` at dt = 2^-k (k in ks) on coarsenings of ``bm``; compare with ``exact``."""
    paths = bm.shape[0]
    target = case.exact(bm, paths) if exact is None else exact
    y0 = np.tile(np.asarray(case.y0, dtype=np.float64), (paths, 1))
    errs = []
    for k in ks:
        ys = sde.sdeint(case.sde_, y0, np.array([0.0, 1.0]), None, method=case.solver,
                        dt=2.0**-k, brownian=bm.coarsen(2 ** (k_finest - k)))
        errs.append(float(np.mean(np.abs(ys[-1] - target))))
    measured = order([2.0**-k for k in ks], errs)
    return Row(case.solver, case.problem, case.theory, measured, errs[-1], errs,
               abs(measured - case.theory) <= TOLERANCE, case.why)


def report(title, rows, args, paths, ks, t0):
    print(f"\n{title} ({paths} paths, dt = 2^-{min(ks)}..2^-{max(ks)}, one Brownian path for "
          f"every dt)")
    print(f"{'solver':<18}{'problem':<22}{'theory':>7}{'measured':>10}{'err@finest':>12}  check")
    for r in rows:
        check = "(quick: not checked)" if args.quick else ("PASS" if r.ok else "FAIL")
        print(f"{r.solver:<18}{r.problem:<22}{r.theory:>7.2f}{r.measured:>10.2f}"
              f"{r.err_finest:>12.2e}  {check}")
    print("theory:")
    for why in dict.fromkeys(f"  {r.solver}: {r.why}" for r in rows):
        print(why)
    print(f"({time.perf_counter() - t0:.1f} s; PASS = within {TOLERANCE} of theory)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump([asdict(r) for r in rows], fh, indent=1)
