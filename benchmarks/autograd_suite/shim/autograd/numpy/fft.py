from diffsci.fft import *  # noqa: F403
