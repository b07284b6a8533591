from numpy.random import *  # noqa: F403
