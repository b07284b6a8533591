"""Stochastic differential equation solvers with gradients (not implemented yet).

This package will hold SDE solvers built on diffsci: Brownian paths that return the same increment
for the same interval, solvers differentiated through the solver, by the stochastic adjoint method
or reversibly, and neural SDEs.

Nothing is implemented yet; the work is tracked by this package's issue.
"""
