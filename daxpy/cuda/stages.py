"""How a kernel reads its input and writes its output, and elementwise map
stages: the pieces that plain, marching and fused kernels share.

A kernel reads through ``src`` and writes through ``dst`` (:file:`_fields.cuh`):
plain arrays, or arrays wrapped in map stages, one per elementwise worklet
(its CUDA spec's ``map`` struct), so that maps run inside the kernel that
loads or stores the field. A chain of maps alone runs V tuples per thread
(``dax::map_chain``); a lone map is such a chain of one.

Examples
--------
>>> f32 = np.dtype("float32")
>>> plain_io(f32, 3, f32, 1, True).sink
'dax::ArraySink<float, 1>'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ArgumentError
from ..data.worklet import get_worklet
from .codegen import PER_THREAD, KernelSource, Launch, ctype, dtype_tag, io_params
from .spec import spec_of


@dataclass
class Step:
    """One worklet call of a chain: the worklet's name and static parameters.

    Examples
    --------
    >>> Step("bias_add", {"bias": [1.0]}).name
    'bias_add'
    """

    name: str
    params: dict = field(default_factory=dict)


def option_values(options) -> list:
    """Launch values of a KernelOptions (callables are called now).

    Examples
    --------
    >>> from daxpy.cuda.spec import KernelOptions
    >>> option_values(KernelOptions(values=[1, lambda: 2]))
    [1, 2]
    """
    return [v() if callable(v) else v for v in options.values]


@dataclass
class IO:
    """How a kernel reads its input and writes its output: the arrays, and
    the C++ types of ``src`` and ``dst`` (:file:`_fields.cuh`), plain or
    wrapped in map stages (fusion).

    Attributes
    ----------
    in_dtype, out_dtype : numpy.dtype
        The ``in`` and ``out`` arrays (of the first and last stage).
    in_c, out_c : int
        Their components.
    source, sink : str
        C++ types of ``src`` and ``dst``.
    source_init, sink_init : tuple of str
        Initializers of the map stages around ``in`` / ``out``, in chain order.
    options : tuple of KernelOptions
        Extra kernel arguments, preambles and headers of the map stages.
    core_c : int, optional
        Components the kernel's worklet sees after the maps on load
        (default ``in_c``); they, not the array's, fill its registers.
    """

    in_dtype: np.dtype
    in_c: int
    out_dtype: np.dtype
    out_c: int
    source: str
    sink: str
    source_init: tuple = ()
    sink_init: tuple = ()
    options: tuple = ()
    core_c: int | None = None

    def setup(self) -> list[str]:
        """Statements building ``src`` and ``dst``.

        Examples
        --------
        >>> f32 = np.dtype("float32")
        >>> plain_io(f32, 1, f32, 3, True).setup()[0]
        'const dax::ArraySource<float, 1, true> src{in};'
        """
        return [f"const {self.source} src{_nest('in', self.source_init, outer=True)};",
                f"const {self.sink} dst{_nest('out', self.sink_init, outer=False)};"]


def plain_io(in_dtype, in_c: int, out_dtype, out_c: int, aligned: bool) -> IO:
    """Array in, array out.

    Examples
    --------
    >>> plain_io(np.dtype("float64"), 3, np.dtype("float64"), 9, False).sink
    'dax::ArraySink<double, 9>'
    """
    return IO(np.dtype(in_dtype), in_c, np.dtype(out_dtype), out_c,
              f"dax::ArraySource<{ctype(in_dtype)}, {in_c}, {str(aligned).lower()}>",
              f"dax::ArraySink<{ctype(out_dtype)}, {out_c}>")


def _nest(array: str, inits: tuple, outer: bool) -> str:
    """Aggregate initializer of nested map stages around ``array``.

    A source nests its first stage innermost, ``{{{in}, m0}, m1}``; a sink
    outermost, ``{m0, {m1, {out}}}``.

    Examples
    --------
    >>> _nest("in", ("{a}", "{b}"), outer=True), _nest("out", ("{a}", "{b}"), outer=False)
    ('{{{in}, {a}}, {b}}', '{{a}, {{b}, {out}}}')
    """
    text = f"{{{array}}}"
    for init in (inits if outer else reversed(inits)):
        text = f"{{{text}, {init}}}" if outer else f"{{{init}, {text}}}"
    return text


@dataclass
class MapStage:
    """One map of a fused kernel: its C++ type, initializer and arguments."""

    ctype: str
    init: str
    options: object
    out_dtype: np.dtype
    out_tail: tuple
    part: str


def map_stage(step: Step, in_dtype: np.dtype, tail: tuple, n_tuples: int,
              prefix: str = "") -> MapStage:
    """The map stage of elementwise worklet call ``step`` on tuples of ``in_dtype``
    and ``tail`` (``n_tuples`` of them); its kernel arguments start with ``prefix``.

    Examples
    --------
    >>> map_stage(Step("magnitude"), np.dtype("float32"), (3,), 10).ctype
    'dax::MagnitudeMap<3, float, float>'
    """
    worklet = get_worklet(step.name)
    spec = spec_of(worklet)
    if spec.map is None:
        raise ArgumentError(f"worklet {step.name!r} is not an elementwise map; a fused chain "
                            "holds maps around at most one topological worklet")
    spec.check_params(step.name, step.params)
    out_dtype, out_tail = spec.output(in_dtype, tail, step.params)
    c = math.prod(tail) or 1
    options = spec.options(step.params, in_dtype, out_dtype, c, n_tuples * c, prefix)
    options.headers = (spec.header,)
    targs = "".join(f", {a}" for a in options.template_args + options.member_types)
    part = "_".join([step.name, *options.tags]
                    + ([dtype_tag(out_dtype)] if out_dtype != in_dtype else []))
    return MapStage(f"dax::{spec.map}<{c}, {ctype(in_dtype)}, {ctype(out_dtype)}{targs}>",
                    "{" + ", ".join(options.members) + "}", options, np.dtype(out_dtype),
                    tuple(out_tail), part)


def map_stages(steps, in_dtype, tail, n_tuples, first: int = 0):
    """Map stages of ``steps`` in order (arguments ``m<first>_...``), and the
    dtype and tail they end with.

    Examples
    --------
    >>> stages, dtype, tail = map_stages([Step("magnitude")], np.dtype("float64"), (3,), 5)
    >>> dtype, tail
    (dtype('float64'), ())
    """
    stages = []
    for i, step in enumerate(steps):
        stage = map_stage(step, in_dtype, tail, n_tuples, f"m{first + i}_")
        stages.append(stage)
        in_dtype, tail = stage.out_dtype, stage.out_tail
    return stages, np.dtype(in_dtype), tuple(tail)


def chain_io(pre, post, in_dtype, in_c, out_dtype, out_c, aligned) -> IO:
    """IO with map stages ``pre`` on load and ``post`` on store.

    Examples
    --------
    >>> f32 = np.dtype("float32")
    >>> chain_io([], [], f32, 1, f32, 1, False).source
    'dax::ArraySource<float, 1, false>'
    """
    source = f"dax::ArraySource<{ctype(in_dtype)}, {in_c}, {str(aligned).lower()}>"
    for stage in pre:
        source = f"dax::MapSource<{source}, {stage.ctype}>"
    sink = f"dax::ArraySink<{ctype(out_dtype)}, {out_c}>"
    for stage in reversed(post):
        sink = f"dax::MapSink<{stage.ctype}, {sink}>"
    core_c = (math.prod(pre[-1].out_tail) or 1) if pre else in_c
    return IO(np.dtype(in_dtype), in_c, np.dtype(out_dtype), out_c, source, sink,
              tuple(s.init for s in pre), tuple(s.init for s in post),
              tuple(s.options for s in pre + post), core_c)


def map_chain_launch(stages, in_dtype, in_c: int, n: int, aligned: bool, index: str,
                     parts: tuple) -> Launch:
    """The kernel of a chain of map stages alone: V tuples per work item
    (V * components <= 12 values a side, so magnitude of a 3-component float32
    field reads 4 tuples as three 16-byte words), the n % V left one each.

    Examples
    --------
    >>> stages, _, _ = map_stages([Step("magnitude")], np.dtype("float32"), (3,), 10)
    >>> map_chain_launch(stages, np.dtype("float32"), 3, 10, True, "int",
    ...                  ("magnitude", "f32", "c3")).kernel.name
    'magnitude__f32__c3__v4'
    """
    from .codegen import kernel_name

    last = stages[-1]
    out_c = math.prod(last.out_tail) or 1
    io = chain_io([], stages, in_dtype, in_c, last.out_dtype, out_c, aligned)
    v = next((w for w in (4, 2) if w * max(in_c, out_c) <= 12), 1) if aligned else 1
    idt = np.int32 if index == "int" else np.int64
    n_groups, left = divmod(n, v)
    kernel = KernelSource(
        kernel_name(*parts, f"v{v}" if v > 1 else None, "i64" if index != "int" else None),
        tuple(dict.fromkeys(h for o in io.options for h in o.headers)),
        io_params(ctype(in_dtype), ctype(last.out_dtype))
        + [(f"const {index}", "n_groups"), (f"const {index}", "n_items")]
        + [p for o in io.options for p in o.params],
        "n_items", f"dax::map_chain<{v}>(item, n_groups, src, dst);", setup=io.setup(),
        index=index, per_thread=PER_THREAD["tuples"],
        preamble=[line for o in io.options for line in o.preamble])

    def values(i, o):
        return [i, o, idt(n_groups), idt(n_groups + left)] + [
            x for opt in io.options for x in option_values(opt)]

    return Launch(kernel, n_groups + left, values)
