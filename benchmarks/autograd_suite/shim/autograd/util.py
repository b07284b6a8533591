from .test_util import check_grads as _check_grads


def quick_grad_check(fun, arg0, extra_args=(), kwargs=None, verbose=True, eps=None, rtol=None,
                     atol=None, rs=None):
    """autograd's deprecated ``quick_grad_check``: check_grads of argument 0."""
    kwargs = kwargs or {}
    _check_grads(lambda x: fun(x, *extra_args, **kwargs), modes=["rev"], order=1)(arg0)
