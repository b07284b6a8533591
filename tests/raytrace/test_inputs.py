"""Input handling at the API boundary: sequences holding traced scalars, lists and tuples, bools,
non-numbers, wrong shapes, non-finite values and string options, as tables.

Traced sequences: every vector (and matrix) field of every scene class is given as a tuple whose
entries are traced scalars (``Camera(look_at=(0.0, t, 0.0))``); the gradient must equal the one
taken through the same field passed as a stacked array, and pass ``check_grads`` (central
differences in float64, reverse and forward mode).
"""

import numpy as np
import pytest

import diffsci as ds
import raytrace as rt
from diffsci.testing import check_grads

pytestmark = pytest.mark.kernels

N = 8
TEX = np.linspace(0.2, 1.0, 2 * 2 * 3).reshape(2, 2, 3)


def base_fields():
    """The plain values of every vector/matrix field the table below perturbs."""
    return {
        "eye": [0.3, 1.0, -5.0], "look_at": [0.0, 0.2, 0.0], "up": [0.05, 1.0, 0.0],
        "center": [0.4, 0.1, 0.5], "point": [0.0, -1.0, 0.0], "normal": [0.05, 1.0, 0.02],
        "u_axis": [0.5, 0.0, 0.1], "v_axis": [0.1, 0.0, 0.5],
        "v0": [-1.6, -0.8, 1.5], "v1": [0.2, -0.7, 1.2], "v2": [-0.9, 1.2, 1.8],
        "uv": [[0.1, 0.1], [0.9, 0.2], [0.4, 0.8]],
        "vertices": [[0.6, -0.6, 0.4], [1.9, -0.5, 0.6], [1.7, 1.0, 0.9]],
        "position": [2.0, 3.0, -3.0], "color": [1.0, 0.9, 0.8],
        "direction": [-0.3, -1.0, 0.4], "dcolor": [0.7, 0.8, 1.0],
        "diffuse": [0.8, 0.4, 0.3], "specular": [0.3, 0.3, 0.3], "ambient": [0.05, 0.02, 0.02],
        "background": [0.1, 0.1, 0.2], "image": TEX.tolist(),
    }


def build(f):
    """A scene with every class, its fields taken from the dict ``f`` (values as given)."""
    tex = rt.Material(diffuse=(1.0, 1.0, 1.0), texture=rt.Texture(f["image"]))
    return rt.Scene(
        rt.Camera(eye=f["eye"], look_at=f["look_at"], up=f["up"], fov=50.0, width=N, height=N),
        (rt.Sphere(f["center"], 0.6, rt.Material(diffuse=f["diffuse"], specular=f["specular"],
                                                 exponent=10.0, ambient=f["ambient"])),
         rt.Plane(f["point"], f["normal"], tex, u_axis=f["u_axis"], v_axis=f["v_axis"]),
         rt.Triangle(f["v0"], f["v1"], f["v2"], tex, uv=f["uv"]),
         rt.Mesh(f["vertices"], [[0, 1, 2]], rt.Material(diffuse=(0.6, 0.9, 0.3)))),
        (rt.PointLight(f["position"], 200.0, f["color"]),
         rt.DirectionalLight(f["direction"], 0.5, f["dcolor"])),
        background=f["background"],
    )


WEIGHTS = np.linspace(0.5, 1.5, N * N * 3).reshape(N, N, 3)


def loss_with(name, index, value_of):
    """sum(W · render) with entry ``index`` of field ``name`` replaced by value_of(t)."""
    def loss(t):
        f = base_fields()
        entry = value_of(t)
        field = f[name]
        if len(index) == 1:
            f[name] = tuple(entry if k == index[0] else field[k] for k in range(len(field)))
        else:
            i, j = index
            f[name] = tuple(tuple(entry if (r, c) == (i, j) else field[r][c]
                                  for c in range(len(field[r]))) for r in range(len(field)))
        return ds.numpy.sum(WEIGHTS * rt.render(build(f), depth=1, samples=1))
    return loss


# (field, index of the traced entry): every vector and matrix field of every class.
TRACED = [("eye", (0,)), ("look_at", (1,)), ("up", (0,)), ("center", (2,)), ("point", (1,)),
          ("normal", (0,)), ("u_axis", (0,)), ("v_axis", (2,)), ("v0", (0,)), ("v1", (1,)),
          ("v2", (2,)), ("uv", (1, 0)), ("vertices", (2, 1)), ("position", (0,)),
          ("color", (1,)), ("direction", (0,)), ("dcolor", (2,)), ("diffuse", (0,)),
          ("specular", (1,)), ("ambient", (2,)), ("background", (0,)), ("image", (1, 1))]


@pytest.mark.parametrize("name, index", TRACED)
def test_sequences_holding_traced_scalars_carry_the_gradient(name, index):
    field = base_fields()[name]
    x0 = np.asarray(field[index[0]] if len(index) == 1 else field[index[0]][index[1]], float)
    if name == "image":  # an image entry is an RGB row: trace its texel as a 3-vector
        x0 = np.asarray(TEX[index[0], index[1]])
    loss = loss_with(name, index, lambda t: t)
    g = ds.grad(loss)(x0)
    assert np.all(np.isfinite(g)) and np.any(g != 0.0), (name, g)

    # The same field passed as one array gives the same gradient.
    def as_array(t):
        f = base_fields()
        a = np.asarray(f[name], float)
        mask = np.zeros(a.shape)
        mask[index] = 1.0
        f[name] = a * (1.0 - mask) + mask * t
        return ds.numpy.sum(WEIGHTS * rt.render(build(f), depth=1, samples=1))

    np.testing.assert_allclose(g, ds.grad(as_array)(x0), rtol=1e-12, atol=1e-12)
    check_grads(loss, (x0,))


def test_camera_look_at_with_a_traced_scalar():
    # The reviewer's reproducer: Camera(look_at=(0.0, t, 0.0)) with a traced t.
    def loss(t):
        cam = rt.Camera(eye=(0.0, 0.5, -5.0), look_at=(0.0, t, 0.0), width=N, height=N)
        s = rt.Scene(cam, (rt.Sphere((0.0, 0.0, 0.0), 1.0),), (rt.PointLight((2.0, 2.0, -5.0),
                                                                           500.0),))
        return ds.numpy.sum(rt.render(s))

    check_grads(loss, (np.asarray(0.1),))
    assert ds.grad(loss)(np.asarray(0.1)) != 0.0


def test_plain_lists_and_tuples_are_accepted_wherever_an_array_is():
    f = base_fields()
    as_tuples = {k: (tuple(map(tuple, v)) if isinstance(v[0], list) and k != "image" else
                     tuple(v) if not isinstance(v[0], list) else v) for k, v in f.items()}
    as_arrays = {k: np.asarray(v, float) for k, v in f.items()}
    img = rt.render(build(f))
    np.testing.assert_array_equal(img, rt.render(build(as_tuples)))
    np.testing.assert_array_equal(img, rt.render(build(as_arrays)))
    target = img.tolist()
    assert rt.mse(img, target) == 0.0
    assert rt.mse(img, target, weights=np.ones((N, N)).tolist()) == 0.0
    assert rt.uv_sphere(3, center=[0.0, 1.0, 0.0]).vertices.shape == (14, 3)


# ---------------------------------------------------------------------------------------------
# Bad input: one row per case: (what is built, exception type, message fragment)
# ---------------------------------------------------------------------------------------------
def _scene_with(**changes):
    f = base_fields()
    f.update(changes)
    return build(f)


BAD = [
    # bools are not numbers
    (lambda: rt.Sphere((0.0, 0.0, 0.0), True), TypeError,
     r"Sphere\.radius: expected numbers, got a bool"),
    (lambda: rt.Camera(eye=(0.0, True, -5.0)), TypeError,
     r"Camera\.eye: expected numbers, got a bool"),
    (lambda: rt.PointLight((0.0, 1.0, 0.0), np.bool_(True)), TypeError, r"PointLight\.intensity"),
    (lambda: rt.Material(diffuse=np.array([True, False, True])), TypeError,
     r"Material\.diffuse: expected numbers, got a bool"),
    (lambda: rt.Texture([[[True, 0.0, 0.0]]]), TypeError, r"Texture\.image: expected numbers"),
    (lambda: rt.Mesh([[0.0, 0.0, True], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [[0, 1, 2]]),
     TypeError, r"Mesh\.vertices: expected numbers, got a bool"),
    (lambda: rt.Camera(eye=(0.0, 0.0, -5.0), width=True), ValueError, r"Camera\.width"),
    (lambda: rt.uv_sphere(True), ValueError, r"uv_sphere: n: expected an int >= 2"),
    (lambda: rt.uv_sphere(3, radius=True), TypeError, r"uv_sphere: radius: expected a number"),
    (lambda: rt.render(_scene_with(), depth=True), ValueError, r"render: depth"),
    (lambda: rt.render(_scene_with(), seed=False), ValueError, r"render: seed"),
    # non-numbers and ragged sequences
    (lambda: rt.Sphere(("0", 0.0, 0.0), 1.0), TypeError,
     r"Sphere\.center: expected numbers, got str"),
    (lambda: rt.Sphere(None, 1.0), TypeError, r"Sphere\.center: expected a number or an array"),
    (lambda: rt.Triangle((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0),
                         uv=((0.0, 0.0), (1.0,), (0.0, 1.0))),
     ValueError, r"Triangle\.uv: expected a rectangular"),
    # shapes
    (lambda: rt.Sphere((0.0, 0.0), 1.0), ValueError,
     r"Sphere\.center: expected shape \(3,\), got \(2,\)"),
    (lambda: rt.Plane((0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0)), ValueError,
     r"Plane\.normal: expected shape \(3,\)"),
    (lambda: rt.Mesh([[0.0, 0.0], [1.0, 0.0]], [[0, 1, 1]]), ValueError,
     r"Mesh\.vertices: expected shape \(V, 3\)"),
    (lambda: rt.Texture(np.ones((2, 2))), ValueError,
     r"Texture\.image: expected shape \(h, w, 3\)"),
    (lambda: rt.Scene(rt.Camera(eye=(0.0, 0.0, -5.0)), background=(0.0, 0.0)), ValueError,
     r"Scene\.background: expected shape \(3,\)"),
    (lambda: rt.mse(np.zeros((2, 2, 3)), np.zeros((2, 3, 3))), ValueError,
     r"raytrace\.mse: target: expected"),
    (lambda: rt.mse(np.zeros((2, 2, 3)), np.zeros((2, 2, 3)), weights=np.ones((3, 2))), ValueError,
     r"raytrace\.mse: weights: expected shape"),
    (lambda: rt.mse(np.zeros((2, 2)), np.zeros((2, 2))), ValueError,
     r"raytrace\.mse: image: expected"),
    (lambda: rt.uv_sphere(3, center=(0.0, 1.0)), ValueError,
     r"uv_sphere: center: expected shape \(3,\)"),
    # non-finite values name the object and field
    (lambda: rt.render(_scene_with(eye=[0.0, np.nan, -5.0])), ValueError,
     r"scene\.camera\.eye: expected finite numbers"),
    (lambda: rt.render(_scene_with(center=[np.inf, 0.0, 0.0])), ValueError,
     r"scene\.shapes\[0\] \(Sphere\)\.center: expected finite"),
    (lambda: rt.render(_scene_with(normal=[0.0, np.nan, 0.0])), ValueError,
     r"scene\.shapes\[1\] \(Plane\)\.normal: expected finite"),
    (lambda: rt.render(_scene_with(uv=[[0.0, 0.0], [np.nan, 0.0], [0.0, 1.0]])), ValueError,
     r"scene\.shapes\[2\] \(Triangle\)\.uv: expected finite"),
    (lambda: rt.render(_scene_with(vertices=[[0.6, -0.6, np.inf], [1.9, -0.5, 0.6],
                                             [1.7, 1.0, 0.9]])), ValueError,
     r"scene\.shapes\[3\] \(Mesh\)\.vertices: expected finite"),
    (lambda: rt.render(_scene_with(position=[np.nan, 0.0, 0.0])), ValueError,
     r"scene\.lights\[0\] \(PointLight\)\.position: expected finite"),
    (lambda: rt.render(_scene_with(direction=[0.0, -np.inf, 0.0])), ValueError,
     r"scene\.lights\[1\] \(DirectionalLight\)\.direction: expected finite"),
    (lambda: rt.render(_scene_with(diffuse=[np.nan, 0.0, 0.0])), ValueError,
     r"scene\.shapes\[0\] \(Sphere\)\.material\.diffuse: expected finite"),
    (lambda: rt.render(_scene_with(image=np.full((2, 2, 3), np.inf))), ValueError,
     r"material\.texture\.image: expected finite"),
    (lambda: rt.render(_scene_with(background=[0.0, np.nan, 0.0])), ValueError,
     r"scene\.background: expected finite"),
    (lambda: rt.mse(np.zeros((2, 2, 3)), np.full((2, 2, 3), np.nan)), ValueError,
     r"raytrace\.mse: target: expected finite"),
    (lambda: rt.mse(np.zeros((2, 2, 3)), np.zeros((2, 2, 3)), weights=np.full((2, 2), np.inf)),
     ValueError, r"raytrace\.mse: weights: expected finite"),
    (lambda: rt.uv_sphere(3, radius=np.nan), ValueError, r"uv_sphere: radius: expected > 0"),
    (lambda: rt.render(_scene_with(), edges=np.nan), ValueError, r"render: edges: expected"),
    # options given by name
    (lambda: rt.render(_scene_with(), device="gpu"), ValueError,
     r"device must be one of 'cpu', 'cuda'"),
    (lambda: rt.render(_scene_with(), edges="yes"), ValueError, r"render: edges: expected"),
]


@pytest.mark.parametrize("k", range(len(BAD)))
def test_bad_input_raises_naming_the_function_and_argument(k):
    make, exc, match = BAD[k]
    with pytest.raises(exc, match=match):
        make()


def test_string_options_and_numpy_bools():
    s = _scene_with()
    img = rt.render(s)
    for device in ("cpu", "CPU", " Cpu "):
        np.testing.assert_array_equal(rt.render(s, device=device), img)
    np.testing.assert_array_equal(rt.render(s, edges=np.True_), img)
    g1 = ds.grad(lambda c: ds.numpy.sum(rt.render(_scene_with(center=c), edges=np.True_)))(
        np.array(base_fields()["center"]))
    g2 = ds.grad(lambda c: ds.numpy.sum(rt.render(_scene_with(center=c), edges=True)))(
        np.array(base_fields()["center"]))
    np.testing.assert_array_equal(g1, g2)
