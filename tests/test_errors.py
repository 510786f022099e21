"""Every error message names what is at fault and what was expected; GPU
out-of-memory (mocked here, real in test_gpu_reliability.py) says how many
bytes were needed and free, advises chunking, and leaves nothing allocated.
"""

import ast
import gc
import pathlib
import pickle
import weakref

import numpy as np
import pytest

import daxpy
from daxpy import errors
from daxpy.data.celltypes import PIXEL, TETRA
from daxpy.engine.dispatch import execute
from daxpy.filters import (BiasAdd, CellToPoint, FieldMap, Gradient, PassThrough,
                           PointToCell)

ROOT = pathlib.Path(__file__).resolve().parents[1]
MESH = "mesh-7"  # a dataset name to find in messages


def _uniform(**kwargs):
    return daxpy.UniformGrid(dims=(3, 3), name=MESH, **kwargs)


def _tet(**kwargs):
    return daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0, 4], [TETRA], name=MESH,
                                  **kwargs)


# (what goes wrong, the call, the exception, words the message must hold:
#  the dataset / field / argument at fault, and what was expected)
CASES = [
    ("dims count", lambda: daxpy.UniformGrid((2, 2, 2, 2), name=MESH),
     errors.InvalidDataSetError, [MESH, "dims", "1 to 3"]),
    ("dims value", lambda: daxpy.UniformGrid((0, 2), name=MESH),
     errors.InvalidDataSetError, [MESH, "dims", ">= 1"]),
    ("dims type", lambda: daxpy.UniformGrid(5, name=MESH),
     errors.InvalidDataSetError, [MESH, "dims", "sequence"]),
    ("spacing", lambda: daxpy.UniformGrid((2, 2), spacing=(1, -1), name=MESH),
     errors.InvalidDataSetError, [MESH, "spacing", "> 0"]),
    ("spacing text", lambda: daxpy.UniformGrid((2,), spacing=("a",), name=MESH),
     errors.InvalidDataSetError, [MESH, "spacing", "real numbers"]),
    ("origin", lambda: daxpy.UniformGrid((2,), origin=(np.nan,), name=MESH),
     errors.InvalidDataSetError, [MESH, "origin", "finite"]),
    ("rectilinear order", lambda: daxpy.RectilinearGrid([0, 2, 1], name=MESH),
     errors.InvalidDataSetError, [MESH, "x coordinates", "strictly increasing"]),
    ("rectilinear NaN", lambda: daxpy.RectilinearGrid([0, 1], [0, np.nan], name=MESH),
     errors.InvalidDataSetError, [MESH, "y coordinates", "finite"]),
    ("curvilinear shape", lambda: daxpy.CurvilinearGrid((2, 2), np.zeros((3, 3)), name=MESH),
     errors.InvalidDataSetError, [MESH, "points", "(4, 3)"]),
    ("points dtype", lambda: daxpy.UnstructuredGrid(np.eye(4, 3, dtype=int), [], [0], [],
                                                    name=MESH),
     errors.InvalidDataSetError, [MESH, "points", "float32 or float64"]),
    ("points Inf", lambda: daxpy.UnstructuredGrid(np.full((1, 3), np.inf), [], [0], [],
                                                  name=MESH),
     errors.InvalidDataSetError, [MESH, "points", "finite"]),
    ("point id", lambda: daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 9], [0, 4], [TETRA],
                                                name=MESH),
     errors.InvalidDataSetError, [MESH, "connectivity", "9", "[0, 4)"]),
    ("offsets count", lambda: daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0], [TETRA],
                                                     name=MESH),
     errors.InvalidDataSetError, [MESH, "offsets", "n_cells + 1"]),
    ("offsets end", lambda: daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0, 3],
                                                   [TETRA], name=MESH),
     errors.InvalidDataSetError, [MESH, "last offset", "4 entries"]),
    ("cell type", lambda: daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0, 4], [42],
                                                 name=MESH),
     errors.InvalidDataSetError, [MESH, "cell_types", "42", "supported"]),
    ("corner count", lambda: daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2], [0, 3], [PIXEL],
                                                    name=MESH),
     errors.InvalidDataSetError, [MESH, "cell 0", "pixel", "expected 4"]),
    ("repeated point", lambda: daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 1, 3], [0, 4],
                                                      [TETRA], name=MESH),
     errors.InvalidDataSetError, [MESH, "cell 0", "repeats", "[0, 1, 1, 3]"]),
    ("field size", lambda: _uniform(point_data={"temp": np.zeros(4)}),
     errors.FieldError, [MESH, "'temp'", "4 tuples", "expected 9"]),
    ("field dtype", lambda: _uniform(point_data={"temp": np.zeros(9, complex)}),
     errors.FieldError, [MESH, "'temp'", "complex128", "real integer or floating"]),
    ("field shape", lambda: _uniform(point_data={"temp": np.zeros((9, 1, 1))}),
     errors.FieldError, [MESH, "'temp'", "(n,) or (n, components)"]),
    ("masked field", lambda: _uniform(point_data={"temp": np.ma.zeros(9)}),
     errors.FieldError, [MESH, "'temp'", "masked", "plain array"]),
    ("ragged field", lambda: _uniform(point_data={"temp": [[1.0], [1.0, 2.0]]}),
     errors.FieldError, [MESH, "'temp'", "rectangular array"]),
    ("unknown field", lambda: Gradient("temp", backend="cpu")(_uniform()),
     errors.UnknownFieldError, [MESH, "'temp'", "point fields", "cell fields"]),
    ("wrong association", lambda: PointToCell("temp", backend="cpu")(
        _uniform(cell_data={"temp": np.zeros(4)})),
     errors.UnknownFieldError, [MESH, "'temp'", "cell field", "wrong association"]),
    ("ambiguous field", lambda: _uniform(point_data={"t": np.zeros(9)},
                                         cell_data={"t": np.zeros(4)}).field("t"),
     errors.FieldError, [MESH, "'t'", "association='points' or 'cells'"]),
    ("point-to-cell of cells", lambda: PointToCell("c", backend="cpu")(
        _uniform(cell_data={"c": np.zeros(4)})),
     errors.FieldError, ["point field 'c'", "cell field", "wrong association"]),
    ("derived needs 3", lambda: Gradient("t", vorticity=True, backend="cpu")(
        _uniform(point_data={"t": np.zeros(9)})),
     errors.FieldError, ["vorticity", "'t'", "3-component", "1 component"]),
    ("cell-to-point association", lambda: CellToPoint("t", association="points"),
     errors.FieldError, ["CellToPoint", "'t'", "cell fields", "'points'"]),
    ("association", lambda: FieldMap("a", association="edges"),
     errors.FieldError, ["association", "'points' or 'cells'", "'edges'"]),
    ("kind", lambda: Gradient("t", kind="edge"),
     errors.ArgumentError, ["kind", "'point' or 'cell'", "'edge'"]),
    ("field name", lambda: Gradient(""), errors.ArgumentError, ["field", "non-empty"]),
    ("result name", lambda: FieldMap("a", result=""), errors.ArgumentError,
     ["result", "non-empty"]),
    ("cell-to-point result name", lambda: CellToPoint("c", [0]), errors.ArgumentError,
     ["result", "non-empty", "[0]"]),
    ("pass-through result name", lambda: PassThrough("t", 7), errors.ArgumentError,
     ["result", "non-empty", "7"]),
    ("pass-through dtype text", lambda: PassThrough("t", dtype="01"), errors.ArgumentError,
     ["dtype", "real integer or floating", "'01'"]),
    ("output option", lambda: Gradient("t", vorticity=3), errors.ArgumentError,
     ["vorticity", "bool or a non-empty field name", "3"]),
    ("backend", lambda: PassThrough("t", backend="tpu")(_uniform(point_data={"t": np.zeros(9)})),
     errors.ArgumentError, ["backend", "'cpu'", "'tpu'"]),
    ("pass-through dtype", lambda: PassThrough("t", dtype="complex64"),
     errors.ArgumentError, ["dtype", "real integer or floating", "complex64"]),
    ("NaN to integer", lambda: PassThrough("t", dtype="int32", backend="cpu")(
        _uniform(point_data={"t": np.full(9, np.nan)})),
     errors.ArgumentError, ["'t'", "NaN", "int32"]),
    ("bias shape", lambda: BiasAdd("t", [[1.0]]), errors.ArgumentError,
     ["bias", "1-D", "(1, 1)"]),
    ("bias length", lambda: BiasAdd("t", [1.0, 2.0], backend="cpu")(
        _uniform(point_data={"t": np.zeros(9)})),
     errors.ArgumentError, ["bias", "2 entries", "9 values", "divide"]),
    ("bias value", lambda: BiasAdd("t", [np.nan], backend="cpu")(
        _uniform(point_data={"t": np.zeros(9, np.int32)})),
     errors.ArgumentError, ["bias value nan", "int32"]),
    ("expression construct", lambda: FieldMap("t.real"), errors.ExpressionError,
     ["attribute access", "'t.real'", "column 1"]),
    ("expression call", lambda: FieldMap("system(t)"), errors.ExpressionError,
     ["call to 'system'", "allowed:", "sqrt"]),
    ("expression length", lambda: FieldMap("t" + "+t" * 600), errors.ExpressionError,
     ["1201 characters", "at most 1000"]),
    ("expression field", lambda: FieldMap("t + nope", backend="cpu")(
        _uniform(point_data={"t": np.zeros(9)})),
     errors.UnknownFieldError, [MESH, "'nope'"]),
    ("pipeline output", lambda: daxpy.pipeline(_uniform(point_data={"t": np.zeros(9)})).run(
        backend="cpu", outputs=["zz"]), errors.ArgumentError, ["pipeline output", "'zz'"]),
    ("worklet association", lambda: execute("point_to_cell", _uniform(), np.zeros(4), "cells",
                                            backend="cpu"),
     errors.FieldError, ["'point_to_cell'", "point fields", "cells"]),
    ("worklet size", lambda: execute("point_to_cell", _tet(), np.zeros(3), "points",
                                     backend="cpu"),
     errors.FieldError, [MESH, "(4,)", "(3,)"]),
    ("worklet name", lambda: execute("nope", _uniform(), np.zeros(9), "points", backend="cpu"),
     errors.ArgumentError, ["'nope'", "known:", "pass_through"]),
    ("worklet parameter", lambda: __import__("daxpy.cuda.dispatch").cuda.dispatch.kernel_source(
        "magnitude", _uniform(), bogus=1), errors.ArgumentError,
     ["'magnitude'", "'bogus'", "it takes"]),
]


@pytest.mark.parametrize("label, call, kind, words", CASES, ids=[c[0] for c in CASES])
def test_message_names_the_culprit_and_what_was_expected(label, call, kind, words):
    with pytest.raises(kind) as info:
        call()
    message = str(info.value)
    for word in words:
        assert word in message, f"{label}: {word!r} missing from {message!r}"


@pytest.mark.parametrize("name", [n for n in dir(errors) if n.endswith("Error")])
def test_error_classes(name):
    cls = getattr(errors, name)
    assert issubclass(cls, errors.DaxpyError) or cls is errors.DaxpyError
    # Errors cross process boundaries (Dask workers, multiprocessing) intact.
    error = cls("field 'x' of grid: expected y")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is cls and str(again) == str(error)
    # tblib (Dask's workers) rebuilds exceptions with cls.__new__(cls).
    assert type(cls.__new__(cls)) is cls


def _daxpy_raises():
    """(file, line, exception name, node) of every `raise SomeError(...)` of a daxpy error."""
    names = {n for n in dir(errors) if n.endswith("Error")}
    for folder in ("daxpy", "worklets", "filters"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                    func = node.exc.func
                    name = getattr(func, "id", getattr(func, "attr", None))
                    if name in names:
                        yield path.relative_to(ROOT), node.lineno, name, node.exc


def test_every_daxpy_error_is_raised_with_a_message():
    raises = list(_daxpy_raises())
    assert len(raises) > 80
    for path, line, name, call in raises:
        assert call.args, f"{path}:{line} raises {name} without a message"
        message = call.args[0]
        if isinstance(message, ast.Constant):
            assert len(message.value) > 20, f"{path}:{line}: {message.value!r} says too little"


# -- GPU out of memory, mocked ---------------------------------------------------

class _FakeOutOfMemory(MemoryError):
    def __init__(self, size):
        super().__init__(f"Out of memory allocating {size:,} bytes")
        self._size = size


class _Block:
    """Stands in for a device array: weakly referenceable, so a test sees it freed."""


@pytest.fixture
def fake_device(monkeypatch):
    from daxpy.cuda import memory

    state = {"used": 1000, "released": 0, "blocks": []}
    monkeypatch.setattr(memory, "is_out_of_memory", lambda exc: isinstance(exc, _FakeOutOfMemory))
    monkeypatch.setattr(memory, "device_memory", lambda: (5_000, 80_000))
    monkeypatch.setattr(memory, "pool_used", lambda: state["used"])
    monkeypatch.setattr(memory, "release_cached",
                        lambda: state.__setitem__("released", state["released"] + 1))
    return state


def _failing_execute(state, needed):
    def execute_cuda(worklet, dataset, values, association, **params):
        upload = _Block()  # what the call had allocated before it ran out
        state["blocks"].append(weakref.ref(upload))
        dataset._cache["cuda:host:1:<f4"] = (values, upload)
        state["used"] += 3_000
        raise _FakeOutOfMemory(needed)
    return execute_cuda


def test_out_of_memory_names_bytes_and_advises_chunking(fake_device, monkeypatch):
    import daxpy.cuda.dispatch as cuda_dispatch
    import daxpy.engine.dispatch as dispatch

    monkeypatch.setattr(dispatch, "resolve_backend", lambda backend: "cuda")
    monkeypatch.setattr(cuda_dispatch, "execute_cuda", _failing_execute(fake_device, 40_000))
    grid = _uniform(point_data={"t": np.zeros(9, np.float32)})
    grid._cache["cuda:kept"] = "from an earlier call"
    with pytest.raises(errors.DeviceMemoryError) as info:
        # The worklet call itself (a filter call adds the engine's own CUDA setup,
        # which this fake device does not have).
        Gradient("t", backend="cuda").apply(grid)
    message = str(info.value)
    for words in ("point_gradient", MESH, "at least 43,000 bytes", "asked for 40,000",
                  "5,000 bytes of 80,000 were free", "chunks='auto'", "daxpy.dask"):
        assert words in message, message
    assert isinstance(info.value, MemoryError)
    # Nothing of the failed call stays: its cached upload is dropped, its frames'
    # arrays are released although the error is still alive, the pool is emptied.
    assert list(grid._cache) == ["cuda:kept"]
    gc.collect()
    assert all(ref() is None for ref in fake_device["blocks"])
    assert fake_device["released"] == 1
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_other_errors_pass_through_the_memory_guard(fake_device):
    from daxpy.cuda.memory import guarded

    def broken():
        raise ValueError("not memory")

    with pytest.raises(ValueError, match="not memory"):
        guarded(broken, _uniform(), "demo")
    assert fake_device["released"] == 0
