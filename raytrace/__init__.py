"""raytrace: a differentiable Whitted ray tracer with Numba render and adjoint kernels.

Scenes, materials, lights and cameras are frozen dataclasses (diffsci pytrees); :func:`render`
is one differentiable primitive whose gradient is a Scene-shaped pytree computed by a hand-written
adjoint kernel (``raytrace/DERIVATIONS.md``). Materials may carry a bilinear image
:class:`Texture`; ``render(..., edges=True)`` adds the visibility-edge term (silhouettes, also in
planar mirrors, hard-shadow boundaries and the horizons of infinite planes); :func:`mse` is an
image loss with shape checks; :func:`uv_sphere` builds a sphere mesh.

Example:
    >>> import diffsci as ds, raytrace as rt
    >>> cam = rt.Camera(eye=(0.0, 0.0, -5.0), width=8, height=8)
    >>> def loss(light):
    ...     scene = rt.Scene(cam, (rt.Sphere((0.0, 0.0, 0.0), 1.0),), (light,))
    ...     return (rt.render(scene) ** 2).mean()
    >>> g = ds.grad(loss)(rt.PointLight((2.0, 2.0, -5.0), 500.0))
    >>> type(g).__name__
    'PointLight'
"""

from ._losses import mse
from ._meshes import uv_sphere
from ._model import (
    Camera,
    DirectionalLight,
    Material,
    Mesh,
    Plane,
    PointLight,
    Scene,
    Sphere,
    Texture,
    Triangle,
)
from ._obj import load_obj, save_obj
from ._render import render, save_png, to_display

__all__ = [
    "Camera",
    "DirectionalLight",
    "Material",
    "Mesh",
    "Plane",
    "PointLight",
    "Scene",
    "Sphere",
    "Texture",
    "Triangle",
    "load_obj",
    "mse",
    "render",
    "save_obj",
    "save_png",
    "to_display",
    "uv_sphere",
]
