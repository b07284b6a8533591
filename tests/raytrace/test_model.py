"""Scene model: conversions, shape checks and type checks in __post_init__."""

import numpy as np
import pytest

import raytrace as rt


def test_lists_become_float64_arrays_and_float32_stays():
    s = rt.Sphere([0, 0, 1], 2)
    assert s.center.dtype == np.float64 and s.radius.shape == ()
    assert isinstance(s.material, rt.Material)
    t = rt.Triangle(np.zeros(3, np.float32), np.ones(3, np.float32), np.eye(3, dtype=np.float32)[0])
    assert t.v0.dtype == np.float32


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: rt.Sphere((0.0, 0.0), 1.0), r"Sphere.center: expected shape \(3,\), got \(2,\)"),
        (lambda: rt.Material(diffuse=(1.0, 1.0)), r"Material.diffuse: expected shape"),
        (lambda: rt.PointLight((0.0, 0.0, 0.0), intensity=(1.0, 2.0)), r"PointLight.intensity"),
        (lambda: rt.Camera(eye=(0.0, 0.0, 0.0), width=0), r"Camera.width: expected a positive int"),
        (lambda: rt.Mesh(np.zeros((3, 2)), [[0, 1, 2]]), r"Mesh.vertices: expected shape \(V, 3\)"),
        (lambda: rt.Mesh(np.zeros((3, 3)), [[0.0, 1.0, 2.0]]), r"Mesh.faces: expected an integer"),
    ],
)
def test_shape_errors_name_class_and_field(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_type_errors():
    cam = rt.Camera(eye=(0.0, 0.0, -5.0))
    with pytest.raises(TypeError, match=r"Scene.shapes\[0\]: expected Sphere"):
        rt.Scene(cam, ("not a shape",))
    with pytest.raises(TypeError, match=r"Scene.lights\[0\]: expected PointLight"):
        rt.Scene(cam, (), (rt.Sphere((0.0, 0.0, 0.0), 1.0),))
    with pytest.raises(TypeError, match=r"Scene.camera: expected a Camera"):
        rt.Scene("camera")
    with pytest.raises(TypeError, match=r"Sphere.material: expected a Material"):
        rt.Sphere((0.0, 0.0, 0.0), 1.0, material="red")
