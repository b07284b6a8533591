"""raytrace: render time vs adjoint time vs resolution (the paper asks AD ≤ ≈5× a render).

Scene: three spheres (two reflective), a mirror floor plane, a triangle-mesh height field
(``--mesh`` triangles, 10⁴ by default), a point light and a directional light; Whitted tracing
with hard shadows and 2 mirror bounces, one ray per pixel. For each resolution the table gives the
median wall time of

* render: ``raytrace.render`` (validation, packing, the parallel Numba render kernel);
* adjoint: ``back(ḡ)`` of ``ds.pullback(render, scene)`` (the hand-written adjoint kernel that
  re-traces every pixel, plus unpacking into a Scene-shaped cotangent);
* adjoint + edges: the same with ``edges=True`` (Li et al. 2018 edge sampling of primary
  silhouettes, 4 samples per pixel of edge length);

and primary rays per second of the render. A last table renders a ≈10⁵-triangle UV sphere
(``--big`` triangles) over the same floor at 256×256: BVH build time, render time (build
included), and the adjoint. Triangles are found through a BVH (``raytrace/_kernels.py``,
``build_bvh``), rebuilt on every render since vertices may change between renders.
Numba threads: all cores unless NUMBA_NUM_THREADS is set.

A third table measures the edge term's variance on a 32×32 scene (a sphere and a triangle over a
floor, lit by a point light, so both silhouettes and shadow boundaries move): for one parameter
at a time, d(loss)/dθ of a fixed weighted image sum by central differences of a 4096-spp render
(the reference), the interior-only gradient, and the ``edges=True`` gradient's mean and standard
deviation over 8 seeds (64 spp, edge density 4).

Usage:
    python benchmarks/bench_raytrace.py [--quick] [--repeats R] [--mesh TRIANGLES] [--big N]
        [--no-variance]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np

import diffsci as ds
import raytrace as rt
from raytrace import _kernels as K
from raytrace._pack import pack


def make_scene(size: int, mesh_triangles: int) -> rt.Scene:
    m = max(1, int(round(np.sqrt(mesh_triangles / 2))))
    x, z = np.meshgrid(np.linspace(-3.0, 3.0, m + 1), np.linspace(2.0, 5.0, m + 1))
    y = 0.3 * np.sin(2 * x) * np.cos(2 * z) + 0.5
    verts = np.column_stack([x.ravel(), y.ravel(), z.ravel()])
    idx = np.arange((m + 1) ** 2).reshape(m + 1, m + 1)
    a, b = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel()
    c, d = idx[1:, :-1].ravel(), idx[1:, 1:].ravel()
    faces = np.concatenate([np.column_stack([a, b, d]), np.column_stack([a, d, c])])
    shapes = (
        rt.Sphere((-1.2, 0.0, 0.5), 0.8, rt.Material(diffuse=(0.8, 0.2, 0.2), specular=(0.5,) * 3,
                                                       reflection=0.3)),
        rt.Sphere((1.0, -0.3, 0.0), 0.6, rt.Material(diffuse=(0.2, 0.3, 0.9), reflection=0.6)),
        rt.Sphere((0.2, 0.9, 1.5), 0.5, rt.Material(diffuse=(0.9, 0.9, 0.2))),
        rt.Plane((0.0, -1.0, 0.0), (0.0, 1.0, 0.0),
                 rt.Material(diffuse=(0.6,) * 3, reflection=0.2)),
        rt.Mesh(verts, faces, rt.Material(diffuse=(0.3, 0.8, 0.4), specular=(0.2,) * 3)),
    )
    lights = (rt.PointLight((3.0, 5.0, -4.0), 600.0), rt.DirectionalLight((-0.3, -1.0, 0.5), 0.5))
    cam = rt.Camera(eye=(0.0, 1.0, -6.0), look_at=(0.0, 0.2, 1.0), fov=50.0, width=size,
                    height=size)
    return rt.Scene(cam, shapes, lights, background=(0.1, 0.12, 0.2))


def uv_sphere(n):
    """A closed UV-sphere mesh with 4n(n − 1) triangles."""
    th = np.linspace(0.0, np.pi, n + 1)[1:-1]
    ph = np.linspace(0.0, 2.0 * np.pi, 2 * n, endpoint=False)
    t, p = np.meshgrid(th, ph, indexing="ij")
    v = np.column_stack([(np.sin(t) * np.cos(p)).ravel(), np.cos(t).ravel(),
                         (np.sin(t) * np.sin(p)).ravel()])
    v = np.vstack([v, [[0.0, 1.0, 0.0], [0.0, -1.0, 0.0]]])
    m, rows = 2 * n, n - 1
    idx = np.arange(rows * m).reshape(rows, m)
    nxt = np.roll(idx, -1, axis=1)
    a, b, c, d = idx[:-1].ravel(), nxt[:-1].ravel(), idx[1:].ravel(), nxt[1:].ravel()
    faces = np.concatenate([
        np.column_stack([a, c, b]), np.column_stack([b, c, d]),
        np.column_stack([np.full(m, rows * m), idx[0], nxt[0]]),
        np.column_stack([np.full(m, rows * m + 1), nxt[-1], idx[-1]]),
    ])
    return v, faces


def big_mesh_scene(size: int, triangles: int) -> rt.Scene:
    n = max(2, int(round((1 + np.sqrt(1 + triangles)) / 2)))
    v, f = uv_sphere(n)
    shapes = (
        rt.Mesh(v + np.array([0.0, 0.0, 1.0]), f,
                rt.Material(diffuse=(0.8, 0.3, 0.2), specular=(0.5,) * 3, reflection=0.3)),
        rt.Sphere((1.6, -0.5, 0.2), 0.5, rt.Material(diffuse=(0.2, 0.3, 0.9), reflection=0.6)),
        rt.Plane((0.0, -1.0, 0.0), (0.0, 1.0, 0.0),
                 rt.Material(diffuse=(0.6,) * 3, reflection=0.2)),
    )
    lights = (rt.PointLight((3.0, 5.0, -4.0), 600.0),)
    cam = rt.Camera(eye=(0.0, 1.0, -4.0), look_at=(0.0, 0.0, 1.0), width=size, height=size)
    return rt.Scene(cam, shapes, lights, background=(0.1, 0.12, 0.2))


def variance_scene(centre, tri_shift, light, eye, size=32):
    tri = np.array([[-0.8, 0.5, -0.6], [0.7, 0.5, -0.4], [0.0, 0.6, 0.6]]) + tri_shift
    return rt.Scene(
        rt.Camera(eye=eye, look_at=(0.0, -0.5, 0.5), width=size, height=size),
        (rt.Plane((0.0, -1.0, 0.0), (0.0, 1.0, 0.0), rt.Material(diffuse=(0.8,) * 3)),
         rt.Triangle(*tri, material=rt.Material(diffuse=(0.2, 0.3, 0.9))),
         rt.Sphere(centre, 0.4, rt.Material(diffuse=(0.9, 0.5, 0.2)))),
        (rt.PointLight(light, 300.0),))


def variance_table(seeds: int = 8) -> None:
    x = np.array([1.0, 0.0, 0.0])
    base = {"centre": np.array([0.9, 0.0, 0.8]), "tri_shift": np.zeros(3),
            "light": np.array([0.3, 4.0, -0.5]), "eye": np.array([0.0, 3.0, -4.0])}
    ramp = np.linspace(0.0, 1.0, 32)
    weights = (ramp[None, :, None] + 0.5 * ramp[:, None, None]) * np.array([1.0, 0.7, 0.4])

    def loss(name, t, samples, edges=False, seed=0):
        args = dict(base, **{name: base[name] + t * x})
        img = rt.render(variance_scene(**args), depth=0, samples=samples, edges=edges, seed=seed)
        return np.sum(weights * img)

    print()
    header = (f"{'parameter (x)':>16} {'FD 4096spp':>11} {'interior':>9} {'edges mean':>11} "
              f"{'edges std':>10} {'std/|FD|':>9}")
    print(header)
    print("-" * len(header))
    for name, label in (("centre", "sphere centre"), ("tri_shift", "triangle"),
                        ("light", "light position"), ("eye", "camera eye")):
        eps = 0.04
        fd = (loss(name, eps, 4096) - loss(name, -eps, 4096)) / (2 * eps)
        interior = float(ds.grad(lambda t: loss(name, t, 64))(np.asarray(0.0)))
        g = [float(ds.grad(lambda t: loss(name, t, 64, True, s))(np.asarray(0.0)))
             for s in range(seeds)]
        print(f"{label:>16} {fd:>11.3f} {interior:>9.3f} {np.mean(g):>11.3f} {np.std(g):>10.3f} "
              f"{np.std(g) / abs(fd):>9.3f}")


def median_time(fn, repeats: int) -> float:
    fn()  # warm-up (compiles on the first call)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small images, few repeats")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--mesh", type=int, default=10_000, help="triangles in the height field")
    parser.add_argument("--big", type=int, default=100_000, help="triangles in the big mesh")
    parser.add_argument("--no-variance", action="store_true", help="skip the variance table")
    args = parser.parse_args(argv)
    sizes = (32, 64) if args.quick else (64, 128, 256)
    repeats = args.repeats or (3 if args.quick else 5)
    print(f"raytrace bench: {numba.get_num_threads()} Numba threads, depth 2, 1 spp, "
          f"mesh {args.mesh} triangles, median of {repeats}")
    header = (f"{'size':>9} {'render ms':>10} {'Mrays/s':>8} {'adjoint ms':>11} {'ratio':>6} "
              f"{'+edges ms':>10} {'ratio':>6}")
    print(header)
    print("-" * len(header))
    for size in sizes:
        scene = make_scene(size, args.mesh)
        t_render = median_time(lambda: rt.render(scene), repeats)
        g = np.ones((size, size, 3))
        _, back = ds.pullback(lambda s: rt.render(s), scene)
        t_adj = median_time(lambda: back(g), repeats)
        _, back_e = ds.pullback(lambda s: rt.render(s, edges=True), scene)
        t_edge = median_time(lambda: back_e(g), repeats)
        print(f"{size:>4}x{size:<4} {1e3 * t_render:>10.2f} {size * size / t_render / 1e6:>8.3f} "
              f"{1e3 * t_adj:>11.2f} {t_adj / t_render:>6.2f} {1e3 * t_edge:>10.2f} "
              f"{t_edge / t_render:>6.2f}")
    size = 64 if args.quick else 256
    scene = big_mesh_scene(size, args.big)
    p = pack(scene, bvh=False)
    t_build = median_time(lambda: K.build_bvh(p.verts, p.tri), repeats)
    t_render = median_time(lambda: rt.render(scene), repeats)
    g = np.ones((size, size, 3))
    _, back = ds.pullback(lambda s: rt.render(s), scene)
    t_adj = median_time(lambda: back(g), repeats)
    print()
    header = (f"{'big mesh':>9} {'triangles':>10} {'BVH ms':>8} {'render ms':>10} {'Mrays/s':>8} "
              f"{'adjoint ms':>11} {'ratio':>6}")
    print(header)
    print("-" * len(header))
    print(f"{size:>4}x{size:<4} {len(p.tri):>10} {1e3 * t_build:>8.1f} {1e3 * t_render:>10.2f} "
          f"{size * size / t_render / 1e6:>8.3f} {1e3 * t_adj:>11.2f} {t_adj / t_render:>6.2f}")
    if not args.no_variance:
        variance_table(4 if args.quick else 8)


if __name__ == "__main__":
    main()
