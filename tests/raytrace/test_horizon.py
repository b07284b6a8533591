"""The horizon (vanishing line) of infinite planes in the edge term (DERIVATIONS.md, R16).

Two references. (1) A closed form: a plane lit uniformly (a directional light along its normal,
no ambient) over a uniform background renders, summed over the image, to
c·A + b·(W·H − A) with A the screen area on the plane's side of its horizon, the exact area of
a clipped polygon computed here from the camera's geometry (independently of the package); its
derivative by a central difference of that exact area is the reference for the camera's pitch,
roll and fov and the plane's normal, over a grid of poses and normals. There the interior
derivative is zero (the shading is constant and the normal's shading derivative vanishes at the
light's direction), so without the horizon term the gradient is 0. (2) Central differences of
high-sample renders of a scene with a point light, a sphere hiding part of the horizon and a
reflecting floor, whose horizon the interior term misses.
"""

import itertools

import numpy as np
import pytest

import diffsci as ds
import raytrace as rt
from diffsci.testing import check_grads

pytestmark = pytest.mark.kernels

N = 16
KD, BG = 0.7, 0.2


def _basis(eye, look_at, up, fov):
    f = np.asarray(look_at, float) - np.asarray(eye, float)
    f = f / np.linalg.norm(f)
    r = np.cross(f, up)
    r = r / np.linalg.norm(r)
    u = np.cross(r, f)
    th = np.tan(np.deg2rad(fov) / 2.0)
    return f, r * th, u * th


def _exact_area(eye, look_at, up, fov, point, normal, size=N):
    """Screen area (pixels²) of the rays hitting the plane: the image rectangle clipped by the
    half-plane t = (point − eye)·m / (d(s)·m) > 0 (Sutherland–Hodgman, then the shoelace)."""
    f, r, u = _basis(eye, look_at, up, fov)
    m = np.asarray(normal, float)
    side = np.sign((np.asarray(point, float) - eye) @ m)

    def g(x, y):
        d = f + (2.0 * x / size - 1.0) * r + (1.0 - 2.0 * y / size) * u
        return side * (d @ m)

    poly = [(0.0, 0.0), (size, 0.0), (size, size), (0.0, size)]
    out = []
    for k, a in enumerate(poly):
        b = poly[(k + 1) % len(poly)]
        ga, gb = g(*a), g(*b)
        if ga > 0:
            out.append(a)
        if (ga > 0) != (gb > 0):
            w = ga / (ga - gb)
            out.append((a[0] + w * (b[0] - a[0]), a[1] + w * (b[1] - a[1])))
    if len(out) < 3:
        return 0.0
    x, y = np.array(out).T
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def _uniform_scene(pitch, roll, fov, normal, light):
    """A camera 1.5 above the plane x·m = 0 through the origin, looking along +z tilted by
    ``pitch`` and rolled by ``roll``; the light shines along −``light`` (the plain normal)."""
    zero = np.asarray(0.0)
    eye = np.array([0.0, 1.5, 0.0])
    look_at = eye + ds.numpy.stack([zero, ds.numpy.sin(pitch), ds.numpy.cos(pitch)])
    up = ds.numpy.stack([ds.numpy.sin(roll), ds.numpy.cos(roll), zero])
    return rt.Scene(
        rt.Camera(eye=eye, look_at=look_at, up=up, fov=fov, width=N, height=N),
        (rt.Plane((0.0, 0.0, 0.0), normal, rt.Material(diffuse=(KD, KD, KD))),),
        (rt.DirectionalLight(-np.asarray(light, float), 1.0),),
        background=(BG, BG, BG),
    )


def _uniform_loss(pitch, roll, fov, normal, light, edges=True, seed=0):
    return ds.numpy.sum(rt.render(_uniform_scene(pitch, roll, fov, normal, light), depth=0,
                                  samples=1, edges=edges, seed=seed))


def _closed_form(pitch, roll, fov, normal):
    """d/dθ of (c·A + b·(W·H − A)) for θ = pitch, roll, fov, normal: (c − b)·dA/dθ (3 colour
    channels), dA/dθ by central differences of the exact area."""
    def area(pitch, roll, fov, normal):
        eye = np.array([0.0, 1.5, 0.0])
        look_at = eye + np.array([0.0, np.sin(pitch), np.cos(pitch)])
        up = np.array([np.sin(roll), np.cos(roll), 0.0])
        return _exact_area(eye, look_at, up, fov, (0.0, 0.0, 0.0), normal)

    h = 1e-6
    base = dict(pitch=pitch, roll=roll, fov=fov, normal=np.asarray(normal, float))
    out = {}
    for name in ("pitch", "roll", "fov"):
        hi, lo = dict(base), dict(base)
        hi[name] += h
        lo[name] -= h
        out[name] = (area(**hi) - area(**lo)) / (2 * h)
    dn = np.zeros(3)
    for k in range(3):
        hi, lo = dict(base), dict(base)
        hi["normal"] = base["normal"] + h * np.eye(3)[k]
        lo["normal"] = base["normal"] - h * np.eye(3)[k]
        dn[k] = (area(**hi) - area(**lo)) / (2 * h)
    out["normal"] = dn
    return {k: 3.0 * (KD - BG) * v for k, v in out.items()}


POSES = list(itertools.product((-0.15, 0.0, 0.1), (0.0, 0.3), (40.0, 70.0)))
NORMALS = [(0.0, 1.0, 0.0), (0.1, 1.0, -0.08), (-0.15, 1.0, 0.1)]


@pytest.mark.parametrize("normal", NORMALS)
@pytest.mark.parametrize("pitch, roll, fov", POSES)
def test_horizon_term_matches_the_exact_area_derivative(pitch, roll, fov, normal):
    ref = _closed_form(pitch, roll, fov, normal)
    normal = np.asarray(normal, float)
    x = (np.asarray(pitch), np.asarray(roll), np.asarray(fov), normal)
    g = ds.grad(lambda *a: _uniform_loss(*a, normal), argnums=(0, 1, 2, 3))(*x)
    g0 = ds.grad(lambda *a: _uniform_loss(*a, normal, edges=False), argnums=(0, 1, 2, 3))(*x)
    got = dict(zip(("pitch", "roll", "fov", "normal"), g))
    scale = max(abs(ref["pitch"]), 1.0)
    for name in ("pitch", "roll", "fov", "normal"):
        # The samples lie on the exact line and the jump is constant: only the stratified
        # quadrature of the (affine) normal velocity along the line is approximate.
        np.testing.assert_allclose(got[name], ref[name], rtol=2e-2, atol=2e-3 * scale,
                                   err_msg=name)
    # Without the horizon term all of it is missing (the interior derivative is zero here).
    for name, v in zip(("pitch", "roll", "fov", "normal"), g0):
        np.testing.assert_allclose(v, 0.0, atol=1e-9, err_msg=name)
    assert abs(ref["pitch"]) > 50.0  # the horizon crosses the image in every pose of the grid


def test_pitch_closed_form():
    # No roll, level floor: the horizon is the row y_h = (1 + tan(pitch)/T)·H/2, T = tan(fov/2),
    # so d/dpitch Σ image = 3·W·(b − c)·H/(2 T cos²(pitch)) (3 colour channels).
    for pitch in (-0.3, -0.1, 0.0, 0.2):
        t = np.tan(np.deg2rad(45.0) / 2.0)
        ref = 3 * N * (BG - KD) * N / (2 * t * np.cos(pitch) ** 2)
        level = (0.0, 1.0, 0.0)
        g = ds.grad(lambda p: _uniform_loss(p, np.asarray(0.0), 45.0, level, level))(
            np.asarray(pitch))
        np.testing.assert_allclose(float(g), ref, rtol=1e-9)


def test_interior_gradient_of_the_uniform_scene_passes_check_grads():
    # Away from the horizon's motion the render is smooth in the shading parameters: the light
    # intensity and the plane's diffuse colour (check_grads, central differences in float64).
    def image(kd, intensity):
        tilted = (0.1, 1.0, 0.0)
        s = _uniform_scene(np.asarray(-0.2), np.asarray(0.1), 45.0, tilted, tilted)
        plane = rt.Plane(s.shapes[0].point, s.shapes[0].normal, rt.Material(diffuse=kd))
        light = rt.DirectionalLight(s.lights[0].direction, intensity)
        return rt.render(rt.Scene(s.camera, (plane,), (light,), s.background), samples=4,
                         edges=True)

    check_grads(image, (np.array([0.6, 0.7, 0.8]), np.asarray(1.3)))


# ---------------------------------------------------------------------------------------------
# A lit scene against finite differences of high-sample renders
# ---------------------------------------------------------------------------------------------
RAMP = np.linspace(0.0, 1.0, N)
WEIGHTS = (RAMP[None, :, None] + 0.5 * RAMP[:, None, None]) * np.array([1.0, 0.7, 0.4])
BASE = {"look_y": 0.6, "up_x": 0.15, "fov": 50.0, "normal": np.array([0.08, 1.0, -0.05])}


def lit_scene(look_y, up_x, fov, normal, reflection=0.0):
    zero, one = np.asarray(0.0), np.asarray(1.0)
    cam = rt.Camera(eye=(0.0, 1.2, -4.0), look_at=(0.0, look_y, 0.0),
                    up=ds.numpy.stack([up_x, one, zero]), fov=fov, width=N, height=N)
    floor = rt.Plane((0.0, -1.0, 0.0), normal,
                     rt.Material(diffuse=(0.8, 0.7, 0.6), specular=(0.3, 0.3, 0.3), exponent=20.0,
                                 ambient=(0.1, 0.1, 0.05), reflection=reflection))
    ball = rt.Sphere((1.2, -0.05, 3.0), 0.8, rt.Material(diffuse=(0.2, 0.4, 0.9)))
    return rt.Scene(cam, (floor, ball),
                    (rt.PointLight((1.0, 3.0, -2.0), 150.0),
                     rt.DirectionalLight((0.4, -1.0, 0.6), 0.5)),
                    background=(0.3, 0.4, 0.6))


def _lit_loss(name, t, samples, edges=False, seed=0, reflection=0.0):
    p = dict(BASE)
    p[name] = p[name] + t
    return np.sum(WEIGHTS * rt.render(lit_scene(**p, reflection=reflection), depth=1,
                                      samples=samples, edges=edges, seed=seed))


LIT_CASES = [("look_y", 0.0), ("up_x", 0.0), ("fov", 0.0),
             ("normal", 0.0), ("look_y", 0.4), ("normal", 0.4)]


@pytest.mark.parametrize("name, reflection", LIT_CASES)
def test_horizon_term_matches_high_sample_finite_differences(name, reflection):
    direction = np.array([1.0, 0.0, 0.0]) if name == "normal" else 1.0
    eps = 0.02 if name != "fov" else 0.5

    def loss(t, samples, edges=False, seed=0):
        return _lit_loss(name, t * direction, samples, edges, seed, reflection)

    fd = (loss(eps, 4096) - loss(-eps, 4096)) / (2 * eps)

    def grad(edges):
        return np.mean([float(ds.grad(lambda t: loss(t, 256, edges, seed))(np.asarray(0.0)))
                        for seed in range(2)])

    with_edges, interior = grad(16.0), grad(False)
    assert abs(with_edges - fd) < 0.04 * abs(fd) + 0.05, (name, fd, with_edges, interior)
    assert abs(interior - fd) > 0.1 * abs(fd), (name, fd, with_edges, interior)


def test_forward_mode_with_horizons_is_the_transpose_of_reverse_mode():
    rng = np.random.default_rng(3)
    xs = (np.asarray(0.6), np.asarray(0.15), np.asarray(50.0), BASE["normal"].copy())
    ts = (rng.normal(), rng.normal(), rng.normal(), rng.normal(size=3))
    ts = tuple(np.asarray(t) for t in ts)
    u = rng.normal(size=(N, N, 3))

    def image(*a):
        return rt.render(lit_scene(*a, reflection=0.3), depth=1, samples=4, edges=True, seed=2)

    _, jt = ds.jvp(image, xs, ts)
    _, back = ds.pullback(image, *xs)
    rhs = sum(np.sum(a * b) for a, b in zip(back(u), ts))
    np.testing.assert_allclose(np.sum(u * jt), rhs, rtol=1e-10)


def test_hidden_horizon_adds_nothing():
    # A wall in front of the camera hides the floor's horizon entirely: no horizon samples.
    from raytrace._horizon import horizon_boundary
    from raytrace._pack import pack

    s = lit_scene(**BASE)
    wall = rt.Plane((0.0, 0.0, 2.0), (0.0, 0.0, 1.0), rt.Material(diffuse=(0.5, 0.5, 0.5)))
    hidden = rt.Scene(s.camera, s.shapes + (wall,), s.lights, s.background)
    assert horizon_boundary(pack(s), N, N, 1, 4.0) is not None
    b = horizon_boundary(pack(hidden), N, N, 1, 4.0)
    # The wall's own horizon (its vanishing line) lies outside this view; the floor's is hidden.
    assert b is None


@pytest.mark.parametrize("pitch", [-0.12, 0.0, 0.08])
def test_parallel_planes_share_one_horizon(pitch):
    # A floor and a ceiling (exactly parallel) have the same horizon; across it the image jumps
    # from the floor's radiance (0: the ceiling shadows it) to the ceiling's (its ambient, 0.3:
    # the light shines on its back). Each plane samples the line with weight 1/2, so the pitch
    # gradient is (0 − 0.3)·dA/dpitch once, A the floor's exact screen area.
    level = (0.0, 1.0, 0.0)

    def loss(p):
        s = _uniform_scene(p, np.asarray(0.0), 45.0, level, level)
        ceiling = rt.Plane((0.0, 3.0, 0.0), (0.0, -2.0, 0.0),
                           rt.Material(diffuse=(0.0, 0.0, 0.0), ambient=(0.3, 0.3, 0.3)))
        return ds.numpy.sum(rt.render(rt.Scene(s.camera, s.shapes + (ceiling,), s.lights,
                                               s.background), depth=0, edges=True))

    ref = _closed_form(pitch, 0.0, 45.0, level)["pitch"] * (0.0 - 0.3) / (KD - BG)
    np.testing.assert_allclose(float(ds.grad(loss)(np.asarray(pitch))), ref, rtol=1e-6)
