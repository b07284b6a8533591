"""numba.cuda render kernel (on the CUDA simulator without a GPU) against the CPU kernel."""

import numpy as np
import pytest

import raytrace as rt
from raytrace._gpu_checks import CHECKS
from tests.raytrace.problems import mixed_params, mixed_scene

pytestmark = pytest.mark.kernels


def test_cuda_render_matches_cpu_kernel():
    scene = mixed_scene(mixed_params(), size=6)
    for depth, samples in ((0, 1), (2, 4)):
        got = rt.render(scene, depth=depth, samples=samples, device="cuda")
        np.testing.assert_allclose(got, rt.render(scene, depth=depth, samples=samples),
                                   rtol=1e-12, atol=1e-14)


def test_cuda_adjoint_kernel_matches_cpu_adjoint_kernel():
    from raytrace._cuda import adjoint_tables_cuda
    from raytrace._ops import adjoint_tables
    from raytrace._pack import pack
    from tests.raytrace.test_bvh import mesh_scene

    for scene in (mixed_scene(mixed_params(), size=4), mesh_scene(size=3)):
        p = pack(scene)
        w = h = scene.camera.width
        g = np.random.default_rng(0).normal(size=(h, w, 3))
        want = adjoint_tables(p, w, h, 2, 2, 1, g)
        got = adjoint_tables_cuda(p, w, h, 2, 2, 1, g)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-10, atol=1e-12,
                                       err_msg=name)


def test_cuda_render_gradient_matches_cpu_gradient():
    import diffsci as ds

    def loss(pos, device):
        s = mixed_scene(mixed_params(), size=4)
        lights = (rt.PointLight(pos, 300.0),) + s.lights[1:]
        return np.sum(rt.render(rt.Scene(s.camera, s.shapes, lights, s.background),
                                device=device) ** 2)

    pos = np.array([2.5, 3.5, -3.0])
    np.testing.assert_allclose(ds.grad(lambda p: loss(p, "cuda"))(pos),
                               ds.grad(lambda p: loss(p, "cpu"))(pos), rtol=1e-10)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.name)
def test_gpu_check_entries_agree_with_their_references(check):
    inputs = check.make_inputs(np.random.default_rng(0), check.sim_size)
    ref = check.reference_fn(*inputs)
    cpu = check.cpu_fn(*inputs)
    out = check.cuda_fn(*inputs)
    as_tuple = lambda r: r if isinstance(r, tuple) else (r,)  # noqa: E731
    host = lambda a: a.copy_to_host() if hasattr(a, "copy_to_host") else np.asarray(a)  # noqa: E731
    ref, cpu, gpu = as_tuple(ref), as_tuple(cpu), tuple(host(a) for a in as_tuple(out))
    scale = max(np.abs(r).max() for r in ref)
    assert max(np.abs(a - r).max() for a, r in zip(cpu, ref)) / scale < check.rtol
    assert max(np.abs(a - r).max() for a, r in zip(gpu, ref)) / scale < check.rtol


def test_cuda_render_traverses_the_bvh():
    from tests.raytrace.test_bvh import mesh_scene

    scene = mesh_scene(size=5)
    np.testing.assert_allclose(rt.render(scene, device="cuda"), rt.render(scene), rtol=1e-12,
                               atol=1e-14)


def test_cuda_tangent_kernel_matches_cpu_tangent_kernel():
    import diffsci as ds
    from tests.raytrace.problems import textured_params, textured_scene

    for params, make in ((mixed_params, mixed_scene), (textured_params, textured_scene)):
        base = params()
        keys = list(base)
        xs = tuple(base[k] for k in keys)
        t = tuple(np.random.default_rng(1).normal(size=np.shape(x)) for x in xs)

        def image(*a, device, make=make, keys=keys):
            return rt.render(make(dict(zip(keys, a)), size=3), samples=4, device=device)

        want = ds.jvp(lambda *a: image(*a, device="cpu"), xs, t)
        got = ds.jvp(lambda *a: image(*a, device="cuda"), xs, t)
        assert np.abs(want[1]).max() > 0
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_cuda_edge_kernels_match_cpu_kernels():
    from raytrace._cuda import cast_cuda, render_points_cuda
    from raytrace._edges import cast, radiance_at
    from raytrace._pack import pack
    from tests.raytrace.test_bvh import mesh_scene

    p = pack(mesh_scene(size=4))
    rng = np.random.default_rng(0)
    pts = rng.uniform(0.0, 4.0, (7, 2))
    np.testing.assert_allclose(render_points_cuda(p, pts, 2, 4, 4),
                               radiance_at(p, pts, 2, 4, 4), rtol=1e-12, atol=1e-14)
    origins = rng.normal(size=(7, 3)) * 0.2 + p.cam[0]
    dirs = rng.normal(size=(7, 3)) * 0.3 + p.cam[1]
    for got, want in zip(cast_cuda(p, origins, dirs), cast(p, origins, dirs)):
        np.testing.assert_array_equal(got, want)


def test_cuda_gradients_with_edges_match_cpu():
    # Same seed → same edge samples: the CUDA edge kernels give the CPU's gradient (and JVP).
    import diffsci as ds
    from tests.raytrace.test_edges import mirror_scene

    def loss(c, device):
        return np.sum(rt.render(mirror_scene(centre=c, size=6), samples=1, edges=4.0,
                                device=device, depth=1) ** 2)

    c = np.array([0.2, 0.0, 1.0])
    want = ds.grad(lambda x: loss(x, "cpu"))(c)
    assert np.abs(want).max() > 0
    np.testing.assert_allclose(ds.grad(lambda x: loss(x, "cuda"))(c), want, rtol=1e-9)
    v = np.array([1.0, -0.5, 0.3])
    np.testing.assert_allclose(ds.jvp(lambda x: loss(x, "cuda"), (c,), (v,))[1],
                               ds.jvp(lambda x: loss(x, "cpu"), (c,), (v,))[1], rtol=1e-9)


def test_cuda_shadow_edge_gradient_matches_cpu():
    # Shadow boundaries (probe casts, receiver casts, radiance on both sides) on the CUDA kernels.
    import diffsci as ds
    from tests.raytrace.test_shadow_edges import scene

    def loss(light, device):
        s = scene(light=light)
        small = rt.Camera(eye=s.camera.eye, look_at=s.camera.look_at, width=5, height=5)
        return np.sum(rt.render(rt.Scene(small, s.shapes, s.lights), depth=0, edges=2.0,
                                device=device) ** 2)

    light = np.array([0.3, 4.0, -0.5])
    want = ds.grad(lambda x: loss(x, "cpu"))(light)
    assert np.abs(want).max() > 0
    np.testing.assert_allclose(ds.grad(lambda x: loss(x, "cuda"))(light), want, rtol=1e-9)


def test_cuda_horizon_gradient_matches_cpu():
    # Plane horizons (their hidden-point casts and radiance on both sides) on the CUDA kernels.
    import diffsci as ds
    from tests.raytrace.test_horizon import BASE, lit_scene

    def loss(look_y, device, edges=2.0):
        s = lit_scene(look_y, np.asarray(BASE["up_x"]), BASE["fov"], BASE["normal"],
                      reflection=0.3)
        small = rt.Camera(eye=s.camera.eye, look_at=s.camera.look_at, up=s.camera.up,
                          fov=s.camera.fov, width=5, height=5)
        return np.sum(rt.render(rt.Scene(small, s.shapes, s.lights, s.background), depth=1,
                                edges=edges, device=device) ** 2)

    from raytrace._horizon import horizon_boundary
    from raytrace._pack import pack

    s = lit_scene(**BASE, reflection=0.3)
    small = rt.Camera(eye=s.camera.eye, look_at=s.camera.look_at, up=s.camera.up,
                      fov=s.camera.fov, width=5, height=5)
    assert horizon_boundary(pack(rt.Scene(small, s.shapes, s.lights, s.background)), 5, 5, 1,
                            2.0) is not None
    y = np.asarray(BASE["look_y"])
    want = ds.grad(lambda x: loss(x, "cpu"))(y)
    interior = ds.grad(lambda x: loss(x, "cpu", edges=False))(y)
    assert abs(want - interior) > 1e-3 * abs(want)  # the edge terms are there
    np.testing.assert_allclose(ds.grad(lambda x: loss(x, "cuda"))(y), want, rtol=1e-9)
