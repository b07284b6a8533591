from diffsci.scipy.integrate import *  # noqa: F403
