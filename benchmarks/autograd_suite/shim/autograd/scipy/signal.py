from diffsci.scipy.signal import *  # noqa: F403
