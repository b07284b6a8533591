"""``autograd.scipy.*`` is ``diffsci.scipy.*``."""
