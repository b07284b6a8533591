from . import make_vjp  # noqa: F401
from ._primitive import primitive  # noqa: F401
