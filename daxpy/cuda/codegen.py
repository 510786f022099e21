"""Assemble the CUDA source of one specialized kernel.

A kernel is named after its specialization (``point_to_cell__uniform3d__f32__c1``)
and that name is also its cache key. Its source is self-contained: the shared
topology header, the worklet family's ``.cuh`` template, and a short
``extern "C"`` kernel that builds the topology from scalar arguments and calls
the worklet once per work item. Nothing in the generated kernel branches on
grid type, cell shape or dtype: those are template arguments.

Examples
--------
>>> k = KernelSource(name="demo__f32", headers=(), params=[("float*", "out")],
...                  count="1", body="out[item] = 1.0f;")
>>> "extern \\"C\\" __global__" in k.source()
True
"""

from __future__ import annotations

import functools
import importlib.util
import re
from dataclasses import dataclass, field
from typing import Any, Callable
from pathlib import Path

import numpy as np

from ..errors import ArgumentError

TOPOLOGY_HEADER = "_topology.cuh"
BASE_HEADERS = (TOPOLOGY_HEADER, "_fields.cuh", "_march.cuh")
"""Headers every kernel includes first: topologies (with float's range limits,
:file:`_wide.cuh`), field access, marching."""
BLOCK_SIZE = 256
"""Threads per block of every generated kernel."""
PER_THREAD = {"flat": 1, "tuples": 1, "cells": 4, "points": 4}
"""Work items per thread by domain (more loads in flight; measured on H200)."""


_CTYPES = {
    "float32": "float", "float64": "double",
    "int8": "signed char", "int16": "short", "int32": "int", "int64": "long long",
    "uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int",
    "uint64": "unsigned long long",
}
_TAGS = {
    "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16", "int32": "i32",
    "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
}
INT32_MAX = 2**31 - 1


def _header_dir() -> Path:
    # The .cuh templates sit beside the worklet modules (editable installs map
    # daxpy.worklets to the top-level worklets/ folder). Locate the folder, do
    # not import the package: worklets sit above cuda and import it.
    spec = importlib.util.find_spec("daxpy.worklets")
    return Path(spec.origin).resolve().parent


def ctype(dtype) -> str:
    """C++ type of a NumPy dtype.

    Raises
    ------
    ArgumentError
        For dtypes the CUDA backend does not handle (complex, bool, float16...).

    Examples
    --------
    >>> ctype("float32")
    'float'
    """
    name = np.dtype(dtype).name
    if name not in _CTYPES:
        raise ArgumentError(
            f"the CUDA backend handles {sorted(_CTYPES)}, got dtype {name!r}"
        )
    return _CTYPES[name]


def dtype_tag(dtype) -> str:
    """Short dtype name used in kernel names (``f32``, ``i64``...).

    Examples
    --------
    >>> dtype_tag("float64")
    'f64'
    """
    ctype(dtype)
    return _TAGS[np.dtype(dtype).name]


def index_ctype(n_elements: int) -> str:
    """Index type that can address ``n_elements``: 32-bit unless that overflows.

    Examples
    --------
    >>> index_ctype(10), index_ctype(2**31)
    ('int', 'long long')
    """
    # Headroom: the last block's items may run past the count before the bound check.
    return "int" if n_elements <= INT32_MAX - (1 << 20) else "long long"


def kernel_name(*parts) -> str:
    """Join specialization parts into a kernel name (``None`` parts dropped).

    Examples
    --------
    >>> kernel_name("point_to_cell", "uniform3d", "f32", None, "c1")
    'point_to_cell__uniform3d__f32__c1'
    """
    return "__".join(str(p) for p in parts if p is not None and p != "")


_INCLUDE = re.compile(r'^#include "([^"/]+\.cuh)"$', re.MULTILINE)


@functools.lru_cache(maxsize=None)
def read_header(name: str) -> str:
    """Text of one ``.cuh`` template from ``daxpy.worklets``, self-contained.

    A template splits its code over smaller ones with ``#include "x.cuh"``
    lines; each is replaced by that template's text, the first time it comes
    (NVRTC gets a single source and no include path; include guards keep a
    template that two headers of one kernel include from compiling twice).

    Examples
    --------
    >>> text = read_header("_topology.cuh")
    >>> "struct UniformGrid" in text and "#include" not in text
    True
    """
    return _expanded(name, set())


def _expanded(name: str, seen: set) -> str:
    seen.add(name)
    path = _header_dir() / name
    if not path.is_file():
        raise ArgumentError(f"CUDA template {name!r} not found in {path.parent}")
    return _INCLUDE.sub(lambda m: "" if m.group(1) in seen else _expanded(m.group(1), seen),
                        path.read_text())


@dataclass
class KernelSource:
    """One specialized kernel: its name, arguments and per-item body.

    Attributes
    ----------
    name : str
        Specialization name, used as the ``extern "C"`` symbol and cache key.
    headers : tuple of str
        Worklet ``.cuh`` files to include after the topology header.
    params : list of (str, str)
        C++ type and name of each kernel argument, in launch order.
    count : str
        C++ expression for the number of work items.
    body : str
        Statement(s) run for each ``item`` below ``count``.
    setup : list of str
        Statements before the per-item code (e.g. building the topology).
    index : str
        C++ type of ``item`` (``int`` or ``long long``).
    per_thread : int
        Work items per thread, a block's width apart (coalesced): more
        independent loads in flight per thread.
    preamble : list of str
        Generated C++ definitions the kernel uses, emitted just before it.
    whole : bool
        The body runs once per thread and does its own indexing (marching
        kernels, launched over a 2-D block and a 3-D grid); ``count`` and
        ``per_thread`` are then unused.
    """

    name: str
    headers: tuple
    params: list
    count: str
    body: str
    setup: list = field(default_factory=list)
    index: str = "int"
    per_thread: int = 1
    preamble: list = field(default_factory=list)
    whole: bool = False

    def kernel(self) -> str:
        """The generated ``extern "C"`` kernel alone (without the headers).

        Examples
        --------
        >>> KernelSource("k", (), [("int*", "o")], "1", "o[item] = 0;").kernel().splitlines()[0]
        'extern "C" __global__ void __launch_bounds__(256) k('
        """
        args = ",\n    ".join(f"{t} {n}" for t, n in self.params)
        setup = "".join(f"  {line}\n" for line in self.setup)
        span = BLOCK_SIZE * self.per_thread
        first = f"static_cast<{self.index}>(blockIdx.x) * {span} + threadIdx.x"
        if self.whole:
            loop = f"  {self.body}\n"
        elif self.per_thread == 1:
            loop = (f"  const {self.index} item = {first};\n"
                    f"  if (item >= {self.count}) return;\n"
                    f"  {self.body}\n")
        else:
            loop = (f"  const {self.index} first = {first}, count = {self.count};\n"
                    f"#pragma unroll\n"
                    f"  for (int u = 0; u < {self.per_thread}; ++u) {{\n"
                    f"    const {self.index} item = first + u * {BLOCK_SIZE};\n"
                    f"    if (item < count) {{\n"
                    f"      {self.body}\n"
                    f"    }}\n"
                    f"  }}\n")
        return (
            "".join(self.preamble)
            + f'extern "C" __global__ void __launch_bounds__({BLOCK_SIZE}) {self.name}(\n'
            f"    {args}) {{\n"
            f"{setup}"
            f"{loop}"
            f"}}\n"
        )

    def __getstate__(self) -> dict:
        # The compiled kernel remembered by daxpy.cuda.compile.kernel_of stays
        # in this process.
        return {k: v for k, v in self.__dict__.items() if k != "_compiled"}

    def blocks(self, n_items: int) -> int:
        """Thread blocks that cover ``n_items`` work items.

        Examples
        --------
        >>> KernelSource("k", (), [], "n", "", per_thread=4).blocks(1025)
        2
        """
        span = BLOCK_SIZE * self.per_thread
        return (n_items + span - 1) // span

    def source(self) -> str:
        """Complete, self-contained CUDA source of this kernel.

        Examples
        --------
        >>> src = KernelSource("k", (), [("int*", "o")], "1", "o[item] = 0;").source()
        >>> src.startswith("// daxpy generated kernel k")
        True
        """
        parts = [f"// daxpy generated kernel {self.name}\n"]
        parts += [read_header(h) for h in BASE_HEADERS]
        parts += [read_header(h) for h in self.headers]
        parts.append(self.kernel())
        return "\n".join(parts)


@dataclass
class Launch:
    """One kernel launch of a plan.

    Attributes
    ----------
    kernel : KernelSource
        The specialized kernel.
    n_items : int
        Work items (threads) to launch.
    values : callable
        ``values(in_array, out_array) -> list`` of launch arguments.
    grid, block : tuple, optional
        Launch dimensions of a kernel that does its own indexing.
    after : tuple of (KernelSource, int)
        Kernels launched after ``kernel``, in turn, with the same arguments,
        each over its count of work items (a variant in several kernels that
        share scratch arrays among its arguments).
    """

    kernel: KernelSource
    n_items: int
    values: Callable[[Any, Any], list]
    grid: tuple | None = None
    block: tuple | None = None
    after: tuple = ()

    def dims(self) -> tuple[tuple, tuple]:
        """(grid, block) launch dimensions.

        Examples
        --------
        >>> Launch(KernelSource("k", (), [], "n", ""), 300, list).dims()
        ((2,), (256,))
        """
        if self.grid is not None:
            return self.grid, self.block
        return (self.kernel.blocks(self.n_items),), (BLOCK_SIZE,)

    def sequence(self) -> list[tuple[KernelSource, tuple, tuple]]:
        """(kernel, grid, block) of each kernel of this launch, in order.

        Examples
        --------
        >>> k, rest = KernelSource("k", (), [], "n", ""), KernelSource("r", (), [], "n", "")
        >>> [(s.name, g) for s, g, _ in Launch(k, 300, list, after=((rest, 9),)).sequence()]
        [('k', (2,)), ('r', (1,))]
        """
        return [(self.kernel, *self.dims())] + [(k, (k.blocks(n),), (BLOCK_SIZE,))
                                                 for k, n in self.after]

    def source(self) -> str:
        """The CUDA source of every kernel of this launch.

        Examples
        --------
        >>> Launch(KernelSource("k", (), [], "n", ""), 1, list).source().count("// daxpy generated")
        1
        """
        return "\n".join(kernel.source() for kernel, _, _ in self.sequence())


@dataclass
class Plan:
    """Everything one worklet call needs: output layout and kernel launches."""

    out_dtype: np.dtype
    out_shape: tuple
    launches: list
    zero_fill: bool = False


def io_params(in_ct: str, out_ct: str) -> list:
    """The ``in`` and ``out`` array arguments of a kernel.

    Examples
    --------
    >>> io_params("float", "double")[1]
    ('double* __restrict__', 'out')
    """
    return [(f"const {in_ct}* __restrict__", "in"), (f"{out_ct}* __restrict__", "out")]
