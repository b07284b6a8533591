"""numba.cuda render and adjoint kernels: one thread per pixel sample, the CPU kernels' code.

The device functions are the CPU kernels' own Python sources (``_kernels.py``: intersection,
shading, Whitted loop, camera rays) recompiled with ``cuda.jit(device=True)`` in a private
namespace where every helper name refers to its device version, so the two back ends cannot drift
apart (the stackless BVH traversal included). ``render_cuda`` writes one colour per sample and
averages per pixel on the host side of the copy. The adjoint kernel is one thread per sample
too, running the CPU adjoint's own helpers with their ``_acc`` accumulators swapped for atomic
adds. Forward mode (the tangent kernel) and the edge terms run on the CPU.

numba.cuda is imported lazily (``_cuda()``), so importing this module never fixes numba.cuda's
mode; the kernel reaches it through the module global ``cuda``, which the CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``) swaps for its fake module.
"""

from __future__ import annotations

import functools
import types

import numpy as np

from . import _kernels as K

__all__ = [
    "CUDA_MAX_DEPTH",
    "THREADS_PER_BLOCK",
    "adjoint_tables_cuda",
    "render_adjoint_samples_cuda",
    "render_cuda",
    "render_samples_cuda",
]

THREADS_PER_BLOCK = 128
#: The adjoint kernel keeps each sample's ray chain in a fixed-size per-thread array.
CUDA_MAX_DEPTH = 15
_REC_ROWS = CUDA_MAX_DEPTH + 1
_REC_COLS = K._B_COLS + 1

# numba.cuda, bound on first use by _cuda(); see diffsci/_gpu_checks.py for why a module global.
cuda = None
# Device functions, bound by _device(): the kernel body calls them as module globals.
_trace_d = None
_primary_d = None
_offsets_d = None
_trace_adj_d = None
_normalize_adj_d = None
_acc_d = None

#: The CPU kernels' helpers recompiled as device functions.
_DEVICE_HELPERS = (
    "_dot", "_add", "_sub", "_scale", "_mul", "_axpy", "_cross", "_row", "_triangle_t", "_slab",
    "_box_hit", "_intersect_analytic", "_intersect", "_occluded", "_geometry", "_material_index",
    "_tex_axis", "_tex_lookup", "_tex_scatter", "_barycentric", "_uv", "_diffuse", "_diffuse_adj",
    "_light_term", "_shade", "sample_offsets",
    "_primary", "_trace", "_normalize_adj", "_light_term_adj", "_shade_adj", "_hit_adj",
    "_trace_adj",
)


# Gradient accumulation: many threads add into the same table rows, so the CUDA versions of the
# kernels' _acc helpers are atomic adds (swapped in by name when the helpers are compiled).
def _acc1_atomic(g, i, j, v):
    cuda.atomic.add(g, (i, j), v)


def _acc_atomic(g, i, off, v):
    cuda.atomic.add(g, (i, off), v[0])
    cuda.atomic.add(g, (i, off + 1), v[1])
    cuda.atomic.add(g, (i, off + 2), v[2])


def _acc2_atomic(g, v):
    cuda.atomic.add(g, 0, v[0])
    cuda.atomic.add(g, 1, v[1])
    cuda.atomic.add(g, 2, v[2])


_ATOMIC = {"_acc1": _acc1_atomic, "_acc": _acc_atomic, "_acc2": _acc2_atomic}


def _cuda():
    """Import numba.cuda lazily (fixing its mode, real or simulator, only now) and return it."""
    global cuda
    if cuda is None:
        from numba import cuda as numba_cuda

        cuda = numba_cuda
    return cuda


@functools.cache
def _device():
    """Compile the tracing helpers as device functions and the kernels: (render, adjoint)."""
    global _trace_d, _primary_d, _offsets_d, _trace_adj_d, _normalize_adj_d, _acc_d
    c = _cuda()
    ns = dict(vars(K))
    for name, f in _ATOMIC.items():
        ns[name] = c.jit(device=True)(f)
    for name in _DEVICE_HELPERS:
        f = getattr(K, name).py_func
        clone = types.FunctionType(f.__code__, ns, name, f.__defaults__, f.__closure__)
        ns[name] = c.jit(device=True)(clone)
    _trace_d, _primary_d, _offsets_d = ns["_trace"], ns["_primary"], ns["sample_offsets"]
    _trace_adj_d, _normalize_adj_d, _acc_d = ns["_trace_adj"], ns["_normalize_adj"], ns["_acc"]
    return c.jit(_render_samples_body), c.jit(_adjoint_samples_body)


def _render_samples_body(width, height, side, depth, seed, cam, bg, sph, sph_mat, pln, pln_mat,
                         verts, uvs, tri, tri_mat, mat, tex, plights, dlights, bvh, order, out):
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
        col = _trace_d(eye, d, depth, bg, sph, sph_mat, pln, pln_mat, verts, uvs, tri, tri_mat,
                       mat, tex, plights, dlights, bvh, order)
        out[idx, 0] = col[0]
        out[idx, 1] = col[1]
        out[idx, 2] = col[2]


def render_samples_cuda(width, height, side, depth, seed, cam, bg, sph, sph_mat, pln, pln_mat,
                        verts, uvs, tri, tri_mat, mat, tex, plights, dlights, bvh, order):
    """Launch one thread per sample on device (or host) tables: device array (H·W·side², 3)."""
    kernel = _device()[0]
    c = _cuda()
    n = width * height * side * side
    out = c.device_array((n, 3), dtype=np.float64)
    blocks = (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    kernel[blocks, THREADS_PER_BLOCK](width, height, side, depth, float(seed), cam, bg, sph,
                                      sph_mat, pln, pln_mat, verts, uvs, tri, tri_mat, mat, tex,
                                      plights, dlights, bvh, order, out)
    return out


def render_cuda(width, height, side, depth, seed, packed):
    """Render packed tables on the GPU: host image (height, width, 3), the mean of the samples."""
    c = _cuda()
    tables = tuple(c.to_device(np.ascontiguousarray(t)) for t in packed.tables())
    samples = render_samples_cuda(width, height, side, depth, seed, *tables).copy_to_host()
    return samples.reshape(height, width, side * side, 3).mean(axis=2)


def _adjoint_samples_body(width, height, side, depth, seed, cam, bg, sph, sph_mat, pln, pln_mat,
                          verts, uvs, tri, tri_mat, mat, tex, plights, dlights, bvh, order, gimg,
                          gcam, gbg, gsph, gpln, gverts, guvs, gmat, gtex, gpl, gdl):
    idx = cuda.grid(1)
    ns = side * side
    if idx < width * height * ns:
        pix = idx // ns
        k = idx - pix * ns
        i = pix // width
        j = pix - i * width
        gbar = (gimg[i, j, 0] / ns, gimg[i, j, 1] / ns, gimg[i, j, 2] / ns)
        if gbar[0] == 0.0 and gbar[1] == 0.0 and gbar[2] == 0.0:
            return
        rec = cuda.local.array((_REC_ROWS, _REC_COLS), np.float64)
        sx, sy = _offsets_d(pix, k, side, seed)
        u, al, be = _primary_d(cam, i, j, sx, sy, width, height)
        un = (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) ** 0.5
        d = (u[0] / un, u[1] / un, u[2] / un)
        eye = (cam[0, 0], cam[0, 1], cam[0, 2])
        obar, dbar = _trace_adj_d(eye, d, gbar, depth, bg, sph, sph_mat, pln, pln_mat, verts, uvs,
                                  tri, tri_mat, mat, tex, plights, dlights, bvh, order, rec, gbg,
                                  gsph, gpln, gverts, guvs, gmat, gtex, gpl, gdl)
        ubar = _normalize_adj_d(u, un, dbar)
        _acc_d(gcam, 0, 0, obar)
        _acc_d(gcam, 1, 0, ubar)
        _acc_d(gcam, 2, 0, (al * ubar[0], al * ubar[1], al * ubar[2]))
        _acc_d(gcam, 3, 0, (be * ubar[0], be * ubar[1], be * ubar[2]))


def render_adjoint_samples_cuda(width, height, side, depth, seed, tables, gimg, grads):
    """Launch one adjoint thread per sample; ``grads`` are device arrays (cam, bg, sph, pln,
    verts, uvs, mat, tex, plights, dlights) that the threads add into atomically."""
    kernel = _device()[1]
    n = width * height * side * side
    blocks = (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    kernel[blocks, THREADS_PER_BLOCK](width, height, side, depth, float(seed), *tables, gimg,
                                      *grads)


def adjoint_tables_cuda(packed, width, height, side, depth, seed, gimg):
    """The adjoint on the GPU: cotangents of every table (dict keyed like Packed), as
    :func:`raytrace._ops.adjoint_tables` computes on the CPU (same sums, another order)."""
    if depth > CUDA_MAX_DEPTH:
        raise ValueError(f"render: depth: the CUDA adjoint supports depth <= {CUDA_MAX_DEPTH}, "
                         f"got {depth}")
    c = _cuda()
    names = ("cam", "bg", "sph", "pln", "verts", "uvs", "mat", "tex", "plights", "dlights")
    tables = tuple(c.to_device(np.ascontiguousarray(t)) for t in packed.tables())
    grads = tuple(c.to_device(np.zeros_like(getattr(packed, name))) for name in names)
    render_adjoint_samples_cuda(width, height, side, depth, seed, tables,
                                c.to_device(np.ascontiguousarray(gimg, dtype=np.float64)), grads)
    return {name: g.copy_to_host() for name, g in zip(names, grads)}
