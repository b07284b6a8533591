"""The Wavefront OBJ loader: index forms, polygons, negative indices, round trip, bad input."""

import numpy as np
import pytest

import raytrace as rt
from tests.raytrace.problems import uv_sphere

OBJ = """\
# a unit square and a pentagon-ish polygon, with every corner form
o thing
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0  # trailing comment
vt 0 0
vn 0 0 1
f 1 2 3
f 1/1 3/1 4/1
v 2 0 0 1.0
v 3 0 1
v 3 1 1
v 2 1 0
f -4//1 -3//1 -2//1 -1//1 1/1/1
"""


def test_load_obj_index_forms_polygons_and_negative_indices(tmp_path):
    path = tmp_path / "m.obj"
    path.write_text(OBJ)
    mesh = rt.load_obj(path, rt.Material(diffuse=(0.1, 0.2, 0.3)))
    np.testing.assert_array_equal(mesh.vertices[4:], [[2, 0, 0], [3, 0, 1], [3, 1, 1], [2, 1, 0]])
    np.testing.assert_array_equal(
        mesh.faces, [[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7], [4, 7, 0]])
    np.testing.assert_array_equal(mesh.material.diffuse, [0.1, 0.2, 0.3])


def test_obj_round_trip_on_a_generated_mesh(tmp_path):
    v, f = uv_sphere(6, centre=(0.1, -0.2, 0.3), radius=0.7)
    mesh = rt.Mesh(v, f)
    rt.save_obj(tmp_path / "s.obj", mesh)
    back = rt.load_obj(tmp_path / "s.obj")
    np.testing.assert_array_equal(back.vertices, mesh.vertices)
    np.testing.assert_array_equal(back.faces, mesh.faces)


@pytest.mark.parametrize("text, message", [
    ("v 0 0 0\nv 1 x 0\n", r"line 2: expected 'v x y z \[w\]' with numbers"),
    ("v 0 0 0\nv 1 0\n", r"line 2: expected 'v x y z \[w\]'"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", r"line 4: vertex index 4 out of range; 3 vertices"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 -4\n", r"line 4: vertex index -4 out of range"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", r"line 4: vertex index 0 is invalid"),
    ("v 0 0 0\nv 1 0 0\n\nf 1 2\n", r"line 4: a face needs at least 3 vertices, got 2"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 a/1 2\n", r"line 4: expected a vertex index"),
    ("v 0 0 0\n", r"no faces"),
])
def test_load_obj_errors_name_the_line(tmp_path, text, message):
    path = tmp_path / "bad.obj"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        rt.load_obj(path)
