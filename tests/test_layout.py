"""The benchmark suites import each other without cycles, and never edit ``sys.path``.

(daxpy's own layers and cycles are import-linter's contracts in pyproject.toml,
checked by ``.ci/lint-imports``; ``benchmarks`` is a package of the checkout, not
installed, whose modules import each other relatively.)
"""

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _imports(path: Path, local: set[str]) -> set[str]:
    # Every sibling import, function-level ones included: "from .x import y",
    # "from . import x", "from ..x import y" in a sub-package such as reference/,
    # or their absolute "benchmarks.x" spellings.
    inside = int(path.parent != BENCHMARKS)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(_sibling(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            if node.level == 0:
                found.update(names if node.module == "benchmarks" else [_sibling(node.module)])
            elif node.level - inside == 1:  # relative to benchmarks/ itself
                found.update([node.module.split(".")[0]] if node.module else names)
    return found & local


def _sibling(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if parts[0] == "benchmarks" and len(parts) > 1 else ""


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


def test_benchmarks_never_edit_sys_path():
    for path in BENCHMARKS.rglob("*.py"):
        assert "sys.path" not in path.read_text(), path


def test_a_cycle_is_found():
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
