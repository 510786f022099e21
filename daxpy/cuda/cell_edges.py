"""A cell kind's edges compiled into a kernel's source, as two constant arrays of their
ends' corners (``EDGE_A[e]``, ``EDGE_B[e]``): the clip's and the march's kernels of
unstructured cells (:mod:`daxpy.cuda.clip_block`, :mod:`daxpy.cuda.march_block`) look
up a cut edge's ends by them.

Examples
--------
>>> head, tail = edge_defines("k", ((0, 1), (1, 2)))
>>> head.splitlines()[0]
'__device__ const int k_A[] = {0, 1};'
"""

from __future__ import annotations


def edge_defines(name: str, edges) -> tuple[str, str]:
    """``(head, tail)``: the source that defines ``EDGE_A`` and ``EDGE_B`` for the
    kernels named ``name`` (arrays of that name: one per source), and the one that
    undefines the macros after them.

    Examples
    --------
    >>> edge_defines("k", ((2, 3),))[1]
    '#undef EDGE_A\\n#undef EDGE_B\\n'
    """
    edge_a = ", ".join(str(int(a)) for a, _ in edges)
    edge_b = ", ".join(str(int(b)) for _, b in edges)
    head = (f"__device__ const int {name}_A[] = {{{edge_a}}};\n"
            f"__device__ const int {name}_B[] = {{{edge_b}}};\n"
            f"#define EDGE_A {name}_A\n#define EDGE_B {name}_B\n")
    return head, "#undef EDGE_A\n#undef EDGE_B\n"
