"""Block kernels on Numba's own threads (worklets/_native_threads_cpu.py): every block
once, a kernel's error raised to the caller, Python threads where the pool may not
run (asked, tuples among the arguments, a child forked after the pool ran)."""

import os

import numpy as np
import pytest

pytest.importorskip("numba")

from daxpy.worklets import _native_threads_cpu as native  # noqa: E402
from daxpy.worklets._blocks_cpu import block_kernel  # noqa: E402
from daxpy.worklets._chunk_ids_cpu import _BLOCK, _bounds  # noqa: E402
from forked_child import forked_lines  # noqa: E402
from test_blocks_cpu import _refuse  # noqa: E402  (a kernel that raises past a block)


def _built(task, kind, args):
    """The kernel's loop once its build (and the probe before it) has finished."""
    native.pool_loop(task, kind, args)
    native.settle()
    return native.pool_loop(task, kind, args)


def _pool_or_skip(args):
    loop = _built(_bounds, "blocks", args)
    if loop is None:
        pytest.skip("Numba's threading layer here is not thread-safe (workqueue)")
    return loop


_FOUR = (np.zeros(4, np.int64), np.arange(0, 5, 4), np.zeros(1, np.int64), np.zeros(1, np.int64))


def _cells(n_cells, seed=0):
    conn = np.random.default_rng(seed).integers(0, 1000, 4 * n_cells)
    return conn, np.arange(0, 4 * n_cells + 1, 4)


@pytest.mark.parametrize("n_blocks", [1, 3, 12])
def test_every_block_runs_once_on_the_pool(n_blocks):
    conn, offsets = _cells(n_blocks * _BLOCK)
    lowest = np.full(n_blocks * _BLOCK, -1, np.int64)
    highest = np.full(n_blocks * _BLOCK, -1, np.int64)
    args = (conn, offsets, lowest, highest)
    native.blocks_on_pool(_bounds, _pool_or_skip(args), n_blocks, min(n_blocks, 7), args)
    rows = conn.reshape(-1, 4)
    assert lowest.tolist() == rows.min(axis=1).tolist()
    assert highest.tolist() == rows.max(axis=1).tolist()


@block_kernel()
def _widths(out, widths, first, last):
    for b in range(first, last):
        out[b] = len(widths) + b


def test_a_tuple_among_the_arguments_reaches_the_kernel():
    _pool_or_skip(_FOUR)
    out = np.zeros(40, np.int64)
    native.blocks_on_pool(_widths, _built(_widths, "blocks", (out, (0, 0, 0))),
                          40, 8, (out, (0, 0, 0)))
    assert out.tolist() == [3 + b for b in range(40)]


def test_python_threads_where_asked(monkeypatch):
    _pool_or_skip(_FOUR)
    monkeypatch.setenv("DAXPY_CPU_POOL", "python")
    assert native.pool_loop(_bounds, "blocks", _FOUR) is None


def test_a_kernel_error_on_the_pool_reaches_the_caller():
    _pool_or_skip(_FOUR)
    loop = _built(_refuse, "blocks", (90,))
    with pytest.raises(ValueError, match="block out of range"):
        native.blocks_on_pool(_refuse, loop, 100, 10, (90,))


_FORKED = """
import os, numpy as np, numba
from daxpy.worklets import _native_threads_cpu as native
from daxpy.worklets._blocks_cpu import over_blocks
from daxpy.worklets._chunk_ids_cpu import _bounds
numba.set_num_threads(2)
conn = np.arange(4 * 50000) % 977
offsets = np.arange(0, 4 * 50000 + 1, 4)
lowest, highest = np.zeros(50000, np.int64), np.zeros(50000, np.int64)
over_blocks(_bounds, 49, conn, offsets, lowest, highest)  # Python threads; the loop built
native.settle()
over_blocks(_bounds, 49, conn, offsets, lowest, highest)
print("pool" if native.pool_loop(_bounds, "blocks", (conn, offsets, lowest, highest))
      else "python", flush=True)
expected = lowest.copy()
pid = os.fork()
if pid == 0:
    lowest[:] = 0
    over_blocks(_bounds, 49, conn, offsets, lowest, highest)
    os._exit(0 if np.array_equal(lowest, expected) else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_after_the_pool_ran_uses_python_threads():
    # GNU OpenMP terminates a forked child that starts a parallel loop, where the
    # parent ran one: the child must take its Python threads instead.
    lines = forked_lines(_FORKED)
    pool_here = native.pool_loop(_bounds, "blocks", _FOUR) is not None
    assert lines[0] == ("pool" if pool_here else "python")


_FORKED_TAKE = """
import os, numpy as np, numba
from daxpy.worklets._gather_cpu import take
numba.set_num_threads(2)
from daxpy.worklets._native_threads_cpu import settle
values = np.arange(3 * 200000, dtype=np.float32).reshape(-1, 3)
ids = np.random.default_rng(0).integers(0, 200000, 150000)
take(values, ids)  # on Python threads while the loop is built
settle()
before = take(values, ids)
pid = os.fork()
if pid == 0:
    os._exit(0 if np.array_equal(take(values, ids), before) else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gathers_rows_as_its_parent_did():
    # The geometry filters' outputs take their points and fields by the compiled
    # take, which was a Numba parallel loop: a forked child of a parent that ran it
    # was terminated by GNU OpenMP at its own first one.
    forked_lines(_FORKED_TAKE)
