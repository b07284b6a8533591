"""Option pricing, Greeks, calibration and yield curves (not implemented yet).

This package will hold quantitative-finance tools built on diffsci: option pricing (closed form,
Fourier, Monte Carlo, trees, least-squares Monte Carlo), Greeks by adjoint AD, implied volatility,
model calibration and yield curves.

Nothing is implemented yet; the work is tracked by this package's issue.
"""
