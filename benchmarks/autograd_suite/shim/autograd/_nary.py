"""autograd's calling convention for differential operators: ``op(fun, argnum)(*args)``."""


def nary(unary, fun, argnum, *op_args, **op_kwargs):
    def f(*args, **kwargs):
        if isinstance(argnum, int):
            def unary_f(x):
                a = list(args)
                a[argnum] = x
                return fun(*a, **kwargs)
            x = args[argnum]
        else:
            def unary_f(x):
                a = list(args)
                for i, xi in zip(argnum, x):
                    a[i] = xi
                return fun(*a, **kwargs)
            x = tuple(args[i] for i in argnum)
        return unary(unary_f, x, *op_args, **op_kwargs)
    name, op = getattr(fun, "__name__", "f"), getattr(unary, "__name__", "op")
    f.__name__ = f"{op}_of_{name}_wrt_argnum_{argnum}"  # autograd's naming of derived functions
    f.__doc__ = f"    {op} of function {name} with respect to argument number {argnum}."
    return f


def _op(unary):
    def operator(fun, argnum=0, *op_args, **op_kwargs):
        return nary(unary, fun, argnum, *op_args, **op_kwargs)
    operator.__name__ = unary.__name__
    operator.__doc__ = unary.__doc__
    return operator


nary.op = _op
