"""raytrace: render time vs adjoint time vs resolution (the paper asks AD ≤ ≈5× a render).

Scene: three spheres (two reflective), a mirror floor plane, a triangle-mesh height field
(``--mesh`` triangles, 10⁴ by default), a point light and a directional light; Whitted tracing
with hard shadows and 2 mirror bounces, one ray per pixel. For each resolution the table gives the
median wall time of

* render: ``raytrace.render`` (validation, packing, the parallel Numba render kernel);
* adjoint: ``back(ḡ)`` of ``ds.pullback(render, scene)`` (the hand-written adjoint kernel that
  re-traces every pixel, plus unpacking into a Scene-shaped cotangent);
* adjoint + edges: the same with ``edges=True`` (Li et al. 2018 edge sampling of silhouettes,
  directly and in the mirror floor, of hard-shadow boundaries and of the floor's horizon, 4
  samples per pixel of edge length);

primary rays per second of the render (the whole call: validation, packing, BVH build, kernel)
and of the render kernel alone, samples per second of a 4-samples-per-pixel render,
each on one thread and on all Numba threads (thread scaling), with the adjoint's and the edge
term's cost as ratios to the render measured in the same run. A second table breaks the edge
term's cost down at the largest size: silhouette samples generated, hidden ones culled by one
closest-hit cast each before shading (mesh edges behind the mesh itself or other objects),
shadow-boundary samples, plane-horizon samples, and the pullback of the sample points. A further
table renders a ≈10⁵-triangle UV sphere (``--big`` triangles) over the same floor at 256×256:
BVH build time, render time (build included), and the adjoint. Triangles are found through a BVH
(``raytrace/_kernels.py``, ``build_bvh``), rebuilt on every render since vertices may change
between renders.
Numba threads: all cores unless NUMBA_NUM_THREADS is set.

A third table compares, on spheres over a mirror plane (the scene above without the mesh and
the directional light), the kernels against the same Whitted renderer written as vectorised
NumPy and differentiated by diffsci's tape (the "no hand-written adjoint" route): render time,
gradient time, and their agreement (image and gradient). A fourth table measures the edge
term's variance on a 32×32 scene (a sphere and a triangle over a
floor, lit by a point light, so both silhouettes and shadow boundaries move): for one parameter
at a time, d(loss)/dθ of a fixed weighted image sum by central differences of a 4096-spp render
(the reference), the interior-only gradient, and the ``edges=True`` gradient's mean and standard
deviation over 8 seeds (64 spp, edge density 4). Its last two rows make the floor a mirror
(reflection 0.6, depth 1): moving the floor or the sphere then also moves reflected silhouettes
(sampled) and shadows seen in the mirror (not sampled: DERIVATIONS R11), so any gap between the
edge mean and the reference there measures that exclusion. A fifth table gives the edge term's
spread over seeds against the edge density in the scenes whose sample count used to stay at
its minimum (a shadow sliver, a sphere outline mostly off screen) and for a floor's horizon,
and the spread of a sphere's centre/radius interior gradient against the pixel samples (heavy-
tailed near the outline: it falls more slowly than 1/sqrt(samples); DERIVATIONS.md R11).

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
from raytrace._gpu_checks import vectorised_render
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


def big_mesh_scene(size: int, triangles: int) -> rt.Scene:
    n = max(2, int(round((1 + np.sqrt(1 + triangles)) / 2)))
    shapes = (
        rt.uv_sphere(n, center=(0.0, 0.0, 1.0), material=rt.Material(
            diffuse=(0.8, 0.3, 0.2), specular=(0.5,) * 3, reflection=0.3)),
        rt.Sphere((1.6, -0.5, 0.2), 0.5, rt.Material(diffuse=(0.2, 0.3, 0.9), reflection=0.6)),
        rt.Plane((0.0, -1.0, 0.0), (0.0, 1.0, 0.0),
                 rt.Material(diffuse=(0.6,) * 3, reflection=0.2)),
    )
    lights = (rt.PointLight((3.0, 5.0, -4.0), 600.0),)
    cam = rt.Camera(eye=(0.0, 1.0, -4.0), look_at=(0.0, 0.0, 1.0), width=size, height=size)
    return rt.Scene(cam, shapes, lights, background=(0.1, 0.12, 0.2))


def variance_scene(centre, tri_shift, light, eye, floor=(0.0, -1.0, 0.0), reflection=0.0,
                   size=32):
    tri = np.array([[-0.8, 0.5, -0.6], [0.7, 0.5, -0.4], [0.0, 0.6, 0.6]]) + tri_shift
    return rt.Scene(
        rt.Camera(eye=eye, look_at=(0.0, -0.5, 0.5), width=size, height=size),
        (rt.Plane(floor, (0.0, 1.0, 0.0), rt.Material(diffuse=(0.8,) * 3,
                                                      reflection=reflection)),
         rt.Triangle(*tri, material=rt.Material(diffuse=(0.2, 0.3, 0.9))),
         rt.Sphere(centre, 0.4, rt.Material(diffuse=(0.9, 0.5, 0.2)))),
        (rt.PointLight(light, 300.0),))


def variance_table(seeds: int = 8) -> None:
    x, y = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    base = {"centre": np.array([0.9, 0.0, 0.8]), "tri_shift": np.zeros(3),
            "light": np.array([0.3, 4.0, -0.5]), "eye": np.array([0.0, 3.0, -4.0]),
            "floor": np.array([0.0, -1.0, 0.0])}
    ramp = np.linspace(0.0, 1.0, 32)
    weights = (ramp[None, :, None] + 0.5 * ramp[:, None, None]) * np.array([1.0, 0.7, 0.4])

    def loss(name, t, samples, edges=False, seed=0, direction=x, depth=0, reflection=0.0):
        args = dict(base, **{name: base[name] + t * direction})
        img = rt.render(variance_scene(**args, reflection=reflection), depth=depth,
                        samples=samples, edges=edges, seed=seed)
        return np.sum(weights * img)

    print()
    header = (f"{'parameter (x)':>16} {'FD 4096spp':>11} {'interior':>9} {'edges mean':>11} "
              f"{'edges std':>10} {'std/|FD|':>9}")
    print(header)
    print("-" * len(header))
    mirror = {"direction": y, "depth": 1, "reflection": 0.6}
    mirror_x = dict(mirror, direction=x)
    for name, label, kw in (("centre", "sphere centre", {}), ("tri_shift", "triangle", {}),
                            ("light", "light position", {}), ("eye", "camera eye", {}),
                            ("floor", "mirror floor (y)", mirror),
                            ("centre", "sphere, mirror", mirror_x)):
        eps = 0.04
        fd = (loss(name, eps, 4096, **kw) - loss(name, -eps, 4096, **kw)) / (2 * eps)
        interior = float(ds.grad(lambda t: loss(name, t, 64, **kw))(np.asarray(0.0)))
        g = [float(ds.grad(lambda t: loss(name, t, 64, True, s, **kw))(np.asarray(0.0)))
             for s in range(seeds)]
        print(f"{label:>16} {fd:>11.3f} {interior:>9.3f} {np.mean(g):>11.3f} {np.std(g):>10.3f} "
              f"{np.std(g) / abs(fd):>9.3f}")


def density_table(seeds: int = 8) -> None:
    """Seed-spread of the edge term alone (fixed image cotangent) against the edge density, and
    of a sphere's interior gradient against the pixel samples (DERIVATIONS.md R11, R12)."""
    from raytrace._edges import boundary_cotangents, primary_boundary
    from raytrace._horizon import horizon_boundary
    from raytrace._shadow_edges import shadow_boundary

    n = 16
    ramp = np.linspace(0.0, 1.0, n)
    weights = (ramp[None, :, None] + 0.5 * ramp[:, None, None]) * np.array([1.0, 0.7, 0.4])
    cam = rt.Camera(eye=(0.0, 2.5, -3.0), look_at=(0.0, 0.0, 0.0), width=n, height=n, fov=40.0)
    # A long triangle edge whose shadow crosses a sphere: its probe rays see a sliver at most.
    sliver = rt.Scene(cam, (
        rt.Triangle((-7.7, 2.0, 0.3), (9.3, 2.0, 0.3), (0.3, 2.0, 6.0)),
        rt.Sphere((0.0, 0.0, 0.0), 1.0, rt.Material(diffuse=(0.9, 0.5, 0.2)))),
        (rt.PointLight((0.0, 5.0, 0.0), 300.0),))
    floor = rt.Plane((0.0, -1.0, 0.0), (0.08, 1.0, -0.05), rt.Material(ambient=(0.1,) * 3))
    outline = rt.Scene(rt.Camera(eye=(0.0, 0.0, -5.0), width=n, height=n),
                       (rt.Sphere((2.65, 0.3, 0.0), 0.9, rt.Material(ambient=(0.1,) * 3)),),
                       (rt.PointLight((0.0, 0.0, -5.0), 400.0),), background=(0.05, 0.1, 0.1))
    horizon = rt.Scene(rt.Camera(eye=(0.0, 1.2, -4.0), look_at=(0.0, 0.6, 0.0), width=n,
                                 height=n), (floor,), (rt.DirectionalLight((0.4, -1.0, 0.6)),),
                       background=(0.3, 0.4, 0.6))
    cases = (("shadow sliver on a sphere", sliver, shadow_boundary),
             ("sphere outline mostly off screen", outline, primary_boundary),
             ("floor horizon", horizon, horizon_boundary))
    densities = (4.0, 16.0, 64.0)
    print(f"\nedge term alone, {n}x{n}: spread over {seeds} seeds (sqrt of the summed "
          f"variance of all cotangents) against the edge density")
    header = f"{'scene':>34}" + "".join(f"{f'density {d:g}':>12}" for d in densities)
    print(header)
    print("-" * len(header))
    for name, scene, boundary in cases:
        p = pack(scene)
        row = []
        for d in densities:
            vals = []
            for seed in range(seeds):
                cts = boundary_cotangents(boundary(p, n, n, 0, d, seed), p, weights)
                vals.append(np.concatenate([np.ravel(cts.get(k, np.zeros(getattr(p, k).shape)))
                                            for k in ("cam", "verts", "sph", "pln", "plights")]))
            row.append(np.sqrt(np.sum(np.var(vals, axis=0))))
        print(f"{name:>34}" + "".join(f"{v:>12.4g}" for v in row))

    tri = ((-2.0, -1.6, 1.5), (1.6, -1.4, 1.6), (0.3, 1.5, 1.8))

    def sphere_loss(c, r, samples, seed):
        s = rt.Scene(rt.Camera(eye=(0.0, 0.0, -5.0), width=n, height=n),
                     (rt.Sphere(c, r, rt.Material(diffuse=(0.9, 0.5, 0.2),
                                                  ambient=(0.1, 0.1, 0.1))),
                      rt.Triangle(*tri, material=rt.Material(diffuse=(0.2, 0.3, 0.9)))),
                     (rt.PointLight((0.0, 0.0, -5.0), 400.0),), background=(0.05, 0.1, 0.1))
        return np.sum(weights * rt.render(s, depth=0, samples=samples, seed=seed))

    print(f"\nsphere centre/radius interior gradient, {n}x{n}: spread over {seeds} seeds "
          f"against samples per pixel (1/sqrt(samples) would halve it per row)")
    header = f"{'samples':>8} {'d/dc_x':>9} {'d/dc_y':>9} {'d/dc_z':>9} {'d/dr':>9}"
    print(header)
    print("-" * len(header))
    c0, r0 = np.array([0.3, 0.1, 0.0]), np.asarray(0.9)
    for spp in (16, 64, 256, 1024):
        g = [np.concatenate([np.ravel(x) for x in ds.grad(
            lambda c, r: sphere_loss(c, r, spp, seed), argnums=(0, 1))(c0, r0)])
            for seed in range(seeds)]
        print(f"{spp:>8}" + "".join(f"{v:>10.3f}" for v in np.std(g, axis=0)))


def side_by_side(sizes, repeats: int) -> None:
    """Kernels vs the vectorised diffsci.numpy renderer on spheres + a mirror plane."""
    print()
    header = (f"{'size':>9} {'kernel render':>14} {'kernel grad':>12} {'numpy render':>13} "
              f"{'diffsci grad':>13} {'grad speed-up':>14} {'max |img diff|':>15} "
              f"{'grad rel diff':>14}")
    print(header)
    print("-" * len(header))
    for size in sizes:
        full = make_scene(size, 2)
        scene = rt.Scene(full.camera, full.shapes[:4], full.lights[:1], full.background)
        p = pack(scene)
        g = np.random.default_rng(0).normal(size=(size, size, 3))
        args = (p.cam, p.bg, p.sph, p.pln, p.mat, p.plights)

        def vec_loss(bg, sph, pln, mat, plights):
            img = vectorised_render(p.cam, bg, sph, pln, mat, plights, size, size, 2)
            return np.sum(g * img)

        vgrad = ds.grad(vec_loss, argnums=(0, 1, 2, 3, 4))
        t_vr = median_time(lambda: vectorised_render(*args, size, size, 2), repeats)
        t_vg = median_time(lambda: vgrad(*args[1:]), repeats)
        t_kr = median_time(lambda: rt.render(scene), repeats)
        kgrad = ds.grad(lambda s: np.sum(g * rt.render(s)))
        t_kg = median_time(lambda: kgrad(scene), repeats)
        img_diff = np.abs(rt.render(scene) - vectorised_render(*args, size, size, 2)).max()
        want = dict(zip(("bg", "sph", "pln", "mat", "plights"), vgrad(*args[1:])))
        from raytrace._ops import adjoint_tables
        got = adjoint_tables(p, size, size, 1, 2, 0, g)
        rel = max(np.abs(got[k] - np.asarray(want[k])).max() / np.abs(want[k]).max()
                  for k in want)
        print(f"{size:>4}x{size:<4} {1e3 * t_kr:>11.2f} ms {1e3 * t_kg:>9.2f} ms "
              f"{1e3 * t_vr:>10.2f} ms {1e3 * t_vg:>10.2f} ms {t_vg / t_kg:>13.1f}x "
              f"{img_diff:>15.2e} {rel:>14.2e}")


def median_time(fn, repeats: int) -> float:
    fn()  # warm-up (compiles on the first call)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def interleaved_medians(fns: dict, repeats: int) -> dict:
    """Median wall time of each ``fns[key]()`` (each already warmed up), the calls interleaved
    round by round so that every function sees the same background load on a shared machine.
    A key ``(n, name)`` runs on ``n`` Numba threads."""
    times = {key: [] for key in fns}
    for _ in range(repeats):
        for key, fn in fns.items():
            numba.set_num_threads(key[0])
            t0 = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t0)
    return {key: statistics.median(t) for key, t in times.items()}


def throughput_table(sizes, mesh: int, repeats: int) -> None:
    """Render / adjoint / edge-term times per resolution, on one and on all threads."""
    threads = numba.get_num_threads()
    header = (f"{'size':>9} {'threads':>7} {'render ms':>10} {'Mrays/s':>8} {'kernel Mrays/s':>15} "
              f"{'4spp Msamp/s':>13} {'adjoint ms':>11} {'adj/render':>10} {'+edges ms':>10} "
              f"{'edges/render':>12}")
    print(header)
    print("-" * len(header))
    counts = sorted({1, threads})
    for size in sizes:
        scene = make_scene(size, mesh)
        g = np.ones((size, size, 3))
        back = ds.pullback(lambda s: rt.render(s), scene)[1]
        back_e = ds.pullback(lambda s: rt.render(s, edges=True), scene)[1]
        p = pack(scene)
        out = np.empty((size, size, 3))
        fns = {}
        for n in counts:
            fns[(n, "render")] = lambda: rt.render(scene)
            fns[(n, "kernel")] = lambda: K.render_kernel(size, size, 1, 2, 0.0, *p.tables(), out)
            fns[(n, "4spp")] = lambda: rt.render(scene, samples=4)
            fns[(n, "adjoint")] = lambda: back(g)
            fns[(n, "edges")] = lambda: back_e(g)
        for key, fn in fns.items():  # warm-up (compiles on the first call)
            numba.set_num_threads(key[0])
            fn()
        t = interleaved_medians(fns, repeats)
        numba.set_num_threads(threads)
        for n in counts:
            r = t[(n, "render")]
            print(f"{size:>4}x{size:<4} {n:>7} {1e3 * r:>10.1f} {size * size / r / 1e6:>8.3f} "
                  f"{size * size / t[(n, 'kernel')] / 1e6:>15.3f} "
                  f"{4 * size * size / t[(n, '4spp')] / 1e6:>13.3f} "
                  f"{1e3 * t[(n, 'adjoint')]:>11.1f} {t[(n, 'adjoint')] / r:>10.2f} "
                  f"{1e3 * t[(n, 'edges')]:>10.1f} {t[(n, 'edges')] / r:>12.2f}")
        if len(counts) > 1:
            print(f"{'':>9} speed-up on {threads} threads: render "
                  f"{t[(1, 'render')] / t[(threads, 'render')]:.2f}x, 4 spp "
                  f"{t[(1, '4spp')] / t[(threads, '4spp')]:.2f}x, render kernel "
                  f"{t[(1, 'kernel')] / t[(threads, 'kernel')]:.2f}x, adjoint "
                  f"{t[(1, 'adjoint')] / t[(threads, 'adjoint')]:.2f}x")


def edge_cost_table(size: int, mesh: int, repeats: int) -> None:
    """Where the edge term's time goes: silhouette samples (direct and in the mirror floor),
    how many are hidden (culled by one cast each before shading), shadow-boundary samples, and
    the pullback of the sample points, against the render in the same run."""
    from raytrace import _edges as E
    from raytrace._horizon import horizon_boundary
    from raytrace._shadow_edges import shadow_boundary

    scene = make_scene(size, mesh)
    p = pack(scene)
    rng = np.random.default_rng(0)
    pairs = E._unique_edges(p.tri)
    generated = 0
    for mirror in [-1] + [int(k) for k in E.mirror_planes(p, 2)]:
        verts, sph = E._view(p.verts, p.sph, p.pln, mirror)
        half = None
        if mirror >= 0:
            m = p.pln[mirror, 3:6]
            half = (p.pln[mirror, :3], -np.sign((p.cam[0] - p.pln[mirror, :3]) @ m) * m)
        generated += len(E._triangle_samples(p.cam, verts, pairs, size, size,
                                             E.DEFAULT_EDGE_DENSITY, rng, half)[0])
        generated += len(E._sphere_samples(p.cam, sph, size, size, E.DEFAULT_EDGE_DENSITY,
                                           rng, half)[0])
    t_render = median_time(lambda: rt.render(scene), repeats)
    b = E.primary_boundary(p, size, size, 2)
    t_sil = median_time(lambda: E.primary_boundary(p, size, size, 2), repeats)
    sb = shadow_boundary(p, size, size, 2, E.DEFAULT_EDGE_DENSITY)
    t_sh = median_time(lambda: shadow_boundary(p, size, size, 2, E.DEFAULT_EDGE_DENSITY),
                       repeats)
    hb = horizon_boundary(p, size, size, 2, E.DEFAULT_EDGE_DENSITY)
    t_hz = median_time(lambda: horizon_boundary(p, size, size, 2, E.DEFAULT_EDGE_DENSITY),
                       repeats)
    g = np.ones((size, size, 3))
    t_pull = median_time(lambda: (E.boundary_cotangents(b, p, g),
                                  E.boundary_cotangents(sb, p, g),
                                  E.boundary_cotangents(hb, p, g)), repeats)
    n_sh = 0 if sb is None else len(sb.s)
    n_hz = 0 if hb is None else len(hb.s)
    print(f"\nedge term at {size}x{size} ({len(p.tri)} triangles, {len(pairs)} unique edges, "
          f"mirror floor; render {1e3 * t_render:.1f} ms in the same run)")
    header = f"{'part':>44} {'samples':>9} {'ms':>9} {'x render':>9}"
    print(header)
    print("-" * len(header))
    print(f"{'silhouette samples generated (direct+mirror)':>44} {generated:>9} {'':>9} {'':>9}")
    print(f"{'  of which hidden (culled by a cast)':>44} {generated - len(b.s):>9} {'':>9} {'':>9}")
    print(f"{'silhouettes: sample, cull, shade both sides':>44} {len(b.s):>9} {1e3 * t_sil:>9.1f} "
          f"{t_sil / t_render:>9.2f}")
    print(f"{'shadow boundaries: probe, sample, shade':>44} {n_sh:>9} {1e3 * t_sh:>9.1f} "
          f"{t_sh / t_render:>9.2f}")
    print(f"{'plane horizons: sample, cull, shade':>44} {n_hz:>9} {1e3 * t_hz:>9.1f} "
          f"{t_hz / t_render:>9.2f}")
    print(f"{'pullback of the sample points (diffsci)':>44} {len(b.s) + n_sh + n_hz:>9} "
          f"{1e3 * t_pull:>9.1f} {t_pull / t_render:>9.2f}")


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
    throughput_table(sizes, args.mesh, repeats)
    edge_cost_table(sizes[-1], args.mesh, repeats)
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
    print("\nside by side: hand-written kernels vs the same renderer in vectorised "
          "diffsci.numpy (3 spheres, mirror plane, point light, depth 2; gradient of a weighted "
          "image sum w.r.t. all sphere, plane, material, light and background parameters)")
    side_by_side((32, 64) if args.quick else (64, 128, 256), repeats)
    if not args.no_variance:
        variance_table(4 if args.quick else 8)
        density_table(4 if args.quick else 8)


if __name__ == "__main__":
    main()
