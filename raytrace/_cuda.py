"""numba.cuda render kernel: one thread per pixel sample, the same tracing code as the CPU kernel.

The device functions are the CPU kernels' own Python sources (``_kernels.py``: intersection,
shading, Whitted loop, camera rays) recompiled with ``cuda.jit(device=True)`` in a private
namespace where every helper name refers to its device version, so the two back ends cannot drift
apart (the stackless BVH traversal included). ``render_cuda`` writes one colour per sample and
averages per pixel on the host side of the copy. The gradient of a ``device="cuda"`` render runs
the CPU adjoint kernel.

numba.cuda is imported lazily (``_cuda()``), so importing this module never fixes numba.cuda's
mode; the kernel reaches it through the module global ``cuda``, which the CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``) swaps for its fake module.
"""

from __future__ import annotations

import functools
import types

import numpy as np

from . import _kernels as K

__all__ = ["THREADS_PER_BLOCK", "render_cuda", "render_samples_cuda"]

THREADS_PER_BLOCK = 128

# numba.cuda, bound on first use by _cuda(); see diffsci/_gpu_checks.py for why a module global.
cuda = None
# Device functions, bound by _device(): the kernel body calls them as module globals.
_trace_d = None
_primary_d = None
_offsets_d = None

#: The CPU kernels' helpers recompiled as device functions.
_DEVICE_HELPERS = (
    "_dot", "_add", "_sub", "_scale", "_mul", "_axpy", "_cross", "_row", "_triangle_t", "_slab",
    "_box_hit", "_intersect_analytic", "_intersect", "_occluded", "_geometry", "_material_index",
    "_light_term", "_shade", "sample_offsets",
    "_primary", "_trace",
)


def _cuda():
    """Import numba.cuda lazily (fixing its mode, real or simulator, only now) and return it."""
    global cuda
    if cuda is None:
        from numba import cuda as numba_cuda

        cuda = numba_cuda
    return cuda


@functools.cache
def _device():
    """Compile the tracing helpers as device functions and the kernel; returns the kernel."""
    global _trace_d, _primary_d, _offsets_d
    c = _cuda()
    ns = dict(vars(K))
    for name in _DEVICE_HELPERS:
        f = getattr(K, name).py_func
        clone = types.FunctionType(f.__code__, ns, name, f.__defaults__, f.__closure__)
        ns[name] = c.jit(device=True)(clone)
    _trace_d, _primary_d, _offsets_d = ns["_trace"], ns["_primary"], ns["sample_offsets"]
    return c.jit(_render_samples_body)


def _render_samples_body(width, height, side, depth, seed, cam, bg, sph, sph_mat, pln, pln_mat,
                         verts, tri, tri_mat, mat, plights, dlights, bvh, order, out):
    idx = cuda.grid(1)
    ns = side * side
    if idx < out.shape[0]:
        pix = idx // ns
        k = idx - pix * ns
        i = pix // width
        j = pix - i * width
        sx, sy = _offsets_d(pix, k, side, seed)
        u, al, be = _primary_d(cam, i, j, sx, sy, width, height)
        inv = 1.0 / (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) ** 0.5
        d = (u[0] * inv, u[1] * inv, u[2] * inv)
        eye = (cam[0, 0], cam[0, 1], cam[0, 2])
        col = _trace_d(eye, d, depth, bg, sph, sph_mat, pln, pln_mat, verts, tri, tri_mat, mat,
                       plights, dlights, bvh, order)
        out[idx, 0] = col[0]
        out[idx, 1] = col[1]
        out[idx, 2] = col[2]


def render_samples_cuda(width, height, side, depth, seed, cam, bg, sph, sph_mat, pln, pln_mat,
                        verts, tri, tri_mat, mat, plights, dlights, bvh, order):
    """Launch one thread per sample on device (or host) tables: device array (H·W·side², 3)."""
    kernel = _device()
    c = _cuda()
    n = width * height * side * side
    out = c.device_array((n, 3), dtype=np.float64)
    blocks = (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    kernel[blocks, THREADS_PER_BLOCK](width, height, side, depth, float(seed), cam, bg, sph,
                                      sph_mat, pln, pln_mat, verts, tri, tri_mat, mat, plights,
                                      dlights, bvh, order, out)
    return out


def render_cuda(width, height, side, depth, seed, packed):
    """Render packed tables on the GPU: host image (height, width, 3), the mean of the samples."""
    c = _cuda()
    tables = tuple(c.to_device(np.ascontiguousarray(t)) for t in packed.tables())
    samples = render_samples_cuda(width, height, side, depth, seed, *tables).copy_to_host()
    return samples.reshape(height, width, side * side, 3).mean(axis=2)
