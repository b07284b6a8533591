"""Textures (bilinear image lookups on planes, triangles and meshes): the render against the
independent reference, the hand-written adjoint and tangent kernels against central finite
differences (texels, UVs, plane axes and every geometry the UV depends on), CUDA, bad input."""

import dataclasses

import numpy as np
import pytest

import diffsci as ds
import raytrace as rt
from diffsci.testing import check_grads
from tests.raytrace.problems import textured_params, textured_scene
from tests.raytrace.reference import reference_render

pytestmark = pytest.mark.kernels

#: One parameter per check, so that no large derivative hides a small wrong one.
KEYS = ("floor_tex", "tri_tex", "mesh_tex", "tri_uv", "mesh_uv", "u_axis", "v_axis", "floor_p",
        "floor_n", "tri", "mesh", "floor_kd", "floor_refl", "lp", "eye")


@pytest.mark.parametrize("depth, samples", [(0, 1), (2, 4)])
def test_textured_render_matches_reference(depth, samples):
    scene = textured_scene(textured_params(), size=8)
    got = rt.render(scene, depth=depth, samples=samples, seed=2)
    want = reference_render(scene, depth=depth, samples=samples, seed=2)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_texture_lookup_is_bilinear_and_wraps():
    # One textured plane filling the view: pixel values are diffuse ⊙ bilinear(texture) exactly.
    img = np.arange(2 * 3 * 3, dtype=float).reshape(2, 3, 3) / 20.0
    cam = rt.Camera(eye=(0.0, 1.0, 0.0), look_at=(0.0, 0.0, 0.0), up=(0.0, 0.0, 1.0), fov=60.0,
                    width=5, height=5)
    plane = rt.Plane((0.0, 0.0, 0.0), (0.0, 1.0, 0.0),
                     rt.Material(diffuse=(1.0, 1.0, 1.0), ambient=(0.0, 0.0, 0.0),
                                 texture=rt.Texture(img)),
                     u_axis=(0.7, 0.0, 0.0), v_axis=(0.0, 0.0, 0.9))
    scene = rt.Scene(cam, (plane,), (rt.DirectionalLight((0.0, -1.0, 0.0), 1.0),))
    np.testing.assert_allclose(rt.render(scene, depth=0), reference_render(scene, depth=0),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("key", KEYS)
def test_texture_adjoint_matches_finite_differences(key):
    base = textured_params()

    def image(x):
        return rt.render(textured_scene(dict(base, **{key: x}), size=8), depth=2, samples=1)

    check_grads(image, (base[key],), modes=("rev", "fwd"))


def test_texture_forward_mode_is_the_transpose_of_reverse_mode():
    base = textured_params()
    keys = list(base)
    rng = np.random.default_rng(3)
    t = tuple(rng.normal(size=np.shape(base[k])) for k in keys)
    u = rng.normal(size=(8, 8, 3))

    def image(*xs):
        return rt.render(textured_scene(dict(zip(keys, xs)), size=8), depth=2, samples=4)

    xs = tuple(base[k] for k in keys)
    _, jt = ds.jvp(image, xs, t)
    jtu = ds.pullback(image, *xs)[1](u)
    np.testing.assert_allclose(np.sum(u * jt), sum(np.sum(a * b) for a, b in zip(jtu, t)),
                               rtol=1e-10)


def test_texture_gradient_is_texture_shaped_and_reaches_every_texel_seen():
    scene = textured_scene(textured_params(), size=12)
    g = ds.grad(lambda s: np.sum(rt.render(s)))(scene)
    floor = g.shapes[0]
    assert type(floor.material.texture) is rt.Texture
    assert floor.material.texture.image.shape == (3, 4, 3)
    assert np.all(floor.material.texture.image > 0)  # the floor repeats: every texel is seen
    assert g.shapes[3].material.texture is None  # the sphere has none


def test_cuda_kernels_match_cpu_kernels_on_a_textured_scene():
    from raytrace._cuda import adjoint_tables_cuda
    from raytrace._ops import adjoint_tables
    from raytrace._pack import pack

    scene = textured_scene(textured_params(), size=3)
    np.testing.assert_allclose(rt.render(scene, device="cuda"), rt.render(scene), rtol=1e-12,
                               atol=1e-14)
    p = pack(scene)
    g = np.random.default_rng(0).normal(size=(3, 3, 3))
    want = adjoint_tables(p, 3, 3, 1, 2, 0, g)
    got = adjoint_tables_cuda(p, 3, 3, 1, 2, 0, g)
    assert np.abs(want["tex"]).max() > 0
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-10, atol=1e-12, err_msg=name)


def _replace_shape(k, **changes):
    scene = textured_scene(textured_params(), size=4)
    shapes = list(scene.shapes)
    shapes[k] = dataclasses.replace(shapes[k], **changes)
    return dataclasses.replace(scene, shapes=tuple(shapes))


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: _replace_shape(3, material=rt.Material(texture=rt.Texture(np.ones((2, 2, 3))))),
         r"scene.shapes\[3\] \(Sphere\).material.texture: spheres cannot be textured"),
        (lambda: _replace_shape(2, uv=None),
         r"scene.shapes\[2\] \(Mesh\).uv: a textured mesh needs per-vertex texture coordinates"),
        (lambda: _replace_shape(1, material=rt.Material(
            texture=rt.Texture(np.full((2, 2, 3), np.nan)))),
         r"scene.shapes\[1\] \(Triangle\).material.texture.image: expected finite numbers"),
        (lambda: _replace_shape(0, u_axis=(np.nan, 0.0, 0.0)),
         r"scene.shapes\[0\] \(Plane\).u_axis: expected finite numbers"),
    ],
)
def test_bad_texture_input_names_object_and_field(make, message):
    with pytest.raises(ValueError, match=message):
        rt.render(make())


def test_bad_texture_shapes():
    with pytest.raises(ValueError, match=r"Texture.image: expected shape \(h, w, 3\)"):
        rt.Texture(np.ones((4, 4)))
    with pytest.raises(ValueError, match=r"Mesh.uv: expected shape \(3, 2\)"):
        rt.Mesh(np.eye(3), [[0, 1, 2]], uv=np.zeros((4, 2)))
    with pytest.raises(TypeError, match=r"Material.texture: expected a Texture or None"):
        rt.Material(texture=np.ones((2, 2, 3)))
