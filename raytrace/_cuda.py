"""numba.cuda render, adjoint, tangent and edge-term kernels: the CPU kernels' code on the GPU.

The device functions are the CPU kernels' own Python sources (``_kernels.py``: intersection,
shading, Whitted loop, camera rays) recompiled with ``cuda.jit(device=True)`` in a private
namespace where every helper name refers to its device version, so the two back ends cannot drift
apart (the stackless BVH traversal included). ``render_cuda`` writes one colour per sample and
averages per pixel on the host side of the copy. The adjoint kernel is one thread per sample
too, running the CPU adjoint's own helpers with their ``_acc`` accumulators swapped for atomic
adds; the tangent (forward-mode) kernel is one thread per sample writing the sample's colour and
its tangent. The edge terms' two kernels — radiance along one primary ray per screen point
(``render_points_cuda``) and closest-hit ray casts (``cast_cuda``) — are one thread per point or
ray; the edge sampling itself (a few NumPy calls per curve) stays on the host.

numba.cuda is imported lazily (``_cuda()``), so importing this module never fixes numba.cuda's
mode; the kernel reaches it through the module global ``cuda``, which the CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``) swaps for its fake module.
"""

from __future__ import annotations

import functools
import math
import types

import numpy as np

from . import _kernels as K

__all__ = [
    "CUDA_MAX_DEPTH",
    "THREADS_PER_BLOCK",
    "adjoint_tables_cuda",
    "cast_cuda",
    "render_adjoint_samples_cuda",
    "render_cuda",
    "render_points_cuda",
    "render_samples_cuda",
    "tangent_cuda",
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
_trace_jvp_d = None
_normalize_jvp_d = None
_intersect_d = None

#: The CPU kernels' helpers recompiled as device functions.
_DEVICE_HELPERS = (
    "_dot", "_add", "_sub", "_scale", "_mul", "_axpy", "_cross", "_row", "_triangle_t", "_slab",
    "_box_hit", "_intersect_analytic", "_intersect", "_occluded", "_geometry", "_material_index",
    "_tex_axis", "_tex_lookup", "_tex_scatter", "_barycentric", "_uv", "_diffuse", "_diffuse_adj",
    "_light_term", "_shade", "sample_offsets",
    "_primary", "_trace", "_normalize_adj", "_light_term_adj", "_shade_adj", "_hit_adj",
    "_trace_adj", "_normalize_jvp", "_light_term_jvp", "_shade_jvp", "_hit_jvp", "_diffuse_jvp",
    "_trace_jvp",
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
    """Compile the tracing helpers as device functions and the kernels (a dict by name)."""
    global _trace_d, _primary_d, _offsets_d, _trace_adj_d, _normalize_adj_d, _acc_d
    global _trace_jvp_d, _normalize_jvp_d, _intersect_d
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
    _trace_jvp_d, _normalize_jvp_d = ns["_trace_jvp"], ns["_normalize_jvp"]
    _intersect_d = ns["_intersect"]
    return {"render": c.jit(_render_samples_body), "adjoint": c.jit(_adjoint_samples_body),
            "tangent": c.jit(_tangent_samples_body), "points": c.jit(_points_body),
            "cast": c.jit(_cast_body)}


def _launch(kernel, n, *args):
    """Run ``kernel`` on one thread per item (nothing to do for n = 0)."""
    if n:
        kernel[(n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK, THREADS_PER_BLOCK](*args)


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
    kernel = _device()["render"]
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
    kernel = _device()["adjoint"]
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


def _tangent_samples_body(width, height, side, depth, seed, cam, bg, sph, sph_mat, pln, pln_mat,
                          verts, uvs, tri, tri_mat, mat, tex, plights, dlights, bvh, order, dcam,
                          dbg, dsph, dpln, dverts, duvs, dmat, dtex, dpl, ddl, out, dout):
    idx = cuda.grid(1)
    ns = side * side
    if idx < out.shape[0]:
        pix = idx // ns
        k = idx - pix * ns
        i = pix // width
        j = pix - i * width
        sx, sy = _offsets_d(pix, k, side, seed)
        u, al, be = _primary_d(cam, i, j, sx, sy, width, height)
        du = (dcam[1, 0] + al * dcam[2, 0] + be * dcam[3, 0],
              dcam[1, 1] + al * dcam[2, 1] + be * dcam[3, 1],
              dcam[1, 2] + al * dcam[2, 2] + be * dcam[3, 2])
        un = (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) ** 0.5
        d = (u[0] / un, u[1] / un, u[2] / un)
        dd = _normalize_jvp_d(u, un, du)
        eye = (cam[0, 0], cam[0, 1], cam[0, 2])
        deye = (dcam[0, 0], dcam[0, 1], dcam[0, 2])
        c, dc = _trace_jvp_d(eye, deye, d, dd, depth, bg, sph, sph_mat, pln, pln_mat, verts, uvs,
                             tri, tri_mat, mat, tex, plights, dlights, bvh, order, dbg, dsph, dpln,
                             dverts, duvs, dmat, dtex, dpl, ddl)
        for q in range(3):
            out[idx, q] = c[q]
            dout[idx, q] = dc[q]


def tangent_cuda(width, height, side, depth, seed, packed, tangents):
    """Forward mode on the GPU: host (image, image tangent), each (height, width, 3), for the
    table tangents ``tangents`` (dict keyed like the differentiable tables), as
    ``render_tangent_kernel`` computes on the CPU."""
    from ._ops import GRAD_TABLES

    c = _cuda()
    n = width * height * side * side
    tables = tuple(c.to_device(np.ascontiguousarray(t)) for t in packed.tables())
    dtabs = tuple(c.to_device(np.ascontiguousarray(tangents[name], dtype=np.float64))
                  for name in GRAD_TABLES)
    out = c.device_array((n, 3), dtype=np.float64)
    dout = c.device_array((n, 3), dtype=np.float64)
    _launch(_device()["tangent"], n, width, height, side, depth, float(seed), *tables, *dtabs,
            out, dout)
    shape = (height, width, side * side, 3)
    return (out.copy_to_host().reshape(shape).mean(axis=2),
            dout.copy_to_host().reshape(shape).mean(axis=2))


def _points_body(points, depth, cam, bg, sph, sph_mat, pln, pln_mat, verts, uvs, tri, tri_mat,
                 mat, tex, plights, dlights, bvh, order, width, height, out):
    k = cuda.grid(1)
    if k < points.shape[0]:
        u, al, be = _primary_d(cam, 0, 0, points[k, 0], points[k, 1], width, height)
        inv = 1.0 / (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) ** 0.5
        d = (u[0] * inv, u[1] * inv, u[2] * inv)
        eye = (cam[0, 0], cam[0, 1], cam[0, 2])
        col = _trace_d(eye, d, depth, bg, sph, sph_mat, pln, pln_mat, verts, uvs, tri, tri_mat,
                       mat, tex, plights, dlights, bvh, order)
        out[k, 0] = col[0]
        out[k, 1] = col[1]
        out[k, 2] = col[2]


def render_points_cuda(packed, points, depth, width, height):
    """Radiance (N, 3) along one primary ray through each screen point, as
    ``render_points_kernel`` computes on the CPU (the edge terms' f(s ± δn))."""
    c = _cuda()
    tables = tuple(c.to_device(np.ascontiguousarray(t)) for t in packed.tables())
    n = len(points)
    out = c.device_array((max(n, 1), 3), dtype=np.float64)
    _launch(_device()["points"], n, c.to_device(np.ascontiguousarray(points, dtype=np.float64)),
            depth, *tables, width, height, out)
    return out.copy_to_host()[:n]


def _cast_body(origins, dirs, sph, pln, verts, tri, bvh, order, t_out, kind_out, idx_out):
    k = cuda.grid(1)
    if k < origins.shape[0]:
        o = (origins[k, 0], origins[k, 1], origins[k, 2])
        inv = 1.0 / (dirs[k, 0] ** 2 + dirs[k, 1] ** 2 + dirs[k, 2] ** 2) ** 0.5
        d = (dirs[k, 0] * inv, dirs[k, 1] * inv, dirs[k, 2] * inv)
        t, kind, idx = _intersect_d(o, d, K.T_EPS, math.inf, sph, pln, verts, tri, bvh, order)
        t_out[k] = t
        kind_out[k] = kind
        idx_out[k] = idx


def cast_cuda(packed, origins, dirs):
    """Closest hits (t, kind, index) of rays origins[k] + t d̂[k], as ``cast_kernel`` on the CPU."""
    c = _cuda()
    n = len(origins)
    t = c.device_array(max(n, 1), dtype=np.float64)
    kind = c.device_array(max(n, 1), dtype=np.int64)
    idx = c.device_array(max(n, 1), dtype=np.int64)
    tabs = tuple(c.to_device(np.ascontiguousarray(getattr(packed, name)))
                 for name in ("sph", "pln", "verts", "tri", "bvh", "order"))
    _launch(_device()["cast"], n, c.to_device(np.ascontiguousarray(origins, dtype=np.float64)),
            c.to_device(np.ascontiguousarray(dirs, dtype=np.float64)), *tabs, t, kind, idx)
    return t.copy_to_host()[:n], kind.copy_to_host()[:n], idx.copy_to_host()[:n]
