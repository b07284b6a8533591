"""The scene model: frozen dataclasses for shapes, materials, lights, the camera and the scene.

Every class is a final, frozen dataclass and a diffsci pytree (no registration needed): the gradient
of an image loss with respect to a :class:`Scene` is a ``Scene`` whose fields hold the cotangents.
Integer and layout fields (image size, mesh faces) are not differentiated.

Numeric fields are typed :data:`diffsci.typing.ArrayLike`: they accept numbers, (nested) sequences,
arrays and traced values, and hold float arrays (or traced values) once built.
``__post_init__`` converts lists, tuples and Python numbers to float64 arrays (float32 arrays stay
float32) and checks *shapes* only, so that traced values and gradients (which diffsci rebuilds
without calling ``__init__``) pass through. A list or tuple holding traced scalars or vectors
(``Camera(look_at=(0.0, t, 0.0))`` with a traced ``t``) becomes one traced array
(``diffsci.numpy.stack``), so the gradient reaches each entry. Bools, strings and other
non-numbers are refused with a TypeError naming the class and field. The value checks (finite
numbers, positive radii, non-degenerate triangles, a camera not looking along its up vector)
happen once, in :func:`raytrace.render`, where the scene is first rendered; see
``raytrace/_ops.py``.

Shading model (Whitted 1980, Blinn 1977), per hit point x with normal n and view direction v:

    L(x) = ambient + Σ_lights vis · E · (diffuse · max(n·l, 0) + specular · max(n·h, 0)^exponent)
           + reflection · L(mirror ray)

with E = intensity · colour / (4π d²) for a point light at distance d (the falloff of the paper,
arXiv 1907.07587 §5) and E = intensity · colour for a directional light.

References:
    T. Whitted, "An improved illumination model for shaded display", CACM 23(6), 1980.
    J. F. Blinn, "Models of light reflection for computer synthesized pictures", SIGGRAPH 1977.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np

import diffsci as ds
from diffsci.extend import is_tracer
from diffsci.typing import ArrayLike

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
]


def _has_tracer(value) -> bool:
    """Does ``value`` (a traced value, or a list/tuple holding some at any depth) carry a trace?"""
    if is_tracer(value):
        return True
    return isinstance(value, (list, tuple)) and any(_has_tracer(v) for v in value)


def _bad_leaf(value):
    """The first bool, string or other non-number in a (nested) list/tuple, else None."""
    if isinstance(value, (list, tuple)):
        for v in value:
            bad = _bad_leaf(v)
            if bad is not None:
                return bad
        return None
    if is_tracer(value):
        return None
    if isinstance(value, (bool, np.bool_)) or (
        isinstance(value, np.ndarray) and value.dtype.kind not in "fiuc"
    ):
        return value
    if isinstance(value, (int, float, np.number, np.ndarray)):
        return None
    return value


def _stack(value, dtype):
    """A nested list/tuple holding traced scalars or vectors → one traced array (ds.numpy.stack,
    plain entries as ``dtype`` arrays), so the gradient flows to each entry."""
    if isinstance(value, (list, tuple)):
        return ds.numpy.stack([_stack(v, dtype) for v in value])
    return value if is_tracer(value) else np.asarray(value, dtype=dtype)


def to_float_array(where: str, value: ArrayLike, like: ArrayLike | None = None) -> Any:
    """A field's value as a float array, validated once where it enters the model.

    Args:
        where: the name used in errors (``"Camera.look_at"``).
        value: a number, a (nested) list or tuple, an array, a traced value, or a list/tuple
            holding traced scalars or vectors (stacked into one traced array with
            ``diffsci.numpy.stack``, so the gradient reaches each entry).
        like: an array whose float dtype plain values take (default float64; float32 arrays
            stay float32).

    Returns:
        A float array, or a traced value.

    Raises:
        TypeError: a bool (bools are not numbers here), a string or another non-number.
        ValueError: a ragged sequence.

    Example:
        >>> to_float_array("Sphere.center", (0, 1, 2))
        array([0., 1., 2.])
    """
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray)
                                                and value.dtype.kind == "b"):
        raise TypeError(f"{where}: expected numbers, got a bool ({value!r}); bools are not "
                        f"numbers here")
    bad = _bad_leaf(value)
    if bad is not None:
        kind = "a bool" if isinstance(bad, (bool, np.bool_)) or (
            isinstance(bad, np.ndarray) and bad.dtype.kind == "b") else type(bad).__name__
        raise TypeError(f"{where}: expected numbers, got {kind} ({bad!r}) in {value!r}")
    float_like = isinstance(like, np.ndarray) and like.dtype.kind == "f"
    dtype = like.dtype if float_like else np.float64
    if isinstance(value, np.floating):
        return np.asarray(value)
    if isinstance(value, (list, tuple)) and _has_tracer(value):
        try:
            return _stack(value, dtype)
        except ValueError as exc:
            raise ValueError(f"{where}: expected a rectangular array, got a ragged sequence "
                             f"{value!r} ({exc})") from None
    if isinstance(value, (int, float, list, tuple, np.number)) or (
        isinstance(value, np.ndarray) and value.dtype.kind not in "f"
    ):
        try:
            return np.asarray(value, dtype=dtype)
        except ValueError:
            raise ValueError(f"{where}: expected a rectangular array of numbers, got the ragged "
                             f"sequence {value!r}") from None
    if not (is_tracer(value) or isinstance(value, np.ndarray)):
        raise TypeError(f"{where}: expected a number or an array of numbers, got "
                        f"{type(value).__name__} ({value!r})")
    return value


def _as_float(obj: Any, name: str, value: ArrayLike, shape: tuple[int, ...],
              like: ArrayLike | None = None) -> None:
    """Convert field ``name`` with :func:`to_float_array` and check its shape."""
    where = f"{type(obj).__name__}.{name}"
    value = to_float_array(where, value, like)
    object.__setattr__(obj, name, value)
    got = tuple(getattr(value, "shape", ()))
    want = tuple(shape)
    if got != want:
        raise ValueError(f"{where}: expected shape {want}, got {got}")


@dataclass(frozen=True)
class Texture:
    """An RGB image looked up at a hit's texture coordinates (u, v), bilinearly filtered.

    Texel (r, c) of an (h, w, 3) ``image`` has its centre at u = (c + 0.5)/w, v = (r + 0.5)/h;
    coordinates wrap (repeat) outside [0, 1). A textured material's diffuse colour at a hit is
    ``diffuse ⊙ image(u, v)``; the texels are differentiable (``raytrace/DERIVATIONS.md``,
    R14–R15). Planes take (u, v) from their ``u_axis``/``v_axis``, triangles and meshes from
    their vertex ``uv``; spheres cannot be textured.

    Example:
        >>> Texture(np.ones((2, 4, 3))).image.shape
        (2, 4, 3)
    """

    image: ArrayLike

    def __post_init__(self):
        img = to_float_array("Texture.image", self.image)
        object.__setattr__(self, "image", img)
        shape = tuple(getattr(img, "shape", ()))
        if len(shape) != 3 or shape[2] != 3 or shape[0] < 1 or shape[1] < 1:
            raise ValueError(f"Texture.image: expected shape (h, w, 3) with h, w >= 1, got {shape}")


@dataclass(frozen=True)
class Material:
    """Surface appearance: Lambert diffuse, Blinn–Phong specular, mirror reflection and ambient.

    Args:
        diffuse: RGB Lambert colour, shape (3,).
        specular: RGB Blinn–Phong specular colour, shape (3,) (default black: no highlight).
        exponent: Blinn–Phong exponent (> 0).
        reflection: mirror reflection coefficient; the mirror ray's colour is added times this.
        ambient: RGB colour added at every hit, whatever the lights.
        texture: an optional :class:`Texture` multiplying the diffuse colour.

    Example:
        >>> Material(diffuse=(0.0, 1.0, 0.0), reflection=0.5).reflection
        array(0.5)

    References:
        Blinn (1977), eq. for the half-vector highlight (n·h)^p; Whitted (1980) eq. (1).
    """

    diffuse: ArrayLike = (0.8, 0.8, 0.8)
    specular: ArrayLike = (0.0, 0.0, 0.0)
    exponent: ArrayLike = 50.0
    reflection: ArrayLike = 0.0
    ambient: ArrayLike = (0.0, 0.0, 0.0)
    texture: Texture | None = None

    def __post_init__(self):
        for name, shape in (("diffuse", (3,)), ("specular", (3,)), ("exponent", ()),
                            ("reflection", ()), ("ambient", (3,))):
            _as_float(self, name, getattr(self, name), shape)
        if self.texture is not None and not isinstance(self.texture, Texture):
            raise TypeError(
                f"Material.texture: expected a Texture or None, got {type(self.texture).__name__}"
            )


def _material(obj):
    if obj.material is None:
        object.__setattr__(obj, "material", Material())
    elif not isinstance(obj.material, Material):
        raise TypeError(
            f"{type(obj).__name__}.material: expected a Material, got {type(obj.material).__name__}"
        )


@dataclass(frozen=True)
class Sphere:
    """A sphere ``|x - center| = radius``.

    Example:
        >>> Sphere(center=(0.0, 0.0, 3.0), radius=1.0).radius
        array(1.)
    """

    center: ArrayLike
    radius: ArrayLike
    material: Material | None = None

    def __post_init__(self):
        _as_float(self, "center", self.center, (3,))
        _as_float(self, "radius", self.radius, ())
        _material(self)


@dataclass(frozen=True)
class Plane:
    """An infinite plane through ``point`` with normal ``normal`` (any length; two-sided).

    A textured plane's coordinates at x are u = (x − point)·u_axis, v = (x − point)·v_axis
    (so the texture repeats every 1/|u_axis| along u_axis).

    Example:
        >>> Plane(point=(0.0, -1.0, 0.0), normal=(0.0, 1.0, 0.0)).normal
        array([0., 1., 0.])
    """

    point: ArrayLike
    normal: ArrayLike
    material: Material | None = None
    u_axis: ArrayLike = (1.0, 0.0, 0.0)
    v_axis: ArrayLike = (0.0, 0.0, 1.0)

    def __post_init__(self):
        for name in ("point", "normal", "u_axis", "v_axis"):
            _as_float(self, name, getattr(self, name), (3,), like=self.point)
        _material(self)


@dataclass(frozen=True)
class Triangle:
    """A triangle with vertices ``v0, v1, v2`` (two-sided, flat-shaded).

    ``uv`` (3, 2) holds the vertices' texture coordinates, interpolated barycentrically.

    Example:
        >>> Triangle((-1.7, 1.0, 0.0), (1.0, 1.0, 0.0), (-0.5, -1.0, 0.0)).v2
        array([-0.5, -1. ,  0. ])
    """

    v0: ArrayLike
    v1: ArrayLike
    v2: ArrayLike
    material: Material | None = None
    uv: ArrayLike = ((0.0, 0.0), (1.0, 0.0), (0.0, 1.0))

    def __post_init__(self):
        for name in ("v0", "v1", "v2"):
            _as_float(self, name, getattr(self, name), (3,))
        _as_float(self, "uv", self.uv, (3, 2), like=self.v0)
        _material(self)


@dataclass(frozen=True)
class Mesh:
    """A triangle mesh: ``vertices`` (V, 3) floats, ``faces`` (F, 3) integer vertex indices.

    ``uv`` (V, 2) holds per-vertex texture coordinates (needed only with a textured material).

    The vertices are differentiable. The faces are a static field (a read-only int64 array,
    compared by value), so ``ds.grad`` with respect to a whole Scene holding a mesh works: diffsci
    refuses integer leaves among the arguments it differentiates. :func:`raytrace.load_obj`
    reads a mesh from a Wavefront OBJ file.

    Example:
        >>> m = Mesh(np.eye(3), np.array([[0, 1, 2]]))
        >>> m.faces
        array([[0, 1, 2]])
    """

    vertices: ArrayLike
    faces: ArrayLike = field(metadata={"static": True})
    material: Material | None = None
    uv: ArrayLike | None = None

    def __post_init__(self):
        v = to_float_array("Mesh.vertices", self.vertices)
        object.__setattr__(self, "vertices", v)
        shape = tuple(getattr(v, "shape", ()))
        if len(shape) != 2 or shape[1] != 3:
            raise ValueError(f"Mesh.vertices: expected shape (V, 3), got {shape}")
        f = np.asarray(self.faces)
        if f.size == 0:
            f = f.reshape(0, 3).astype(np.int64)
        if f.dtype.kind not in "iu" or f.ndim != 2 or f.shape[1] != 3:
            raise ValueError(
                f"Mesh.faces: expected an integer array of shape (F, 3), got dtype {f.dtype} "
                f"shape {f.shape}"
            )
        f = np.array(f, dtype=np.int64, order="C")
        f.flags.writeable = False
        object.__setattr__(self, "faces", f)
        if self.uv is not None:
            _as_float(self, "uv", self.uv, (shape[0], 2))
        _material(self)


@dataclass(frozen=True)
class PointLight:
    """A point light; irradiance ``intensity · color / (4π d²)`` at distance d.

    Example:
        >>> PointLight(position=(5.0, 5.0, -10.0), intensity=20000.0).color
        array([1., 1., 1.])
    """

    position: ArrayLike
    intensity: ArrayLike = 1.0
    color: ArrayLike = (1.0, 1.0, 1.0)

    def __post_init__(self):
        _as_float(self, "position", self.position, (3,))
        _as_float(self, "intensity", self.intensity, ())
        _as_float(self, "color", self.color, (3,))


@dataclass(frozen=True)
class DirectionalLight:
    """A light at infinity shining along ``direction``; irradiance ``intensity · color``.

    Example:
        >>> DirectionalLight(direction=(0.0, -1.0, 1.0)).intensity
        array(1.)
    """

    direction: ArrayLike
    intensity: ArrayLike = 1.0
    color: ArrayLike = (1.0, 1.0, 1.0)

    def __post_init__(self):
        _as_float(self, "direction", self.direction, (3,))
        _as_float(self, "intensity", self.intensity, ())
        _as_float(self, "color", self.color, (3,))


@dataclass(frozen=True)
class Camera:
    """A pinhole camera.

    Args:
        eye: the centre of projection, shape (3,).
        look_at: the point the camera looks at, shape (3,).
        up: the approximate up direction (must not be parallel to ``look_at - eye``).
        fov: the vertical field of view in degrees, in (0, 180).
        width, height: the image size in pixels (static, not differentiated).

    The image's right direction is ``forward × up`` (right-handed world coordinates).

    Example:
        >>> Camera(eye=(0.0, 0.0, -5.0), look_at=(0.0, 0.0, 0.0), width=8, height=6).fov
        array(45.)
    """

    eye: ArrayLike
    look_at: ArrayLike = (0.0, 0.0, 0.0)
    up: ArrayLike = (0.0, 1.0, 0.0)
    fov: ArrayLike = 45.0
    width: int = field(default=64, metadata={"static": True})
    height: int = field(default=64, metadata={"static": True})

    def __post_init__(self):
        for name, shape in (("eye", (3,)), ("look_at", (3,)), ("up", (3,)), ("fov", ())):
            _as_float(self, name, getattr(self, name), shape)
        for name in ("width", "height"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Camera.{name}: expected a positive int, got {value!r}")


Shape = Sphere | Plane | Triangle | Mesh
Light = PointLight | DirectionalLight
_SHAPES = (Sphere, Plane, Triangle, Mesh)
_LIGHTS = (PointLight, DirectionalLight)
#: What ``Scene.shapes`` holds.
Shape: TypeAlias = Sphere | Plane | Triangle | Mesh
#: What ``Scene.lights`` holds.
Light: TypeAlias = PointLight | DirectionalLight


@dataclass(frozen=True)
class Scene:
    """Everything :func:`raytrace.render` needs: a camera, shapes, lights and a background colour.

    Example:
        >>> scene = Scene(Camera(eye=(0.0, 0.0, -5.0)), (Sphere((0.0, 0.0, 0.0), 1.0),),
        ...               (PointLight((5.0, 5.0, -10.0), 2000.0),))
        >>> len(scene.shapes), len(scene.lights)
        (1, 1)
    """

    camera: Camera
    shapes: Sequence[Shape] = ()
    lights: Sequence[Light] = ()
    background: ArrayLike = (0.0, 0.0, 0.0)

    def __post_init__(self):
        if not isinstance(self.camera, Camera):
            raise TypeError(f"Scene.camera: expected a Camera, got {type(self.camera).__name__}")
        for name, kinds in (("shapes", _SHAPES + _LIGHTS), ("lights", _LIGHTS + _SHAPES)):
            value = getattr(self, name)
            if isinstance(value, kinds) or not isinstance(value, (tuple, list)):
                raise TypeError(
                    f"Scene.{name}: expected a tuple (or list) of {name}, got "
                    f"{'a single ' if isinstance(value, kinds) else ''}{type(value).__name__}; "
                    f"write Scene(camera, (shape, ...), (light, ...))")
            object.__setattr__(self, name, tuple(value))
        for k, s in enumerate(self.shapes):
            if not isinstance(s, _SHAPES):
                raise TypeError(
                    f"Scene.shapes[{k}]: expected Sphere, Plane, Triangle or Mesh, got "
                    f"{type(s).__name__}"
                )
        for k, light in enumerate(self.lights):
            if not isinstance(light, _LIGHTS):
                raise TypeError(
                    f"Scene.lights[{k}]: expected PointLight or DirectionalLight, got "
                    f"{type(light).__name__}"
                )
        _as_float(self, "background", self.background, (3,))
