"""Forward render against the independent NumPy reference; options, dtypes and bad input."""

import numpy as np
import pytest

import raytrace as rt
from tests.raytrace.problems import mixed_params, mixed_scene, paper_scene
from tests.raytrace.reference import reference_render

pytestmark = pytest.mark.kernels


@pytest.mark.parametrize("depth, samples", [(0, 1), (2, 1), (3, 4)])
def test_mixed_scene_matches_reference(depth, samples):
    scene = mixed_scene(mixed_params(), size=10)
    got = rt.render(scene, depth=depth, samples=samples, seed=3)
    want = reference_render(scene, depth=depth, samples=samples, seed=3)
    assert got.shape == (10, 10, 3) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert got.std() > 0.05  # a non-trivial image: shadows, reflections, several objects


def test_paper_scene_matches_reference():
    scene = paper_scene(size=12)
    np.testing.assert_allclose(rt.render(scene), reference_render(scene), rtol=1e-9, atol=1e-12)


def test_non_square_image_and_seed():
    p = mixed_params()
    scene = mixed_scene(p, size=6)
    wide = rt.Scene(rt.Camera(eye=p["eye"], look_at=p["look_at"], up=p["up"], fov=p["fov"],
                              width=9, height=5), scene.shapes, scene.lights, scene.background)
    np.testing.assert_allclose(rt.render(wide, samples=4, seed=1),
                               reference_render(wide, samples=4, seed=1), rtol=1e-9, atol=1e-12)
    other = rt.render(wide, samples=4, seed=2)
    assert not np.array_equal(rt.render(wide, samples=4, seed=1), other)


def test_float32_scene_gives_float32_image():
    scene = paper_scene(size=8)
    tri = scene.shapes[0]
    tri32 = rt.Triangle(*(np.asarray(v, np.float32) for v in (tri.v0, tri.v1, tri.v2)),
                        material=rt.Material(*(np.asarray(getattr(tri.material, f), np.float32)
                                               for f in ("diffuse", "specular", "exponent",
                                                         "reflection", "ambient"))))
    light = rt.PointLight(np.float32([5, 5, -10]), np.float32(20000), np.ones(3, np.float32))
    cam = scene.camera
    cam32 = rt.Camera(*(np.asarray(getattr(cam, f), np.float32)
                        for f in ("eye", "look_at", "up", "fov")), width=8, height=8)
    img = rt.render(rt.Scene(cam32, (tri32,), (light,), np.zeros(3, np.float32)))
    assert img.dtype == np.float32
    np.testing.assert_allclose(img, rt.render(scene), rtol=1e-5)


def test_display_helpers(tmp_path):
    img = rt.render(paper_scene(size=8))
    disp = rt.to_display(img, exposure=0.5)
    assert disp.min() >= 0.0 and disp.max() <= 1.0
    rt.save_png(tmp_path / "x.png", img)
    assert (tmp_path / "x.png").stat().st_size > 0


def _with(scene, **changes):
    import dataclasses

    return dataclasses.replace(scene, **changes)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: _with(s, shapes=(rt.Sphere((0.0, 0.0, 0.0), 0.0),)),
         r"scene.shapes\[0\] \(Sphere\).radius: expected > 0, got 0.0"),
        (lambda s: _with(s, shapes=(rt.Triangle((0.0, 0.0, 0.0), (1.0, 1.0, 1.0),
                                                (2.0, 2.0, 2.0)),)),
         r"scene.shapes\[0\] \(Triangle\): degenerate triangle"),
        (lambda s: _with(s, shapes=(rt.Mesh(np.eye(3), [[0, 1, 3]]),)),
         r"scene.shapes\[0\] \(Mesh\).faces: indices must lie in \[0, 3\)"),
        (lambda s: _with(s, shapes=(rt.Sphere((0.0, np.nan, 0.0), 1.0),)),
         r"scene.shapes\[0\] \(Sphere\).center: expected finite numbers"),
        (lambda s: _with(s, camera=rt.Camera(eye=(np.nan, 0.0, -5.0))),
         r"scene.camera.eye: expected finite numbers"),
        (lambda s: _with(s, lights=(rt.PointLight((0.0, np.nan, 0.0), 1.0),)),
         r"scene.lights\[0\] \(PointLight\).position: expected finite"),
        (lambda s: _with(s, shapes=(rt.Mesh(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0],
                                                      [0.0, np.nan, 0.0]]), [[0, 1, 2]]),)),
         r"scene.shapes\[0\] \(Mesh\).vertices: expected finite numbers"),
        (lambda s: _with(s, shapes=(rt.Sphere((0.0, 0.0, 0.0), 1.0,
                                              rt.Material(diffuse=(0.5, np.nan, 0.5))),)),
         r"scene.shapes\[0\] \(Sphere\).material.diffuse: expected finite numbers"),
        (lambda s: _with(s, shapes=(rt.Mesh(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0],
                                                      [0.0, 1.0, 0.0], [2.0, 0.0, 0.0]]),
                                            [[0, 1, 2], [0, 1, 3]]),)),
         r"scene.shapes\[0\] \(Mesh\).faces: degenerate triangle \(zero area\), face 1"),
        (lambda s: _with(s, shapes=(rt.Sphere((0.0, 0.0, 0.0), -1.0),)),
         r"scene.shapes\[0\] \(Sphere\).radius: expected > 0, got -1.0"),
        (lambda s: _with(s, camera=rt.Camera(eye=(0.0, 0.0, -5.0), up=(0.0, 0.0, -2.0))),
         r"scene.camera.up: .* is parallel to the viewing direction"),
        (lambda s: _with(s, shapes=(rt.Plane((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),)),
         r"scene.shapes\[0\] \(Plane\).normal: expected a non-zero vector"),
        (lambda s: _with(s, lights=(rt.PointLight((0.0, 0.0, 0.0), np.inf),)),
         r"scene.lights\[0\] \(PointLight\).intensity: expected finite"),
        (lambda s: _with(s, camera=rt.Camera(eye=(0.0, 0.0, -5.0), up=(0.0, 0.0, 1.0))),
         r"scene.camera.up: .* is parallel to the viewing direction"),
        (lambda s: _with(s, camera=rt.Camera(eye=(0.0, 0.0, -5.0), fov=180.0)),
         r"scene.camera.fov: expected degrees in \(0, 180\)"),
        (lambda s: _with(s, shapes=(rt.Sphere((0.0, 0.0, 0.0), 1.0, rt.Material(exponent=0.0)),)),
         r"scene.shapes\[0\] \(Sphere\).material.exponent: expected > 0"),
    ],
)
def test_bad_scene_values_name_object_and_field(change, message):
    with pytest.raises(ValueError, match=message):
        rt.render(change(paper_scene(size=4)))


@pytest.mark.parametrize(
    "kwargs, message",
    [({"samples": 3}, r"samples: expected a perfect square"), ({"depth": -1}, r"depth: expected"),
     ({"device": "tpu"}, r"device")],
)
def test_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rt.render(paper_scene(size=4), **kwargs)


def test_not_a_scene():
    with pytest.raises(TypeError, match=r"scene: expected a raytrace.Scene, got dict"):
        rt.render({})
