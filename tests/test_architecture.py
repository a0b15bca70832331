"""The house's layers (docs/architecture.md): imports point down, no module imports itself back
through others, an import written inside a function says why, and the top of the package stays
small. Imports inside functions count as much as those at the top of a module."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "wean"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def test_every_import_keeps_to_the_layers_of_pyproject_toml():
    result = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=PACKAGE.parents[1], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the groups of modules that reach one another."""
    index, low, stack, on_stack, groups, counter = {}, {}, [], set(), [], 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                groups.append(group)
    return groups


def test_the_cycle_finder_finds_a_cycle():
    assert sorted(map(sorted, strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}))) == [
        ["a", "b", "c"], ["d"]]


def test_no_module_imports_itself_back_through_others():
    graph = grimp.build_graph("wean", cache_dir=None)
    edges = {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    cycles = [sorted(group) for group in strongly_connected(edges) if len(group) > 1]
    assert not cycles, cycles


def function_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each import written inside a function, without a comment saying why (on its
    line, or above the run of imports it opens)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    silent = []
    for function in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or "#" in lines[node.end_lineno - 1]:
                continue
            above = node.lineno - 2
            while above >= 0 and lines[above].lstrip().startswith(("from ", "import ")):
                above -= 1
            if above < 0 or not lines[above].lstrip().startswith("#"):
                silent.append((node.lineno, lines[node.lineno - 1].strip()))
    return silent


def test_the_finder_of_silent_imports_finds_one(tmp_path):
    example = tmp_path / "example.py"
    example.write_text("def f():\n    import json\n\n\ndef g():\n    # deferred: slow\n    import csv\n"
                       "    import io\n\n\ndef h():\n    import re  # deferred: slow\n")
    assert function_level_imports(example) == [(2, "import json")]


def test_an_import_written_inside_a_function_says_why():
    silent = {f"{path.relative_to(PACKAGE.parent)}:{line}": text
              for path in sorted(PACKAGE.rglob("*.py")) for line, text in function_level_imports(path)}
    assert not silent, silent


def test_the_top_of_the_package_holds_at_most_twelve_modules():
    loose = sorted(path.name for path in PACKAGE.glob("*.py") if path.name != "__init__.py")
    assert len(loose) <= 12, loose
