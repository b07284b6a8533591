from diffsci.scipy.special import *  # noqa: F403
