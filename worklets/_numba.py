"""What the compiled CPU kernels share: loading them lazily, and their threads.

The kernels (``worklets/<family>_cpu.py``) are Numba functions compiled at
their first call and kept in Numba's disk cache (``cache=True``); importing
daxpy imports neither them nor Numba. A worklet declares them with
:func:`compiled`, which names the module and the function and gives the
NumPy implementation that serves where Numba is missing or the dtypes are
not ones the kernels are compiled for (float32 and float64).

Threads follow the cores (Numba's ``NUMBA_NUM_THREADS``, which is the most
a process can use); ``DAXPY_CPU_THREADS`` or :func:`set_threads` (public as
``daxpy.configure_cpu``) ask for fewer. Results do not depend on the count:
every kernel writes each output element from one thread and reduces in a
fixed order.

Examples
--------
>>> impl = compiled("magnitude_cpu", "magnitude", fallback=None)
>>> impl.__name__
'magnitude'
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Callable

import numpy as np

from daxpy.data.arrays import native_order
from daxpy.errors import ArgumentError

# (Imported with this module, before any kernel: it marks a forked child at the fork.)
from ._fork_safe_cpu import fork_safe
from ._kernel_cache import guard

def _plain_numba_errors() -> None:
    """Keep Numba from colouring its error messages, before daxpy first imports it.

    Numba's coloured messages wrap and unwrap ``sys.stdout`` through colorama
    (``init``, ``deinit``) around every message it formats, for the whole process,
    and it formats them as ordinary control flow while it types a function. A
    compile on another thread (the pool's builder) so put back a ``sys.stdout`` that
    the main thread had replaced since (doctest's or pytest's capture, a notebook's
    stream, ``contextlib.redirect_stdout``): cold, about one docstring run in two
    lost an example's output that way. Where Numba was imported first, with
    colours, its colour scheme is swapped for a plain one.

    Examples
    --------
    >>> _plain_numba_errors()
    >>> os.environ["NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"]
    '1'
    """
    os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")
    errors = sys.modules.get("numba.core.errors")
    if errors is None or not hasattr(errors, "ColorShell"):
        return

    class _Plain(errors._DummyColorScheme):
        def code(self, msg):
            return msg

        errmsg = filename = indicate = highlight = reset = code

    errors._termcolor_inst = _Plain()


_plain_numba_errors()

KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
"""Float dtypes the kernels are compiled for; others run the NumPy implementation."""

_THREADS: list[int | None] = [None]


class CompiledUnavailable(Exception):
    """Raised by a compiled implementation that cannot serve the arrays it got:
    the caller runs the NumPy implementation instead."""


def set_threads(threads: int | None) -> None:
    """Ask the compiled kernels to use ``threads`` threads (None: the default).

    Raises
    ------
    ArgumentError
        If ``threads`` is not a positive integer or None.

    Examples
    --------
    >>> set_threads(1); threads() >= 1
    True
    >>> set_threads(None)
    """
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):
        raise ArgumentError(f"threads must be a positive integer or None, got {threads!r}")
    _THREADS[0] = threads


def threads() -> int:
    """Threads the next kernel runs on: the setting, else ``DAXPY_CPU_THREADS``, else
    every thread Numba has (``NUMBA_NUM_THREADS``, the cores by default), capped by it.

    Raises
    ------
    ArgumentError
        If ``DAXPY_CPU_THREADS`` is set to something other than a positive integer.

    Examples
    --------
    >>> threads() >= 1
    True
    """
    from numba import config

    wanted = _THREADS[0]
    if wanted is None:
        text = os.environ.get("DAXPY_CPU_THREADS", "").strip()
        if text:
            if not text.isdigit() or int(text) < 1:
                raise ArgumentError(
                    f"DAXPY_CPU_THREADS must be a positive integer, got {text!r}")
            wanted = int(text)
    available = config.NUMBA_NUM_THREADS
    return available if wanted is None else min(wanted, available)


def count_type(count: int) -> tuple:
    """A tuple of ``count`` items, passed to a kernel so that ``len()`` of it is a
    number Numba knows when it compiles (a tuple's length is part of its type):
    each count gets its own specialization, its loops over the count unrolled,
    where a count read from an array's shape leaves them generic.

    Examples
    --------
    >>> count_type(3)
    (0, 0, 0)
    """
    return (0,) * count


def kernel_dtype(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arrays in native byte order (Numba reads only that), after checking
    each is float32 or float64: :class:`CompiledUnavailable` otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> kernel_dtype(np.zeros(2, ">f4"))[0].dtype.isnative
    True
    """
    native = tuple(native_order(np.asarray(array)) for array in arrays)
    for array in native:
        if array.dtype not in KERNEL_DTYPES:
            raise CompiledUnavailable(f"no kernel for {array.dtype}")
    return native


class compiled:  # noqa: N801  (used as a declaration, like a function)
    """A compiled implementation, imported from ``daxpy.worklets.<module>`` at its
    first call.

    Parameters
    ----------
    module : str
        Module under ``daxpy.worklets`` that holds the implementation.
    name : str
        The implementation in it: ``impl(grid, values, **params)``.
    fallback : callable or None
        The NumPy implementation, run where Numba does not import or the
        implementation raises :class:`CompiledUnavailable`.

    Examples
    --------
    >>> compiled("gradient_cpu", "unstructured_cell_gradient", None).__name__
    'unstructured_cell_gradient'
    """

    def __init__(self, module: str, name: str, fallback: Callable[..., Any] | None):
        self.module, self.__name__, self.fallback = module, name, fallback
        self._impl: Callable[..., Any] | None = None

    def load(self) -> Callable[..., Any] | None:
        """The implementation (importing Numba and its module), or None without Numba.

        Examples
        --------
        >>> callable(compiled("magnitude_cpu", "magnitude", None).load())
        True
        """
        if self._impl is None:
            try:
                module = importlib.import_module(f"daxpy.worklets.{self.module}")
            except ImportError as err:
                if getattr(err, "name", None) != "numba":
                    raise
                return None
            self._impl = getattr(module, self.__name__)
        return self._impl

    def __call__(self, grid, values, **params):
        impl = self.load()
        if impl is not None:
            import numba

            numba.set_num_threads(threads())
            try:
                return impl(grid, values, **params)
            except CompiledUnavailable:
                pass
        return self.fallback(grid, values, **params)


def columns(array: np.ndarray) -> np.ndarray:
    """``array`` as a C-contiguous ``(n, c)`` table (a view where it already is one),
    after checking it is float32 or float64: one kernel serves 1-D fields and tuples.

    Examples
    --------
    >>> import numpy as np
    >>> columns(np.zeros(3, np.float32)).shape
    (3, 1)
    """
    array, = kernel_dtype(array)
    return np.ascontiguousarray(
        array.reshape(array.shape[0], array.shape[1] if array.ndim == 2 else 1))


def refuse_bad_ids(bad: int) -> None:
    """Raise IndexError if a kernel met ``bad`` cells with a point id out of range.

    The grid checked its ids when it was built; one out of range now was
    written into the caller's arrays since, where the grid's fingerprint does
    not look. The kernels skip such cells instead of reading out of bounds,
    and the dispatcher turns this error into the grid's own diagnosis.

    Examples
    --------
    >>> refuse_bad_ids(0)
    """
    if bad:
        raise IndexError(f"{bad} cell(s) hold a point id out of range")


def kernel(**options):
    """``numba.njit`` with the options every CPU kernel shares.

    IEEE division (``error_model="numpy"``: 0 / 0 is NaN, as in NumPy, not an
    exception) and Numba's disk cache, kept fresh when any source of the package
    changes (:mod:`~daxpy.worklets._kernel_cache`). The cache is used only when the kernels
    are imported as ``daxpy.worklets``: its entries name their module, and
    entries written under another name (a doctest run on the ``worklets/``
    folder imports it as ``worklets``) would fail to load under this one. A
    parallel kernel comes back as :class:`~daxpy.worklets._fork_safe_cpu.fork_safe`.

    Examples
    --------
    >>> callable(kernel(parallel=True))
    True
    """
    from numba import njit

    _short_openmp_spin()
    cache = __name__.startswith("daxpy.") and guard(os.path.dirname(__file__))
    compile_ = njit(cache=cache, error_model="numpy", **options)
    if options.get("parallel"):
        # Serial in a forked child where GNU OpenMP would end the process.
        return lambda function: fork_safe(compile_(function))
    return compile_


_OPENMP_SPIN = "20000"
"""GNU OpenMP's spins before an idle thread sleeps (its default is 300,000)."""


def _short_openmp_spin() -> None:
    """Ask GNU OpenMP's idle threads to sleep soon, unless the user chose a policy.

    After a parallel loop on Numba's threads (:mod:`~daxpy.worklets._native_threads_cpu`)
    its threads spin, and a pass that runs on Python threads meanwhile competes with
    them for the cores: on the GPU machine's 16-core host the clip of 10M hexahedra
    took 99.7 ms with the default spin, 61.0 with 20,000, 63.2 with
    ``OMP_WAIT_POLICY=PASSIVE``, against 91.9 on Python threads alone. Read once, when
    OpenMP starts (the first parallel loop of the process): set before any kernel
    is defined, so before daxpy's first loop.

    Examples
    --------
    >>> _short_openmp_spin()
    >>> "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ
    True
    """
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", _OPENMP_SPIN)


def cell_steps(nx: int, ny: int, nz: int) -> tuple:
    """A structured grid's cells per axis (one plane where an axis has one point)
    and the point steps across a cell along each axis (0 where there are none):
    what the structured kernels walk. Jitted where a kernel calls it.

    Examples
    --------
    >>> cell_steps(4, 1, 3)
    (3, 1, 2, 1, 0, 4)
    """
    return (max(nx - 1, 1), max(ny - 1, 1), max(nz - 1, 1),
            1 if nx > 1 else 0, nx if ny > 1 else 0, nx * ny if nz > 1 else 0)


def row_corner(row: int, cy: int, nx: int, ny: int) -> tuple:
    """The ``k`` and ``j`` of cell row ``row`` (``cy`` cell rows per plane) and the
    point id of its first cell's first corner.

    Examples
    --------
    >>> row_corner(5, 2, 4, 3)
    (2, 1, 28)
    """
    k = row // cy
    j = row - k * cy
    return k, j, (k * ny + j) * nx


def structured_rows(grid, scalars: np.ndarray, refusal: str) -> tuple:
    """A 2-D or 3-D structured grid as the compiled row kernels walk it: its scalars
    (native float32 or float64, contiguous), its points along the axes of more than
    one point ``(nx, ny, nz)`` (``nz`` 1 in 2-D), and its dimension.

    Raises
    ------
    CompiledUnavailable
        On 0-D and 1-D grids (saying ``refusal``) and for other dtypes.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> rows = structured_rows(daxpy.UniformGrid(dims=(4, 1, 3)), np.zeros(12), "")
    >>> rows[1:]
    (4, 3, 1, 2)
    """
    sizes = [int(d) for d in grid.dims if int(d) > 1]
    if len(sizes) not in (2, 3) or scalars.ndim != 1:
        raise CompiledUnavailable(refusal)
    nx, ny, nz = (sizes + [1])[:3]
    return np.ascontiguousarray(kernel_dtype(scalars)[0]), nx, ny, nz, len(sizes)


NO_TERMS = np.zeros(0)
"""A field's rows have no plane terms (float64, as a plane's: one compiled pass)."""


def rows_or_terms(grid, scalars: np.ndarray | None, terms: tuple | None,
                  refusal: str) -> tuple:
    """``(s, px, py, pz, nx, ny, nz, dimension)``: :func:`structured_rows` of the
    scalars with no terms, or a 3-D grid's rows with a plane's axes' terms (float64,
    one per point of each axis; ``s`` then empty: the rows make the distance where
    they read it).

    Raises
    ------
    CompiledUnavailable
        As :func:`structured_rows`; for terms, on grids not 3-D (the order in which
        the terms add is a 3-D grid's).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> terms = (np.zeros(4), np.zeros(2), np.zeros(3))
    >>> rows_or_terms(daxpy.UniformGrid(dims=(4, 2, 3)), None, terms, "")[4:]
    (4, 2, 3, 3)
    """
    if terms is None:
        s, nx, ny, nz, dimension = structured_rows(grid, scalars, refusal)
        return (s, NO_TERMS, NO_TERMS, NO_TERMS, nx, ny, nz, dimension)
    nx, ny, nz = (int(d) for d in grid.dims)
    if min(nx, ny, nz) < 2:
        raise CompiledUnavailable("a plane's terms are read on 3-D grids")
    return (NO_TERMS, *(np.ascontiguousarray(t, dtype=np.float64) for t in terms),
            nx, ny, nz, 3)
