"""Shared reference scenes for the raytrace tests (small images; every feature exercised)."""

from __future__ import annotations

import numpy as np

import raytrace as rt

PAPER_TRIANGLE = ((-1.7, 1.0, 0.0), (1.0, 1.0, 0.0), (-0.5, -1.0, 0.0))


def paper_scene(size=16, light=(5.0, 5.0, -10.0), intensity=20000.0):
    """The paper's inverse-lighting scene (arXiv 1907.07587 §5) at ``size × size``."""
    mat = rt.Material(diffuse=(0.0, 1.0, 0.0), specular=(1.0, 1.0, 1.0), exponent=50.0,
                      reflection=0.5, ambient=(0.0, 0.05, 0.0))
    return rt.Scene(
        rt.Camera(eye=(0.0, 0.0, -5.0), look_at=(0.0, 0.0, 0.0), fov=45.0, width=size, height=size),
        (rt.Triangle(*PAPER_TRIANGLE, material=mat),),
        (rt.PointLight(light, intensity),),
    )


def mixed_params():
    """Every differentiable parameter of :func:`mixed_scene`, as a dict of float64 arrays."""
    f = np.array
    return {
        "eye": f([0.3, 1.2, -6.0]), "look_at": f([0.0, 0.2, 0.0]), "up": f([0.05, 1.0, 0.0]),
        "fov": f(40.0),
        "c0": f([-0.8, 0.1, 0.5]), "r0": f(0.8), "c1": f([0.9, -0.2, -0.3]), "r1": f(0.55),
        "plane_p": f([0.0, -0.8, 0.0]), "plane_n": f([0.02, 1.0, 0.05]),
        "tri": f([[-2.5, -0.5, 2.5], [2.5, -0.4, 2.6], [0.0, 2.5, 2.8]]),
        "mesh": f([[1.4, 0.6, -1.0], [2.0, 0.7, -0.6], [1.6, 1.5, -0.8], [1.9, 1.3, -1.4]]),
        "kd0": f([0.8, 0.3, 0.2]), "ks0": f([0.5, 0.5, 0.5]), "p0": f(20.0), "refl0": f(0.3),
        "amb0": f([0.05, 0.02, 0.02]),
        "kd1": f([0.2, 0.4, 0.9]), "refl1": f(0.6), "kd_plane": f([0.6, 0.6, 0.5]),
        "refl_plane": f(0.25), "kd_tri": f([0.3, 0.8, 0.3]), "kd_mesh": f([0.9, 0.9, 0.2]),
        "lp": f([2.5, 3.5, -3.0]), "li": f(300.0), "lc": f([1.0, 0.9, 0.8]),
        "ld": f([-0.4, -1.0, 0.6]), "di": f(0.6), "dc": f([0.7, 0.8, 1.0]),
        "bg": f([0.05, 0.1, 0.2]),
    }


def mixed_scene(p, size=12):
    """Spheres, a plane, a triangle and a 2-face mesh; a point and a directional light."""
    mat = rt.Material
    return rt.Scene(
        rt.Camera(eye=p["eye"], look_at=p["look_at"], up=p["up"], fov=p["fov"], width=size,
                  height=size),
        (
            rt.Sphere(p["c0"], p["r0"], mat(diffuse=p["kd0"], specular=p["ks0"], exponent=p["p0"],
                                           reflection=p["refl0"], ambient=p["amb0"])),
            rt.Sphere(p["c1"], p["r1"], mat(diffuse=p["kd1"], specular=(0.3, 0.3, 0.3),
                                           exponent=10.0, reflection=p["refl1"])),
            rt.Plane(p["plane_p"], p["plane_n"], mat(diffuse=p["kd_plane"],
                                                     reflection=p["refl_plane"])),
            rt.Triangle(p["tri"][0], p["tri"][1], p["tri"][2], mat(diffuse=p["kd_tri"])),
            rt.Mesh(p["mesh"], np.array([[0, 1, 2], [0, 2, 3]]),
                    mat(diffuse=p["kd_mesh"], specular=(0.2, 0.2, 0.2))),
        ),
        (rt.PointLight(p["lp"], p["li"], p["lc"]), rt.DirectionalLight(p["ld"], p["di"], p["dc"])),
        background=p["bg"],
    )


def uv_sphere(n, centre=(0.0, 0.0, 0.0), radius=1.0):
    """(vertices, faces) of :func:`raytrace.uv_sphere` (the tests' meshes)."""
    m = rt.uv_sphere(n, centre, radius)
    return m.vertices, m.faces


def textured_params():
    """Every differentiable parameter of :func:`textured_scene` (textures are tiny images)."""
    rng = np.random.default_rng(7)
    f = np.array
    return {
        "eye": f([0.2, 2.0, -5.0]), "look_at": f([0.0, -0.3, 0.5]),
        "floor_tex": rng.uniform(0.2, 1.0, (3, 4, 3)), "floor_kd": f([0.9, 0.8, 0.7]),
        "floor_p": f([0.0, -1.0, 0.0]), "floor_n": f([0.0, 1.0, 0.03]),
        "u_axis": f([0.45, 0.0, 0.1]), "v_axis": f([0.05, 0.02, 0.4]), "floor_refl": f(0.2),
        "tri": f([[-2.2, -0.8, 1.5], [0.2, -0.7, 1.2], [-1.0, 1.4, 1.8]]),
        "tri_uv": f([[0.1, 0.1], [0.9, 0.2], [0.4, 0.8]]),
        "tri_tex": rng.uniform(0.1, 1.0, (2, 3, 3)),
        "mesh": f([[0.4, -0.6, 0.4], [1.9, -0.5, 0.6], [1.8, 1.0, 0.9], [0.5, 0.9, 0.7]]),
        "mesh_uv": f([[0.0, 0.0], [1.3, 0.1], [1.2, 1.1], [-0.1, 0.9]]),
        "mesh_tex": rng.uniform(0.1, 1.0, (4, 4, 3)),
        "lp": f([1.5, 4.0, -3.0]), "ld": f([-0.3, -1.0, 0.4]),
    }


def textured_scene(p, size=10):
    """A textured floor plane (reflective), triangle and 2-face mesh under two lights."""
    mat = rt.Material
    return rt.Scene(
        rt.Camera(eye=p["eye"], look_at=p["look_at"], fov=50.0, width=size, height=size),
        (
            rt.Plane(p["floor_p"], p["floor_n"],
                     mat(diffuse=p["floor_kd"], reflection=p["floor_refl"],
                         texture=rt.Texture(p["floor_tex"])),
                     u_axis=p["u_axis"], v_axis=p["v_axis"]),
            rt.Triangle(p["tri"][0], p["tri"][1], p["tri"][2],
                        mat(diffuse=(1.0, 1.0, 1.0), specular=(0.3, 0.3, 0.3), exponent=8.0,
                            texture=rt.Texture(p["tri_tex"])), uv=p["tri_uv"]),
            rt.Mesh(p["mesh"], np.array([[0, 1, 2], [0, 2, 3]]),
                    mat(diffuse=(0.9, 0.9, 0.9), texture=rt.Texture(p["mesh_tex"])),
                    uv=p["mesh_uv"]),
            rt.Sphere((-0.3, -0.4, -0.6), 0.5, mat(diffuse=(0.8, 0.3, 0.3), reflection=0.3)),
        ),
        (rt.PointLight(p["lp"], 250.0), rt.DirectionalLight(p["ld"], 0.4)),
        background=(0.1, 0.1, 0.15),
    )
