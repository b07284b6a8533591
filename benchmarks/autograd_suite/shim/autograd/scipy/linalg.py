from diffsci.scipy.linalg import *  # noqa: F403
