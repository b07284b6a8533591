"""raytrace: render time vs adjoint time vs resolution (the paper asks AD ≤ ≈5× a render).

Scene: three spheres (two reflective), a mirror floor plane, a triangle-mesh height field
(``--mesh`` triangles, 512 by default), a point light and a directional light; Whitted tracing
with hard shadows and 2 mirror bounces, one ray per pixel. For each resolution the table gives the
median wall time of

* render: ``raytrace.render`` (validation, packing, the parallel Numba render kernel);
* adjoint: ``back(ḡ)`` of ``ds.pullback(render, scene)`` (the hand-written adjoint kernel that
  re-traces every pixel, plus unpacking into a Scene-shaped cotangent);
* adjoint + edges: the same with ``edges=True`` (Li et al. 2018 edge sampling of primary
  silhouettes, 4 samples per pixel of edge length);

and primary rays per second of the render. Numba threads: all cores unless NUMBA_NUM_THREADS is set.
No BVH yet: every ray tests every triangle, so large meshes are slow (issue 6 asks for 10⁴).

Usage:
    python benchmarks/bench_raytrace.py [--quick] [--repeats R] [--mesh TRIANGLES]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np

import diffsci as ds
import raytrace as rt


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
    parser.add_argument("--mesh", type=int, default=512, help="triangles in the height field")
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


if __name__ == "__main__":
    main()
