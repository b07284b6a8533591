"""``scipy.interpolate``, differentiable (placeholder until the interpolators land)."""

__all__: list = []
