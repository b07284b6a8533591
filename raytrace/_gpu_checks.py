"""GPU checks for raytrace's kernels, collected by ``benchmarks/gpu_check.py``.

``render``: the numba.cuda render kernel (one thread per pixel) against the CPU Numba kernel and
an independent vectorised float64 NumPy renderer (structure-of-arrays ray batches, masks instead
of branches, a sentinel distance for misses) on a random scene of spheres over a mirror plane
with two point lights, hard shadows and 2 mirror bounces. ``size`` is the image side in pixels.

``render_adjoint``: the numba.cuda adjoint kernel (one thread per sample, atomic accumulation)
against the CPU adjoint kernel and diffsci's tape through the same vectorised renderer (no
hand-written adjoint): the gradient of ⟨G, image⟩ for a random G with respect to the background,
sphere, plane, material and light tables.

``render_tangent``: the numba.cuda tangent kernel (forward mode, one thread per sample) against
the CPU tangent kernel and diffsci's forward mode (dual numbers) through the vectorised renderer,
for a random tangent of the camera, background, sphere, plane, material and light tables.

``render_points`` and ``cast``: the edge terms' kernels — radiance along one primary ray through
each of N random screen points, and closest hits of N random rays — against the CPU kernels and
the vectorised renderer / intersection.

numba.cuda is imported inside functions only (``raytrace._cuda``), so importing this module never
fixes numba.cuda's mode.
"""

from __future__ import annotations

import numba
import numpy as np

import diffsci as ds
from diffsci.devices import GpuCheck

from . import _kernels as K
from ._pack import camera_table

DEPTH = 2
_EPS = K.T_EPS


def _inputs(rng: np.random.Generator, size: int):
    ns = 6
    sph = np.column_stack([rng.uniform(-2, 2, ns), rng.uniform(-0.5, 1.5, ns),
                           rng.uniform(-1, 3, ns), rng.uniform(0.3, 0.8, ns)])
    pln = np.array([[0.0, -1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]])
    no_texture = np.tile([-1.0, 0.0, 0.0], (ns + 1, 1))
    mat = np.column_stack([rng.uniform(0.1, 1, (ns + 1, 3)), rng.uniform(0, 0.5, (ns + 1, 3)),
                           rng.uniform(5, 50, ns + 1), rng.uniform(0, 0.6, ns + 1),
                           rng.uniform(0, 0.1, (ns + 1, 3)), no_texture])
    plights = np.array([[3.0, 5.0, -4.0, 1.0, 0.9, 0.8, 400.0],
                        [-4.0, 3.0, -2.0, 0.5, 0.6, 1.0, 200.0]])
    cam = camera_table(np.array([0.0, 1.0, -6.0]), np.array([0.0, 0.0, 1.0]),
                       np.array([0.0, 1.0, 0.0]), 50.0, size, size)
    return (size, size, 1, DEPTH, 0.0, cam, np.array([0.1, 0.1, 0.2]), sph,
            np.arange(ns), pln, np.array([ns]), np.zeros((0, 3)), np.zeros((0, 2)),
            np.zeros((0, 3), np.int64), np.zeros(0, np.int64), mat, np.zeros((0, 3)), plights,
            np.zeros((0, 7)), np.zeros((0, K.BVH_COLS)), np.zeros(0, np.int64))


def _cpu(width, height, side, depth, seed, *tables):
    out = np.empty((height, width, 3))
    K.render_kernel(width, height, side, depth, seed, *tables, out)
    return out.reshape(-1, 3)


def _gpu(width, height, side, depth, seed, *tables):
    from ._cuda import render_samples_cuda

    return render_samples_cuda(width, height, side, depth, seed, *tables)


_BIG = 1e30
_EPS = K.T_EPS


def _vec_hits(o, d, sph, pln, tmax=None):
    """Closest sphere/plane hit per ray, vectorised: t (sentinel _BIG on a miss) and the index
    of the object (spheres first), as plain ints."""
    ts = []
    for k in range(len(sph)):
        oc = o - sph[k, :3]
        b = np.sum(oc * d, axis=1)
        disc = b * b - np.sum(oc * oc, axis=1) + sph[k, 3] ** 2
        ok = disc > 0
        sq = np.sqrt(np.where(ok, disc, 1.0))
        t0, t1 = -b - sq, -b + sq
        t = np.where(t0 > _EPS, t0, t1)
        ts.append(np.where(ok & (t > _EPS), t, _BIG))
    for k in range(len(pln)):
        den = d @ pln[k, 3:6]
        ok = den != 0
        t = np.sum((pln[k, :3] - o) * pln[k, 3:6], axis=1) / np.where(ok, den, 1.0)
        ts.append(np.where(ok & (t > _EPS), t, _BIG))
    ts = np.stack(ts)
    if tmax is not None:
        ts = np.where(ts < tmax, ts, _BIG)
    return np.min(ts, axis=0), np.argmin(ds.stop_gradient(ts), axis=0)


def vectorised_render(cam, bg, sph, pln, mat, plights, width, height, depth):
    """The same Whitted renderer (spheres, planes, point lights, hard shadows, mirror bounces)
    as structure-of-arrays NumPy: masks instead of branches, a sentinel distance for misses.
    Written with plain NumPy calls, so diffsci differentiates it by taping every array op: the
    "no hand-written adjoint" route. Material row k belongs to object k (spheres, then planes)."""
    j, i = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    al = (2.0 * j / width - 1.0).reshape(-1, 1)
    be = (1.0 - 2.0 * i / height).reshape(-1, 1)
    u = cam[1] + al * cam[2] + be * cam[3]
    d = u / np.sqrt(np.sum(u * u, axis=1, keepdims=True))
    o = cam[0] + 0.0 * d
    col = 0.0 * d
    w = np.ones(len(al))
    ns = len(sph)
    for _ in range(depth + 1):
        t, k = _vec_hits(o, d, sph, pln)
        hit = t < 0.5 * _BIG
        x = o + np.where(hit, t, 0.0)[:, None] * d
        n = 0.0 * d
        m = 0.0 * mat[0] + np.zeros((len(al), 1))
        for q in range(ns + len(pln)):
            sel = (k == q)[:, None]
            nq = (x - sph[q, :3]) / sph[q, 3] if q < ns else (
                pln[q - ns, 3:6] / np.sqrt(np.sum(pln[q - ns, 3:6] ** 2)) + 0.0 * x)
            n = np.where(sel, nq, n)
            m = np.where(sel, mat[q] + 0.0 * m, m)
        n = np.where((np.sum(n * d, axis=1) > 0)[:, None], -n, n)
        c = m[:, 8:11] + 0.0
        for li in range(len(plights)):
            wv = plights[li, :3] - x
            dist = np.sqrt(np.sum(wv * wv, axis=1))
            lv = wv / dist[:, None]
            nl = np.sum(n * lv, axis=1)
            vis = (nl > 0) & ~(_vec_hits(x, lv, sph, pln, ds.stop_gradient(dist))[0] < 0.5 * _BIG)
            h = lv - d
            h = h / np.sqrt(np.sum(h * h, axis=1, keepdims=True))
            nh = np.sum(n * h, axis=1)
            spec = np.where(nh > 0, np.where(nh > 0, nh, 1.0) ** m[:, 6], 0.0)
            e = plights[li, 6] * plights[li, 3:6] / (4 * np.pi * dist[:, None] ** 2)
            shade = e * (m[:, 0:3] * nl[:, None] + m[:, 3:6] * spec[:, None])
            c = c + np.where(vis[:, None], shade, 0.0)
        # After a miss w is 0 with a zero derivative, so later misses add nothing.
        col = col + w[:, None] * np.where(hit[:, None], c, bg)
        w = np.where(hit, w * m[:, 7], 0.0)
        o, d = x, d - 2.0 * np.sum(d * n, axis=1)[:, None] * n
    return col.reshape(height, width, 3)




def _reference(width, height, side, depth, seed, cam, bg, sph, sph_mat, pln, pln_mat, verts, uvs,
               tri, tri_mat, mat, tex, plights, dlights, bvh, order):
    """The vectorised renderer on the check's tables (one ray per pixel centre, side = 1)."""
    return vectorised_render(cam, bg, sph, pln, mat, plights, width, height, depth).reshape(-1, 3)


_GRAD_NAMES = ("bg", "sph", "pln", "mat", "plights")


def _adjoint_inputs(rng: np.random.Generator, size: int):
    return _inputs(rng, size) + (rng.normal(size=(size, size, 3)),)


def _adjoint_cpu(width, height, side, depth, seed, *tables_and_g):
    *tables, gimg = tables_and_g
    nc = 4 * numba.get_num_threads()
    z = {k: np.zeros((nc,) + v.shape) for k, v in _grad_rows(tables).items()}
    K.render_adjoint_kernel(width, height, side, depth, seed, *tables, gimg, nc, *z.values())
    return tuple(z[k].sum(axis=0) for k in _GRAD_NAMES)


#: Positions of the differentiable tables among the kernels' table arguments.
_TABLE_INDEX = {"cam": 0, "bg": 1, "sph": 2, "pln": 4, "verts": 6, "uvs": 7, "mat": 10,
                "tex": 11, "plights": 12, "dlights": 13}


def _grad_rows(tables):
    """The differentiable tables (in the adjoint kernel's order) of a kernel argument tuple."""
    return {k: tables[i] for k, i in _TABLE_INDEX.items()}


def _adjoint_gpu(width, height, side, depth, seed, *tables_and_g):
    from ._cuda import _cuda, render_adjoint_samples_cuda

    *tables, gimg = tables_and_g
    c = _cuda()
    grads = {k: c.to_device(np.zeros(v.shape)) for k, v in _grad_rows(tables).items()}
    render_adjoint_samples_cuda(width, height, side, depth, seed, tables, gimg,
                                tuple(grads.values()))
    return tuple(grads[k] for k in _GRAD_NAMES)


def _adjoint_reference(width, height, side, depth, seed, cam, bg, sph, sph_mat, pln, pln_mat,
                       verts, uvs, tri, tri_mat, mat, tex, plights, dlights, bvh, order, gimg):
    """diffsci's tape through the vectorised renderer (no hand-written adjoint)."""
    def loss(bg, sph, pln, mat, plights):
        return np.sum(gimg * vectorised_render(cam, bg, sph, pln, mat, plights, width, height,
                                               depth))

    return tuple(np.asarray(g) for g in ds.grad(loss, argnums=(0, 1, 2, 3, 4))(bg, sph, pln, mat,
                                                                                plights))


def _tangent_inputs(rng: np.random.Generator, size: int):
    """The render check's tables plus a random tangent of every differentiable table (the
    texture-layout columns of the material table get none)."""
    base = _inputs(rng, size)
    rows = _grad_rows(base[5:])
    tangents = {k: rng.normal(size=v.shape) for k, v in rows.items()}
    tangents["mat"][:, K.TEX:] = 0.0
    return base + tuple(tangents.values())


def _split_tangent(args):
    n = len(_TABLE_INDEX)
    return args[: len(args) - n], args[len(args) - n:]


def _tangent_cpu(width, height, side, depth, seed, *args):
    tables, tangents = _split_tangent(args)
    out = np.empty((height, width, 3))
    dout = np.empty((height, width, 3))
    K.render_tangent_kernel(width, height, side, depth, seed, *tables, *tangents, out, dout)
    return out.reshape(-1, 3), dout.reshape(-1, 3)


def _tangent_gpu(width, height, side, depth, seed, *args):
    from ._cuda import _cuda, _device, _launch

    c = _cuda()
    n = width * height * side * side
    out = c.device_array((n, 3), dtype=np.float64)
    dout = c.device_array((n, 3), dtype=np.float64)
    _launch(_device()["tangent"], n, width, height, side, depth, seed, *args, out, dout)
    return out, dout


def _tangent_reference(width, height, side, depth, seed, *args):
    """diffsci's forward mode (dual numbers) through the vectorised renderer."""
    tables, tangents = _split_tangent(args)
    t = dict(zip(_TABLE_INDEX, tangents))
    rows = _grad_rows(tables)
    names = ("cam", "bg", "sph", "pln", "mat", "plights")

    def image(cam, bg, sph, pln, mat, plights):
        return vectorised_render(cam, bg, sph, pln, mat, plights, width, height,
                                 depth).reshape(-1, 3)

    img, dimg = ds.jvp(image, tuple(rows[k] for k in names), tuple(t[k] for k in names))
    return np.asarray(img), np.asarray(dimg)


def _points_inputs(rng: np.random.Generator, size: int):
    """The render check's tables and ``size²`` random screen points."""
    base = _inputs(rng, size)
    return (rng.uniform(0.0, size, (size * size, 2)),) + base


def _points_cpu(points, width, height, side, depth, seed, *tables):
    out = np.empty((len(points), 3))
    K.render_points_kernel(points, depth, *tables, width, height, out)
    return out


def _points_gpu(points, width, height, side, depth, seed, *tables):
    from ._cuda import _cuda, _device, _launch

    out = _cuda().device_array((points.shape[0], 3), dtype=np.float64)
    _launch(_device()["points"], points.shape[0], points, depth, *tables, width, height, out)
    return out


def _points_reference(points, width, height, side, depth, seed, cam, bg, sph, sph_mat, pln,
                      pln_mat, verts, uvs, tri, tri_mat, mat, tex, plights, dlights, bvh, order):
    """The vectorised renderer with each screen point as a 1×1 image's pixel: the camera
    table is shifted so that its pixel centre lands on the point."""
    out = []
    for x, y in points:
        al = 2.0 * x / width - 1.0
        be = 1.0 - 2.0 * y / height
        one = np.stack([cam[0], cam[1] + al * cam[2] + be * cam[3], 0.0 * cam[2], 0.0 * cam[3]])
        out.append(vectorised_render(one, bg, sph, pln, mat, plights, 1, 1, depth).reshape(3))
    return np.stack(out)


def _cast_inputs(rng: np.random.Generator, size: int):
    base = _inputs(rng, 2)
    cam = base[5]
    n = size * size
    origins = cam[0] + 0.3 * rng.normal(size=(n, 3))
    dirs = cam[1] + 0.5 * rng.normal(size=(n, 3))
    return origins, dirs, base[7], base[9]


def _cast_cpu(origins, dirs, sph, pln):
    n = len(origins)
    t, kind, idx = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    none = np.zeros((0, 3)), np.zeros((0, 3), np.int64), np.zeros((0, K.BVH_COLS)), np.zeros(0, int)
    K.cast_kernel(origins, dirs, sph, pln, none[0], none[1], none[2], none[3], t, kind, idx)
    return np.where(kind >= 0, t, 0.0), kind.astype(np.float64), idx.astype(np.float64)


def _cast_gpu(origins, dirs, sph, pln):
    from ._cuda import _cuda, _device, _launch

    c = _cuda()
    n = origins.shape[0]
    t = c.device_array(n, dtype=np.float64)
    kind = c.device_array(n, dtype=np.int64)
    idx = c.device_array(n, dtype=np.int64)
    none = (c.to_device(np.zeros((0, 3))), c.to_device(np.zeros((0, 3), np.int64)),
            c.to_device(np.zeros((0, K.BVH_COLS))), c.to_device(np.zeros(0, np.int64)))
    _launch(_device()["cast"], n, origins, dirs, sph, pln, *none, t, kind, idx)
    t, kind, idx = t.copy_to_host(), kind.copy_to_host(), idx.copy_to_host()
    return np.where(kind >= 0, t, 0.0), kind.astype(np.float64), idx.astype(np.float64)


def _cast_reference(origins, dirs, sph, pln):
    """Closest sphere/plane hits by the vectorised intersection (misses: t 0, kind −1)."""
    d = dirs / np.linalg.norm(dirs, axis=1, keepdims=True)
    t, k = _vec_hits(origins, d, sph, pln)
    hit = t < 0.5 * _BIG
    kind = np.where(hit, np.where(k < len(sph), K.SPHERE, K.PLANE), K.MISS)
    idx = np.where(hit, np.where(k < len(sph), k, k - len(sph)), -1)
    return np.where(hit, t, 0.0), kind.astype(np.float64), idx.astype(np.float64)


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
    GpuCheck(
        package="raytrace",
        name="render_adjoint",
        make_inputs=_adjoint_inputs,
        cpu_fn=_adjoint_cpu,
        cuda_fn=_adjoint_gpu,
        reference_fn=_adjoint_reference,
        size=128,
        sim_size=4,
        rtol=1e-9,
    ),
    GpuCheck(
        package="raytrace",
        name="render_tangent",
        make_inputs=_tangent_inputs,
        cpu_fn=_tangent_cpu,
        cuda_fn=_tangent_gpu,
        reference_fn=_tangent_reference,
        size=256,
        sim_size=4,
        rtol=1e-9,
    ),
    GpuCheck(
        package="raytrace",
        name="render_points",
        make_inputs=_points_inputs,
        cpu_fn=_points_cpu,
        cuda_fn=_points_gpu,
        reference_fn=_points_reference,
        size=24,
        sim_size=3,
        rtol=1e-9,
    ),
    GpuCheck(
        package="raytrace",
        name="cast",
        make_inputs=_cast_inputs,
        cpu_fn=_cast_cpu,
        cuda_fn=_cast_gpu,
        reference_fn=_cast_reference,
        size=512,
        sim_size=4,
        rtol=1e-12,
    ),
]
