"""The benchmark scripts import each other without cycles.

(daxpy's own layers and cycles are import-linter's contracts in pyproject.toml,
checked by ``.ci/lint-imports``; the benchmarks are plain scripts, not a package.)
"""

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _imports(path: Path, local: set[str]) -> set[str]:
    # Every import statement, function-level ones included.
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & local


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(name):
        state[name] = 1
        path.append(name)
        for other in sorted(graph[name]):
            if state.get(other) == 1:
                return path[path.index(other):] + [other]
            if other not in state and (found := visit(other)):
                return found
        state[name] = 2
        path.pop()
        return []

    for name in sorted(graph):
        if name not in state and (found := visit(name)):
            return found
    return []


def test_benchmark_modules_have_no_import_cycle():
    # A module is a node; so is a package (benchmarks/reference), with its modules' imports.
    nodes = {p.stem: [p] for p in BENCHMARKS.glob("*.py")}
    nodes.update({p.name: sorted(p.glob("*.py")) for p in BENCHMARKS.iterdir()
                  if (p / "__init__.py").is_file()})
    graph = {name: set().union(*(_imports(f, set(nodes)) for f in files)) - {name}
             for name, files in nodes.items()}
    assert _cycle(graph) == []


def test_a_cycle_is_found():
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
