"""The import graph of analysis/: every `import` in every module, at module level or inside a
function (a deferred import still ties the two modules together): no cycles among them, and
the stages in pipeline order (read <- derive <- corpus <- write <- pipeline <- commands): no
module imports one of a later stage, no writer imports a reader, and no module imports another's
private (`_name`) names."""
from __future__ import annotations

import ast
import functools
import importlib
import inspect
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "analysis"
# Cycles that stay for now, each as the sorted tuple of its modules, with why; a new cycle, or
# one of these growing, fails the test.
ALLOWED_CYCLES: set[tuple[str, ...]] = set()
# The stages in pipeline order: a module may import its own stage's, an earlier stage's, or a
# shared leaf (errors, atomic, vocabulary, model, paths, kinds, native_build); cli and __main__, the entry,
# come last.
STAGES = ("read", "derive", "corpus", "write", "pipeline", "commands")
LEAVES = {"errors", "atomic", "vocabulary", "model", "paths", "kinds", "native_build"}
ENTRY = {"cli", "__main__"}


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imported_names(tree: ast.AST, package: str) -> list[str]:
    """Every dotted name an import in `tree` names; `from a import b` gives `a.b` (b may be a
    module or a name in a), relative imports resolved against `package`."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            names += [f"{base}.{alias.name}" for alias in node.names]
    return names


def owning_module(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of `name` that is one of our modules (None: a library's)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


# Parsed once per test session (four tests read it): the tree does not change while they run.
@functools.cache
def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        targets = {owning_module(t, modules) for t in imported_names(tree, package)}
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(tuple(sorted(component)))
    return sorted(found)


def test_analysis_has_no_import_cycles():
    graph = import_graph()
    unexpected = [c for c in cycles(graph) if c not in ALLOWED_CYCLES]
    assert unexpected == [], "import cycles: " + "; ".join(
        " <-> ".join(c) for c in unexpected)


def layer(module: str) -> int:
    """A module's place in the pipeline: 0 for a shared leaf, 1.. for the stages in order, the
    entry last. A module of the package that is none of these fails: it must be given one."""
    parts = module.split(".")
    if parts == ["analysis"] or (len(parts) == 2 and parts[1] in LEAVES):
        return 0
    if len(parts) == 2 and parts[1] in ENTRY:
        return len(STAGES) + 1
    if parts[1] in STAGES:
        return STAGES.index(parts[1]) + 1
    raise AssertionError(f"{module}: neither a stage's, a shared leaf nor the entry; add it to "
                         f"STAGES, LEAVES or ENTRY in tests/test_imports.py")


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a later stage's module, as `importer -> imported`."""
    return sorted(f"{source} -> {target}" for source, targets in graph.items()
                  for target in targets if layer(target) > layer(source))


def test_analysis_imports_point_one_way():
    assert layer_violations(import_graph()) == []


def test_no_reader_imports_a_later_stage():
    # The rule the issue names (read/ is the first stage, so the test above covers it too),
    # kept apart so that its failure message says so.
    graph = import_graph()
    later = tuple(f"analysis.{stage}" for stage in STAGES[1:]) + ("analysis.cli",)
    assert sorted(f"{s} -> {t}" for s, ts in graph.items() if s.startswith("analysis.read")
                  for t in ts if t.startswith(later)) == []


def test_layer_violations_finds_an_import_of_a_later_stage():
    graph = {"analysis.read.a": {"analysis.errors", "analysis.derive.b"},
             "analysis.derive.b": {"analysis.read.a", "analysis.model"},
             "analysis.write.c": {"analysis.corpus.d", "analysis.write.e"},
             "analysis.errors": {"analysis.write.c"}, "analysis.cli": {"analysis.errors"}}
    assert layer_violations(graph) == ["analysis.errors -> analysis.write.c",
                                       "analysis.read.a -> analysis.derive.b"]


def test_every_module_has_a_layer():
    for module in import_graph():
        layer(module)


def test_the_graph_sees_deferred_and_relative_imports():
    # What the cycle test rests on: an import inside a function counts, and so does a
    # relative one.
    tree = ast.parse("def f():\n    from .b import g\n\nimport analysis.c\n")
    assert sorted(imported_names(tree, "analysis.pkg")) == ["analysis.c", "analysis.pkg.b.g"]
    modules = {"analysis.pkg.b": Path("b.py"), "analysis.c": Path("c.py")}
    assert owning_module("analysis.pkg.b.g", modules) == "analysis.pkg.b"
    assert owning_module("numpy.linalg", modules) is None


def test_cycles_finds_each_strongly_connected_group_once():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"},
             "g": {"g"}}
    assert cycles(graph) == [("a", "b", "c"), ("e", "f")]


def test_the_package_graph_is_read():
    graph = import_graph()
    assert "analysis.read.hdr.log" in graph
    assert "analysis.read.hdr.lines" in graph["analysis.read.hdr.log"]


def test_no_writer_imports_a_reader():
    # Issue 35: write/ gets plain data - the run model, derive/'s results - and formats and
    # draws it; what a reader gives is turned into numbers in derive/ first, never in write/.
    graph = import_graph()
    assert sorted(f"{s} -> {t}" for s, ts in graph.items() if s.startswith("analysis.write")
                  for t in ts if t.startswith("analysis.read")) == []


# Private names one module still takes from another, as (importer, owner, name), with why; a
# new one fails the test.
ALLOWED_PRIVATE: set[tuple[str, str, str]] = set()


def taken_names(tree: ast.AST, module: str, package: str,
                modules: dict[str, Path]) -> set[tuple[str, str, str]]:
    """(module, owner, name) for each name that `tree` takes from another of our modules:
    `from owner import name`, or `alias.name` where `alias` is one of our modules that `tree`
    imports (`from a import b`, `import a.b as alias`)."""
    found, aliases = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in modules:
                    aliases[alias.asname or alias.name] = full
                elif owning_module(full, modules) not in (None, module):
                    found.add((module, owning_module(full, modules), alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in modules:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in aliases and aliases[node.value.id] != module:
            found.add((module, aliases[node.value.id], node.attr))
    return found


def private_uses(tree: ast.AST, module: str, package: str,
                 modules: dict[str, Path]) -> set[tuple[str, str, str]]:
    """taken_names' `_name`s (not dunders)."""
    return {(m, owner, name) for m, owner, name in taken_names(tree, module, package, modules)
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__"))}


def all_taken_names() -> set[tuple[str, str, str]]:
    modules = module_files()
    found = set()
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found |= taken_names(ast.parse(path.read_text(encoding="utf-8"), str(path)), name,
                             package, modules)
    return found


def test_no_module_imports_anothers_private_names():
    # A `_name` is its module's own business: whoever needs it from outside makes it public
    # (and says so), so that changing it inside never breaks a stranger.
    found = {(m, owner, name) for m, owner, name in all_taken_names()
             if name.startswith("_") and not (name.startswith("__") and name.endswith("__"))}
    assert sorted(found - ALLOWED_PRIVATE) == []
    # an allowed entry that is gone is dropped too, so the list only ever shrinks
    assert sorted(ALLOWED_PRIVATE - found) == []


def test_private_uses_sees_from_imports_and_module_attributes():
    modules = {"analysis.a": Path("a.py"), "analysis.pkg.b": Path("b.py"),
               "analysis.pkg.c": Path("c.py")}
    tree = ast.parse("from analysis.a import _x, y, __all__\n"
                     "from . import b\nimport analysis.a as a\n"
                     "from analysis.pkg.c import _own\n"
                     "def f():\n    return b._hidden(a._y, b.public, a.__doc__)\n")
    assert private_uses(tree, "analysis.pkg.c", "analysis.pkg", modules) == {
        ("analysis.pkg.c", "analysis.a", "_x"), ("analysis.pkg.c", "analysis.pkg.b", "_hidden"),
        ("analysis.pkg.c", "analysis.a", "_y")}


def test_no_writer_calls_a_function_of_derive():
    # Issue 35: every statistic, selection and verdict is made in derive/ and reaches write/
    # as data (the model's fields, derive/'s records), so a writer takes only records, types
    # and constants from derive/, never a function to compute with while it formats
    # (datafiles computed each load point's rate per client with derive's rate_per_client,
    # flame_views a comparison's top frames with flame_top.top_changes). corpus/ is left out:
    # the reduce step (write/corpus_pages.py) is its caller by design, querying the cell table.
    found = []
    for module, owner, name in sorted(all_taken_names()):
        if not (module.startswith("analysis.write") and owner.startswith("analysis.derive")):
            continue
        value = getattr(importlib.import_module(owner), name, None)
        if inspect.isfunction(value) or inspect.isbuiltin(value):
            found.append(f"{module} uses {owner}.{name}")
    assert found == []
