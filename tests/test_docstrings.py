"""Every public docstring example in the installed package runs."""

import doctest
import importlib
import pkgutil

import pytest

pytest.importorskip("vtk", reason="docstring examples convert to VTK")



PACKAGES = ("daxpy", "daxpy.worklets", "daxpy.filters")


def _modules():
    # The subpackages are mapped from other folders (package-dir), so walk each
    # one from its own __path__; walking daxpy's alone misses them when editable.
    names = set()
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        names.add(package_name)
        for info in pkgutil.walk_packages(package.__path__, package_name + "."):
            names.add(info.name)
    return sorted(names)


@pytest.mark.parametrize("module_name", _modules())
def test_docstring_examples_run(module_name):
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
