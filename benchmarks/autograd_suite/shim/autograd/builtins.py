from . import dict, isinstance, list, tuple, type  # noqa: F401
