"""GPU checks for raytrace's kernels, collected by ``benchmarks/gpu_check.py``.

``render``: the numba.cuda render kernel (one thread per pixel) against the CPU Numba kernel and
an independent vectorised float64 NumPy renderer (structure-of-arrays ray batches, masks instead
of branches, a sentinel distance for misses) on a random scene of spheres over a mirror plane
with two point lights, hard shadows and 2 mirror bounces. ``size`` is the image side in pixels.

numba.cuda is imported inside functions only (``raytrace._cuda``), so importing this module never
fixes numba.cuda's mode.
"""

from __future__ import annotations

import numpy as np

from diffsci.devices import GpuCheck

from . import _kernels as K
from ._pack import camera_table

DEPTH = 2
_EPS = K.T_EPS


def _inputs(rng: np.random.Generator, size: int):
    ns = 6
    sph = np.column_stack([rng.uniform(-2, 2, ns), rng.uniform(-0.5, 1.5, ns),
                           rng.uniform(-1, 3, ns), rng.uniform(0.3, 0.8, ns)])
    pln = np.array([[0.0, -1.0, 0.0, 0.0, 1.0, 0.0]])
    mat = np.column_stack([rng.uniform(0.1, 1, (ns + 1, 3)), rng.uniform(0, 0.5, (ns + 1, 3)),
                           rng.uniform(5, 50, ns + 1), rng.uniform(0, 0.6, ns + 1),
                           rng.uniform(0, 0.1, (ns + 1, 3))])
    plights = np.array([[3.0, 5.0, -4.0, 1.0, 0.9, 0.8, 400.0],
                        [-4.0, 3.0, -2.0, 0.5, 0.6, 1.0, 200.0]])
    cam = camera_table(np.array([0.0, 1.0, -6.0]), np.array([0.0, 0.0, 1.0]),
                       np.array([0.0, 1.0, 0.0]), 50.0, size, size)
    return (size, size, 1, DEPTH, 0.0, cam, np.array([0.1, 0.1, 0.2]), sph,
            np.arange(ns), pln, np.array([ns]), np.zeros((0, 3)), np.zeros((0, 3), np.int64),
            np.zeros(0, np.int64), mat, plights, np.zeros((0, 7)), np.zeros((0, K.BVH_COLS)),
            np.zeros(0, np.int64))


def _cpu(width, height, side, depth, seed, *tables):
    out = np.empty((height, width, 3))
    K.render_kernel(width, height, side, depth, seed, *tables, out)
    return out.reshape(-1, 3)


def _gpu(width, height, side, depth, seed, *tables):
    from ._cuda import render_samples_cuda

    return render_samples_cuda(width, height, side, depth, seed, *tables)


def _hits(o, d, sph, pln, tmax):
    """Closest hit per ray: (t, object id) with id < len(sph) for spheres; t = inf on a miss."""
    ts = []
    for c in sph:
        oc = o - c[:3]
        b = np.sum(oc * d, 1)
        disc = b * b - np.sum(oc * oc, 1) + c[3] ** 2
        sq = np.sqrt(np.maximum(disc, 0))
        t0, t1 = -b - sq, -b + sq
        t = np.where(t0 > _EPS, t0, t1)
        ts.append(np.where((disc > 0) & (t > _EPS) & (t < tmax), t, np.inf))
    for p in pln:
        den = d @ p[3:]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = ((p[:3] - o) @ p[3:]) / den
        ts.append(np.where((den != 0) & (t > _EPS) & (t < tmax), t, np.inf))
    ts = np.array(ts)
    k = np.argmin(ts, 0)
    return ts[k, np.arange(len(o))], k


def _reference(width, height, side, depth, seed, cam, bg, sph, sph_mat, pln, pln_mat, verts, tri,
               tri_mat, mat, plights, dlights, bvh, order):
    j, i = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    u = (cam[1] + (2 * j.reshape(-1, 1) / width - 1) * cam[2]
         + (1 - 2 * i.reshape(-1, 1) / height) * cam[3])
    d = u / np.linalg.norm(u, axis=1, keepdims=True)
    o = np.broadcast_to(cam[0], d.shape).copy()
    col, w = np.zeros_like(d), np.ones(len(d))
    mats = np.concatenate([sph_mat, pln_mat])
    for _ in range(depth + 1):
        t, k = _hits(o, d, sph, pln, np.inf)
        hit = np.isfinite(t) & (w > 0)
        col += np.where((~np.isfinite(t) & (w > 0))[:, None], w[:, None] * bg, 0)
        x = o + np.where(hit, t, 0)[:, None] * d
        ks = np.minimum(k, len(sph) - 1)
        n_s = (x - sph[ks, :3]) / sph[ks, 3:4]
        n_p = np.broadcast_to(pln[0, 3:] / np.linalg.norm(pln[0, 3:]), d.shape)
        n = np.where((k < len(sph))[:, None], n_s, n_p)
        n = np.where((np.sum(n * d, 1) > 0)[:, None], -n, n)
        m = mat[mats[k]]
        c = m[:, 8:11].copy()
        for L in plights:
            wv = L[:3] - x
            dist = np.linalg.norm(wv, axis=1)
            lv = wv / dist[:, None]
            nl = np.sum(n * lv, 1)
            vis = (nl > 0) & ~np.isfinite(_hits(x, lv, sph, pln, dist[:, None].T[0])[0])
            h = lv - d
            h /= np.linalg.norm(h, axis=1, keepdims=True)
            nh = np.sum(n * h, 1)
            spec = np.where(nh > 0, np.maximum(nh, 0) ** m[:, 6], 0)
            e = L[6] * L[3:6] / (4 * np.pi * dist[:, None] ** 2)
            shade = e * (m[:, 0:3] * nl[:, None] + m[:, 3:6] * spec[:, None])
            c += np.where(vis[:, None], shade, 0)
        col += np.where(hit[:, None], w[:, None] * c, 0)
        w = np.where(hit, w * m[:, 7], 0)
        o, d = x, d - 2 * np.sum(d * n, 1)[:, None] * n
    return col


CHECKS = [
    GpuCheck(
        package="raytrace",
        name="render",
        make_inputs=_inputs,
        cpu_fn=_cpu,
        cuda_fn=_gpu,
        reference_fn=_reference,
        size=512,
        sim_size=6,
        rtol=1e-9,
    ),
]
