"""Every public docstring example in the installed package runs."""

import doctest
import importlib
import pkgutil

import pytest

pytest.importorskip("vtk", reason="docstring examples convert to VTK")

import daxpy


def _modules():
    names = ["daxpy"]
    for info in pkgutil.walk_packages(daxpy.__path__, "daxpy."):
        names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("module_name", _modules())
def test_docstring_examples_run(module_name):
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
