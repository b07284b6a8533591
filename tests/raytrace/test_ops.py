"""The adjoint kernel against central finite differences of the render (smooth regions).

Each group of parameters is perturbed on its own (eps = 1e-6 in float64): no silhouette or shadow
edge crosses a pixel sample under such a perturbation, so the interior (shading) gradient is the
whole derivative and must match to the checker's tolerance.
"""

import numpy as np
import pytest

import diffsci as ds
import raytrace as rt
from diffsci.testing import check_grads
from tests.raytrace.problems import mixed_params, mixed_scene, paper_scene

pytestmark = pytest.mark.kernels

GROUPS = {
    "camera": ("eye", "look_at", "up", "fov"),
    "spheres": ("c0", "r0", "c1", "r1"),
    "plane": ("plane_p", "plane_n"),
    "triangle and mesh vertices": ("tri", "mesh"),
    "materials": ("kd0", "ks0", "p0", "refl0", "amb0", "kd1", "refl1", "kd_plane", "refl_plane",
                  "kd_tri", "kd_mesh"),
    "lights": ("lp", "li", "lc", "ld", "di", "dc"),
    "background": ("bg",),
}


@pytest.mark.parametrize("group", list(GROUPS))
def test_adjoint_matches_finite_differences(group):
    base = mixed_params()
    keys = GROUPS[group]

    def image(*xs):
        p = dict(base)
        p.update(zip(keys, xs))
        return rt.render(mixed_scene(p, size=10), depth=2, samples=4, seed=1)

    # Forward mode is checked exactly against the adjoint below; against finite differences it
    # is skipped where a sample lies within ~1e-5 of an edge (FD with eps = 1e-6 is then off by
    # its truncation error, ~1e-4 relative, though it converges to the JVP as eps shrinks).
    modes = ("rev",) if group in ("camera", "spheres") else ("rev", "fwd")
    check_grads(image, tuple(base[k] for k in keys), modes=modes)


def test_forward_mode_matches_reverse_mode_exactly():
    # The tangent kernel is the transpose of the adjoint kernel: <u, J t> = <J^T u, t>.
    base = mixed_params()
    keys = list(base)
    rng = np.random.default_rng(4)
    t = tuple(rng.normal(size=np.shape(base[k])) for k in keys)
    u = rng.normal(size=(10, 10, 3))

    def image(*xs):
        return rt.render(mixed_scene(dict(zip(keys, xs)), size=10), depth=2, samples=4, seed=1)

    xs = tuple(base[k] for k in keys)
    _, jt = ds.jvp(image, xs, t)
    _, back = ds.pullback(image, *xs)
    jtu = back(u)
    lhs = np.sum(u * jt)
    rhs = sum(np.sum(a * b) for a, b in zip(jtu, t))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10)


def test_second_order_is_refused_with_a_clear_error():
    f = lambda pos: np.sum(rt.render(paper_scene(size=4, light=pos)))  # noqa: E731
    for mode in ("rev", "fwd"):
        with pytest.raises(NotImplementedError, match=r"second derivatives .* are not supported"):
            ds.hessian(f, mode=mode)(np.array([1.0, 2.0, -7.0]))


def test_scene_shaped_gradient():
    target = rt.render(paper_scene(size=8))

    def loss(scene):
        return np.mean((rt.render(scene) - target) ** 2)

    g = ds.grad(loss)(paper_scene(size=8, light=(1.0, 2.0, -7.0)))
    assert type(g) is rt.Scene and type(g.shapes[0]) is rt.Triangle
    assert type(g.lights[0]) is rt.PointLight and g.lights[0].position.shape == (3,)
    assert np.abs(g.lights[0].position).max() > 0 and np.abs(g.shapes[0].v0).max() > 0
    assert g.camera.width == 8  # static fields are carried, not differentiated


def test_shared_material_gets_summed_gradient():
    p = mixed_params()
    red = rt.Material(diffuse=(0.9, 0.1, 0.1))

    def loss(kd):
        m = rt.Material(diffuse=kd)
        s = mixed_scene(p, size=8)
        shapes = (rt.Sphere(p["c0"], p["r0"], m), rt.Sphere(p["c1"], p["r1"], m)) + s.shapes[2:]
        return np.sum(rt.render(rt.Scene(s.camera, shapes, s.lights)) ** 2)

    check_grads(loss, (np.asarray(red.diffuse),), modes=("rev",))


def test_float32_gradients_are_float32():
    pos = np.array([1.0, 2.0, -7.0], np.float32)
    g = ds.grad(lambda q: np.sum(rt.render(paper_scene(size=6, light=q))))(pos)
    assert g.dtype == np.float32


def test_wrong_shape_loss_is_an_error():
    def loss(pos, target, weights=None):
        return rt.mse(rt.render(paper_scene(size=6, light=pos)), target, weights)

    pos = np.array([1.0, 2.0, -7.0])
    with pytest.raises(ValueError, match=r"raytrace.mse: target: expected the rendered image's "
                                         r"shape \(6, 6, 3\) .* got \(5, 6, 3\)"):
        ds.grad(loss)(pos, np.ones((5, 6, 3)))
    with pytest.raises(ValueError, match=r"raytrace.mse: target: .* got \(6, 6\)"):
        ds.grad(loss)(pos, np.ones((6, 6)))  # would broadcast silently in a bare NumPy loss
    with pytest.raises(ValueError, match=r"raytrace.mse: weights: expected shape \(6, 6\)"):
        ds.grad(loss)(pos, np.ones((6, 6, 3)), np.ones((6, 5)))
    # A cotangent of the wrong shape fed to the render's pullback by hand is refused too.
    _, back = ds.pullback(rt.render, paper_scene(size=6))
    with pytest.raises(ValueError, match=r"cotangent 0 has shape \(5, 6, 3\), expected \(6, 6"):
        back(np.ones((5, 6, 3)))


def test_mse_gradient_with_weights():
    target = rt.render(paper_scene(size=6))
    w = np.random.default_rng(0).uniform(size=(6, 6))
    check_grads(lambda pos: rt.mse(rt.render(paper_scene(size=6, light=pos)), target, w),
                (np.array([1.0, 2.0, -7.0]),), modes=("rev", "fwd"))


def test_gradient_with_respect_to_a_whole_scene_with_a_mesh():
    scene = mixed_scene(mixed_params(), size=6)
    g = ds.grad(lambda s: np.sum(rt.render(s) ** 2))(scene)
    assert type(g.shapes[4]) is rt.Mesh and g.shapes[4].vertices.shape == (4, 3)
    np.testing.assert_array_equal(g.shapes[4].faces, scene.shapes[4].faces)


def test_reflection_gradient_at_zero_reflection():
    # The forward pass does not trace a mirror ray with weight 0, but d(image)/d(reflection) at
    # 0 is that ray's colour: both modes must give the one-sided derivative.
    base = mixed_params()

    def loss(refl):
        p = dict(base, refl_plane=refl)
        return np.sum(rt.render(mixed_scene(p, size=8), depth=2) ** 2)

    h = 1e-7
    fd = (loss(np.asarray(h)) - loss(np.asarray(0.0))) / h
    assert abs(fd) > 1e-2
    np.testing.assert_allclose(ds.grad(loss)(np.asarray(0.0)), fd, rtol=1e-5)
    np.testing.assert_allclose(ds.jvp(loss, (np.asarray(0.0),), (np.asarray(1.0),))[1], fd,
                               rtol=1e-5)
