"""Host blocks for the CPU kernels' outputs (daxpy.data.host_pool): a block serves
a new array only once every array and view over it is gone, never before, and the
pool keeps no more than its limit."""

import gc
import pickle
import threading

import numpy as np
import pytest

from daxpy.data import host_pool
from daxpy.data.host_pool import POOLED_MIN_BYTES, host_empty

N = POOLED_MIN_BYTES // 8 + 1000   # float64s: pooled


@pytest.fixture(autouse=True)
def empty_pool():
    host_pool.release()
    yield
    gc.collect()
    host_pool.release()


def test_a_block_is_reused_only_after_every_view_is_gone():
    a = host_empty(N, np.float64)
    a[:] = 1.0
    first = a.ctypes.data
    view = a[10:20][::2]      # a view of a view alone keeps the block
    del a
    gc.collect()
    b = host_empty(N, np.float64)
    assert b.ctypes.data != first and view.tolist() == [1.0] * 5
    del view
    gc.collect()
    assert host_pool.kept_bytes() == host_pool.size_class(N * 8)
    c = host_empty((N + 100,), np.float64)   # the same size class
    assert c.ctypes.data == first and host_pool.kept_bytes() == 0
    del b, c


def test_arrays_behave_as_numpys():
    a = host_empty((3, N), np.float32)
    assert a.shape == (3, N) and a.dtype == np.float32
    assert a.flags.c_contiguous and a.flags.writeable and a.flags.aligned
    a[:] = np.arange(N, dtype=np.float32)
    assert np.array_equal(pickle.loads(pickle.dumps(a)), a)
    assert host_empty(N, ">f8").dtype == np.dtype(">f8")
    assert host_empty(0, np.int64).shape == (0,)
    assert host_empty((5, 0), np.int64).shape == (5, 0)
    small = host_empty(10, np.int64)
    assert small.flags.owndata        # NumPy's own below the pooled size


def test_no_more_than_the_limit_is_kept(monkeypatch):
    monkeypatch.setattr(host_pool, "KEEP_BYTES", host_pool.size_class(N * 8))
    arrays = [host_empty(N, np.float64) for _ in range(3)]
    del arrays
    gc.collect()
    assert host_pool.kept_bytes() == host_pool.size_class(N * 8)
    host_pool.release()
    assert host_pool.kept_bytes() == 0


def test_threads_never_share_a_block():
    # Each thread writes its number into arrays it takes and frees over and over;
    # a block handed to two threads at once would show another's number.
    errors = []

    def work(number):
        for size in range(40):
            a = host_empty(N + 1000 * (size % 3), np.int64)
            a.fill(number)
            if not (a == number).all():
                errors.append(number)
            del a

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_child_forked_while_a_thread_holds_the_pool_takes_blocks(tmp_path):
    # The child has none of the parent's threads: a lock one of them held at the fork
    # would never be let go in the child.
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import os, threading, numpy as np
        from daxpy.data import host_pool
        held, fork_done = threading.Event(), threading.Event()
        def hold():
            with host_pool._lock:
                held.set()
                fork_done.wait(10)
        t = threading.Thread(target=hold)
        t.start()
        held.wait(10)
        pid = os.fork()
        if pid == 0:
            a = host_pool.host_empty(host_pool.POOLED_MIN_BYTES, np.uint8)
            a[:] = 1
            os._exit(0 if a.sum() == a.size else 3)
        fork_done.set()
        t.join()
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "child 0" in done.stdout


def test_a_vtk_object_keeps_the_blocks_of_the_arrays_it_views():
    # to_vtk shares the arrays' memory: their blocks must not serve new arrays while
    # the VTK object lives, whatever becomes of the daxpy dataset.
    pytest.importorskip("vtk")
    from vtkmodules.util.numpy_support import vtk_to_numpy

    from daxpy.cli.demo import wavelet
    from daxpy.filters import Contour

    grid = wavelet(160)
    values = np.asarray(grid.point_data["RTData"])
    surface = Contour("RTData", values=[float(values.mean())], backend="cpu")(grid)
    points = surface.points().copy()
    assert points.nbytes >= POOLED_MIN_BYTES
    vtk_surface = surface.to_vtk()
    del surface
    gc.collect()
    for _ in range(4):
        host_empty(points.shape, points.dtype).fill(-7)
    assert np.array_equal(vtk_to_numpy(vtk_surface.GetPoints().GetData()), points)
