"""Differentiable state-vector quantum simulator (not implemented yet).

This package will hold a state-vector simulator built on diffsci: gates, circuits and observables;
Numba and numba.cuda kernels for gate application; gradients of expectation values by the adjoint
method, usable through ``diffsci.grad`` with respect to circuit parameters.

Nothing is implemented yet; the work is tracked by this package's issue.
"""
