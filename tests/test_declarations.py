"""The control layer (daxpy/) knows worklets and verbs only through their declarations.

Pipeline methods, ``daxpy run`` steps and their ``--help`` are generated from the
declared verbs (:mod:`daxpy.data.verbs`). This test reads every module of
``daxpy/`` (docstrings and comments aside) for the name of a declared verb,
worklet, marching device function or filter class. The modules still wired by
hand are listed in ``HARD_WIRED`` with the reason; the list may only shrink.
"""

import ast
from pathlib import Path

import daxpy
import daxpy.filters
from daxpy.cli.args import VERBS
from daxpy.data.verbs import registered_verbs
from daxpy.data.worklet import FIELD_KIND, registered_worklets
from daxpy.pipeline import Node

CONTROL = Path(daxpy.__file__).resolve().parent

HARD_WIRED = {
    "cli/demo.py": "the demo is an application of the library: a fixed "
                   "Gradient -> Magnitude -> PointToCell chain and a Contour that it shows",
    "cli/bench.py": "a benchmark suite is named 'contour', after the filter it measures",
    "cuda/expression.py": "the expression language's clip(x, lo, hi), not the Clip filter",
    "data/expressions.py": "the expression language's clip(x, lo, hi), not the Clip filter",
}


def _names() -> set[str]:
    worklets = registered_worklets()
    marches = {w.cuda.march for w in worklets.values()
               if w.kind == FIELD_KIND and w.cuda is not None and w.cuda.march}
    filters = set(daxpy.filters.__all__) - {"Filter", "FieldFilter"}
    return set(registered_verbs()) | set(worklets) | marches | filters


def _docstrings(tree) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}


def named_in(path: Path, names: set[str]) -> set[str]:
    """Declared names that ``path`` spells as a string or defines (a verb written
    as a method); filter classes (CamelCase) also as a name, an attribute or an
    import (``map`` or ``normalize`` used as a Python identifier is a builtin or
    another module's function, not a verb)."""
    tree = ast.parse(path.read_text())
    docstrings = _docstrings(tree)
    strings, identifiers = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            strings.add(node.value)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            strings.add(node.name)
        elif isinstance(node, (ast.Name, ast.Attribute, ast.alias)):
            identifiers.add(getattr(node, "id", None) or getattr(node, "attr", None)
                            or node.name)
    classes = {name for name in identifiers if name[:1].isupper()}
    return (strings | classes) & names


def _hits() -> dict[str, set[str]]:
    names = _names()
    hits = {}
    for path in sorted(CONTROL.rglob("*.py")):
        found = named_in(path, names)
        if found:
            hits[path.relative_to(CONTROL).as_posix()] = found
    return hits


def test_control_layer_names_no_worklet_outside_the_hard_wired_modules():
    unexpected = {path: sorted(found) for path, found in _hits().items()
                  if path not in HARD_WIRED}
    assert unexpected == {}


def test_hard_wired_list_only_holds_modules_that_still_name_worklets():
    assert sorted(set(HARD_WIRED) - set(_hits())) == []


def test_the_scan_sees_a_name_in_code_but_not_in_a_docstring(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""gradient"""\nSTEP = "magnitude"  # point_to_cell\n'
                      'x = list(map(str, Gradient))\ndef cell_to_point(): pass\n')
    declared = {"gradient", "magnitude", "point_to_cell", "map", "Gradient", "cell_to_point"}
    assert named_in(module, declared) == {"magnitude", "Gradient", "cell_to_point"}


def test_node_methods_and_cli_verbs_are_the_declared_verbs():
    verbs = registered_verbs()
    assert VERBS == tuple(verbs)
    for name, verb in verbs.items():
        assert getattr(Node, name) is verb.method


def test_pipeline_verbs_are_pipeline_methods_and_not_steps():
    from daxpy.pipeline import Pipeline

    verbs = registered_verbs("pipeline")
    assert verbs, "combine is declared by its filter module"
    for name, verb in verbs.items():
        assert getattr(Pipeline, name) is verb.method
        assert name not in VERBS


def test_every_verb_method_has_an_example_that_runs():
    import doctest

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for verb in [*registered_verbs().values(), *registered_verbs("pipeline").values()]:
        assert "Examples" in verb.method.__doc__, verb.name
        for test in finder.find(verb.method, verb.name, globs={}):
            assert test.examples, verb.name
            assert runner.run(test).failed == 0, verb.name
