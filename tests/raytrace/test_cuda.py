"""numba.cuda render kernel (on the CUDA simulator without a GPU) against the CPU kernel."""

import numpy as np
import pytest

import raytrace as rt
from raytrace._gpu_checks import CHECKS
from tests.raytrace.problems import mixed_params, mixed_scene


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
