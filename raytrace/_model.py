"""The scene model: frozen dataclasses for shapes, materials, lights, the camera and the scene.

Every class is a final, frozen dataclass and a diffsci pytree (no registration needed): the gradient
of an image loss with respect to a :class:`Scene` is a ``Scene`` whose fields hold the cotangents.
Integer and layout fields (image size, mesh faces) are not differentiated.

``__post_init__`` converts lists and Python numbers to float64 arrays (float32 arrays stay float32)
and checks *shapes* only, so that traced values and gradients (which diffsci rebuilds without
calling ``__init__``) pass through. The value checks (finite numbers, positive radii, non-degenerate
triangles, a camera not looking along its up vector) happen once, in :func:`raytrace.render`, where
the scene is first rendered; see ``raytrace/_ops.py``.

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

from dataclasses import dataclass, field

import numpy as np

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


def _as_float(obj, name: str, value, shape: tuple[int, ...], like=None):
    """Plain numbers/lists become float64 arrays (or ``like``'s float dtype, for fields whose
    defaults must not promote a float32 shape); traced values are only shape-checked."""
    if isinstance(value, np.floating):
        value = np.asarray(value)
        object.__setattr__(obj, name, value)
    elif isinstance(value, (int, float, list, tuple, np.number)) or (
        isinstance(value, np.ndarray) and value.dtype.kind not in "f"
    ):
        float_like = isinstance(like, np.ndarray) and like.dtype.kind == "f"
        dtype = like.dtype if float_like else np.float64
        value = np.asarray(value, dtype=dtype)
        object.__setattr__(obj, name, value)
    got = tuple(getattr(value, "shape", ()))
    want = tuple(shape)
    if got != want:
        raise ValueError(
            f"{type(obj).__name__}.{name}: expected shape {want}, got {got}"
        )


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

    image: object

    def __post_init__(self):
        img = self.image
        if isinstance(img, (list, tuple)) or (isinstance(img, np.ndarray)
                                              and img.dtype.kind != "f"):
            img = np.asarray(img, dtype=np.float64)
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

    diffuse: object = (0.8, 0.8, 0.8)
    specular: object = (0.0, 0.0, 0.0)
    exponent: object = 50.0
    reflection: object = 0.0
    ambient: object = (0.0, 0.0, 0.0)
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

    center: object
    radius: object
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

    point: object
    normal: object
    material: Material | None = None
    u_axis: object = (1.0, 0.0, 0.0)
    v_axis: object = (0.0, 0.0, 1.0)

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

    v0: object
    v1: object
    v2: object
    material: Material | None = None
    uv: object = ((0.0, 0.0), (1.0, 0.0), (0.0, 1.0))

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

    vertices: object
    faces: object = field(metadata={"static": True})
    material: Material | None = None
    uv: object = None

    def __post_init__(self):
        v = self.vertices
        if isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.dtype.kind != "f"):
            v = np.asarray(v, dtype=np.float64)
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

    position: object
    intensity: object = 1.0
    color: object = (1.0, 1.0, 1.0)

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

    direction: object
    intensity: object = 1.0
    color: object = (1.0, 1.0, 1.0)

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

    eye: object
    look_at: object = (0.0, 0.0, 0.0)
    up: object = (0.0, 1.0, 0.0)
    fov: object = 45.0
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
    shapes: tuple = ()
    lights: tuple = ()
    background: object = (0.0, 0.0, 0.0)

    def __post_init__(self):
        if not isinstance(self.camera, Camera):
            raise TypeError(f"Scene.camera: expected a Camera, got {type(self.camera).__name__}")
        object.__setattr__(self, "shapes", tuple(self.shapes))
        object.__setattr__(self, "lights", tuple(self.lights))
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
