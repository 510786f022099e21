"""Blocks taken by whichever thread is free: one atomic counter that the threads
of a compiled kernel share (:func:`claim`), so that a kernel is called once per
thread from Python and balances its blocks itself.

Dealing blocks from Python (:func:`~daxpy.worklets._blocks_cpu.over_blocks`)
costs each range a call under the GIL, one thread after another: on the GPU
machine's 16 cores about 17 us a range, some milliseconds for the hundreds of
ranges of a kernel whose work is a few. With a shared counter each thread is
called once, and the threads that start first (about 45 us apart, each waiting
for the GIL to enter its kernel) take more blocks: a 256³ contour's points and
field took 3.9-5.2 ms on 16 cores against 6.1-6.6 dealt in ranges into fresh arrays
(`.dc/s/cc16.py`, in turns). The contour's own passes keep their blocks dealt by
thread number: taken from a counter, its count pass took 5.3-5.8 ms against 4.4-4.5.

Examples
--------
>>> import numba, numpy as np
>>> @numba.njit
... def first_two(taken):
...     return claim(taken), claim(taken)
>>> taken = np.zeros(1, np.int64)
>>> first_two(taken), taken.tolist()
((0, 1), [2])
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import intrinsic


@intrinsic
def claim(typingctx, taken):
    """``taken[0]`` before adding one to it, in one atomic step: the next block,
    taken once whatever the threads (``taken``: a 1-D int64 array, made zero for
    each pass).

    Examples
    --------
    >>> import numba, numpy as np
    >>> @numba.njit
    ... def next_block(taken):
    ...     return claim(taken)
    >>> next_block(np.array([5])), next_block(np.array([0]))
    (5, 0)
    """
    if not (isinstance(taken, types.Array) and taken.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        # "monotonic": each value is taken once; what the blocks write is seen by
        # the caller after the threads are joined, which orders memory anyway.
        return builder.atomic_rmw("add", array.data, context.get_constant(types.int64, 1),
                                  "monotonic")

    return types.int64(taken), codegen


def claim_counter() -> np.ndarray:
    """A zero for :func:`~daxpy.worklets._claim_cpu.claim`, alone on its cache line:
    every thread writes it once a block, and a line it shared with data that every
    thread reads (a small array NumPy put beside it) would leave those reads missing.

    Examples
    --------
    >>> claim_counter().tolist()
    [0]
    """
    # 128 bytes of zeros each side: a 64-byte line around it holds nothing else,
    # however the buffer is aligned.
    return np.zeros(33, np.int64)[16:17]
