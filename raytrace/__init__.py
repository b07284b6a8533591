"""Differentiable ray tracer (not implemented yet).

This package will hold a differentiable ray tracer built on diffsci: scenes, materials, lights and
cameras described by frozen dataclasses; Numba render kernels with hand-written adjoint kernels;
numba.cuda versions of the same kernels selected with ``device="cuda"``. Gradients of rendered
images with respect to scene parameters will come from ``diffsci.grad``.

Nothing is implemented yet; the work is tracked by this package's issue.
"""
