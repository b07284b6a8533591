"""Coefficient tables of the stochastic Runge–Kutta solvers (data only)."""
