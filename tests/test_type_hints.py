"""Every public function and method of the public modules has complete type hints
(mypy checks them against their bodies and callers in .ci/wheel)."""

import inspect

import pytest

import daxpy
import daxpy.filters
import daxpy.io
from daxpy.pipeline import Node, Pipeline

pytest.importorskip("pyvista")
pytest.importorskip("dask")
import daxpy.accessor  # noqa: E402
import daxpy.dask  # noqa: E402


def _public_callables():
    modules = (daxpy, daxpy.io, daxpy.filters, daxpy.dask)
    for module in modules:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                yield f"{module.__name__}.{name}", obj.__init__
                for attr, member in vars(obj).items():
                    if callable(member) and not attr.startswith("_") or attr == "__call__":
                        yield f"{module.__name__}.{name}.{attr}", member
            elif inspect.isfunction(obj):
                yield f"{module.__name__}.{name}", obj
    for cls in (Pipeline, Node, daxpy.DataSet, daxpy.filters.Filter):
        for attr, member in vars(cls).items():
            if inspect.isfunction(member) and not attr.startswith("_"):
                yield f"{cls.__name__}.{attr}", member


def _missing(function) -> list[str]:
    signature = inspect.signature(function)
    missing = [p.name for p in signature.parameters.values()
               if p.annotation is inspect.Parameter.empty and p.name not in ("self", "cls")
               and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if signature.return_annotation is inspect.Signature.empty and function.__name__ != "__init__":
        missing.append("return")
    return missing


def test_public_api_is_fully_annotated():
    gaps = {name: _missing(function) for name, function in _public_callables()
            if inspect.isfunction(function)}
    assert {name: gap for name, gap in gaps.items() if gap} == {}
