from diffsci.scipy.stats import *  # noqa: F403
