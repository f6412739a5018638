"""The package layers hold: no upward import and no import circle across packages.

The layer table is the one in storbench's package docstring (``src/storbench/__init__.py``). The
source is read with ``ast`` (nothing of storbench is imported), so an import inside a function or
under ``if TYPE_CHECKING:`` counts like one at the top of a module. Imports by name at run time
(``importlib`` in the plugin discovery and the metric catalog) are not seen.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path


SRC = Path(__file__).resolve().parents[1] / "src" / "storbench"


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module (a package's __init__ when a name comes from it)
    file: str  # relative to the folder holding storbench
    line: int
    where: str  # "module level", "in a function", "under TYPE_CHECKING"

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.where}) imports {self.target}"


def layer_table(root: Path = SRC) -> dict[str, tuple[int, str]]:
    """Unit (a package or top-level module under storbench) → (rank, layer name), from the package docstring.

    The table is the first indented block after the line starting "Layers": one layer a line, lowest
    first, its name then its units.
    """
    doc = ast.get_docstring(ast.parse((root / "__init__.py").read_text())) or ""
    lines = doc.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Layers")), None)
    assert start is not None, f"{root / '__init__.py'}: the docstring has no 'Layers' table"
    table: dict[str, tuple[int, str]] = {}
    rank = 0
    for line in lines[start + 1 :]:
        if not line.startswith("    "):
            if table:
                break
            continue  # the paragraph before the table
        name, *units = line.split()
        for unit in units:
            assert unit not in table, f"the layer table names {unit} twice"
            table[unit] = (rank, name)
        rank += 1
    return table


def module_names(root: Path = SRC) -> dict[str, Path]:
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def unit(module: str) -> str:
    """The package or top-level module holding ``module`` (``__init__`` for storbench's own)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports(root: Path = SRC) -> tuple[Import, ...]:
    """Every import of a storbench module, at any depth of every module under ``root``."""
    return _imports(root)


@cache  # the checks read the same tree
def _imports(root: Path) -> tuple[Import, ...]:
    modules = module_names(root)
    found = []

    def resolve(name: str, member: str) -> str:
        return f"{name}.{member}" if f"{name}.{member}" in modules else name

    for source, path in modules.items():
        package = source if path.name == "__init__.py" else source.rpartition(".")[0]
        shown = str(path.relative_to(root.parent))

        def visit(node: ast.AST, where: str) -> None:
            for child in ast.iter_child_nodes(node):
                inner = where
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    inner = "in a function"
                elif (
                    isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test) and where == "module level"
                ):
                    inner = "under TYPE_CHECKING"
                targets: list[str] = []
                if isinstance(child, ast.Import):
                    targets = [alias.name for alias in child.names]
                elif isinstance(child, ast.ImportFrom):
                    base = child.module or ""
                    if child.level:
                        anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                        base = ".".join(anchor + ([base] if base else []))
                    targets = [resolve(base, alias.name) for alias in child.names]
                found.extend(
                    Import(source, target, shown, child.lineno, inner)
                    for target in dict.fromkeys(targets)
                    if target == "storbench" or target.startswith("storbench.")
                )
                visit(child, inner)

        visit(ast.parse(path.read_text(), str(path)), "module level")
    return tuple(found)


def unplaced(table: dict[str, tuple[int, str]], root: Path = SRC) -> list[str]:
    return sorted({unit(m) for m in module_names(root)} - set(table))


def upward(table: dict[str, tuple[int, str]], root: Path = SRC) -> list[Import]:
    """The imports of a unit in a higher layer than the importer's (a unit missing from the table is skipped)."""
    return [
        i
        for i in imports(root)
        if unit(i.source) in table and unit(i.target) in table and table[unit(i.target)][0] > table[unit(i.source)][0]
    ]


def circles(root: Path = SRC) -> list[list[str]]:
    """The import circles (strongly connected modules, two or more), largest first (Tarjan)."""
    graph: dict[str, set[str]] = {m: set() for m in module_names(root)}
    for i in imports(root):
        if i.target in graph and i.target != i.source:
            graph[i.source].add(i.target)
    return strongly_connected(graph)


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of ``graph`` (strongly connected nodes, two or more), largest first (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:  # recursive: the graph is a few hundred modules deep at most
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(found, key=len, reverse=True)


RUST = SRC.parents[1] / "native" / "storbench-load" / "src"
RUST_PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_0-9]+)+)")


def rust_graph(src: Path) -> dict[str, set[str]]:
    """Module (``dir::file`` under ``src``) → the modules it names through ``super::...`` or ``crate::...`` paths
    (in ``use`` lines and in code), each path resolved to the longest module it names, across folders too; a
    ``mod.rs`` is its directory's parent and is left out, and so is a module's own ancestor: a module using its
    parent's items is how Rust nests, not a circle."""
    modules = {
        path: "::".join(path.relative_to(src).with_suffix("").parts)
        for path in src.rglob("*.rs")
        if path.name not in ("mod.rs", "main.rs", "lib.rs")
    }
    graph: dict[str, set[str]] = {name: set() for name in modules.values()}
    for path, name in modules.items():
        folder = name.split("::")[:-1]
        for line in path.read_text().splitlines():
            code = line.split("//", 1)[0]
            for found in RUST_PATH.finditer(code):
                rest = found.group(2).split("::")[1:]
                base = [] if found.group(1) == "crate" else list(folder)
                while rest and rest[0] == "super":  # super::super::x
                    base, rest = base[:-1], rest[1:]
                segments = base + rest
                target = next(
                    ("::".join(segments[:k]) for k in range(len(segments), 0, -1) if "::".join(segments[:k]) in graph),
                    None,
                )
                if target and target != name and not name.startswith(target + "::"):
                    graph[name].add(target)
    return graph


def rust_circles(src: Path) -> list[list[str]]:
    return strongly_connected(rust_graph(src))


def test_every_package_and_module_has_a_layer():
    missing = unplaced(layer_table())
    assert not missing, (
        f"not in the layer table of src/storbench/__init__.py: {', '.join(missing)}; "
        f"add each to the lowest layer whose units it imports from"
    )


def test_no_upward_import():
    table = layer_table()
    new = upward(table)

    def show(offenders: list[Import]) -> str:
        return "".join(
            f"\n  {i}: {unit(i.source)} (layer {table[unit(i.source)][1]}) is below {unit(i.target)} "
            f"(layer {table[unit(i.target)][1]})"
            for i in offenders
        )

    assert not new, f"{len(new)} upward import(s):{show(new)}"


def test_no_import_circle_anywhere():
    found = circles()

    def show(found: list[list[str]]) -> str:
        return "".join(
            f"\n  {len(c)} modules of {', '.join(sorted({unit(m) for m in c}))}: {', '.join(c)}" for c in found
        )

    assert not found, f"{len(found)} import circle(s):{show(found)}"


def test_no_use_circle_among_rust_modules():
    found = rust_circles(RUST)
    assert not found, "use circle(s) among the native engine's modules: " + "; ".join(" <-> ".join(c) for c in found)


def test_a_planted_circle_inside_a_package_is_found(tmp_path):
    pkg = tmp_path / "storbench"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""x\n\nLayers, lowest first:\n\n    a  low\n"""\n')
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "one.py").write_text("def f():\n    from storbench.low import two\n")
    (pkg / "low" / "two.py").write_text("from storbench.low.one import f\n")
    assert circles(pkg) == [["storbench.low.one", "storbench.low.two"]]
    crate = tmp_path / "src"
    (crate / "core").mkdir(parents=True)
    (crate / "core" / "a.rs").write_text("use super::b::B;\npub struct A;\n")
    (crate / "core" / "b.rs").write_text("use crate::core::a::A;\npub struct B;\n")
    (crate / "core" / "c.rs").write_text("use super::a::A;\n")
    assert rust_circles(crate) == [["core::a", "core::b"]]
    # across folders, through crate:: and super::super:: paths (a module naming its own parent is nesting)
    (crate / "cql" / "request").mkdir(parents=True)
    (crate / "cql" / "config.rs").write_text("use crate::cql::request::pipe::Pipe;\n")
    (crate / "cql" / "request" / "pipe.rs").write_text("use super::super::config::Login;\nuse crate::cql;\n")
    assert rust_circles(crate) == [["core::a", "core::b"], ["cql::config", "cql::request::pipe"]]


def test_the_checks_see_function_level_and_type_checking_imports(tmp_path):
    """The reader finds what the checks depend on: imports inside functions and under TYPE_CHECKING."""
    pkg = tmp_path / "storbench"
    (pkg / "low").mkdir(parents=True)
    (pkg / "high").mkdir()
    (pkg / "__init__.py").write_text('"""x\n\nLayers, lowest first:\n\n    a  low\n    b  high\n"""\n')
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "high" / "__init__.py").write_text("from storbench.low import thing\n")
    (pkg / "low" / "thing.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from storbench.high import x\n"
    )
    (pkg / "low" / "other.py").write_text("def f():\n    import storbench.high\n")
    table = layer_table(pkg)
    assert table == {"low": (0, "a"), "high": (1, "b")}
    assert sorted((i.source, i.where) for i in upward(table, pkg)) == [
        ("storbench.low.other", "in a function"),
        ("storbench.low.thing", "under TYPE_CHECKING"),
    ]
    assert circles(pkg) == [["storbench.high", "storbench.low.thing"]]
