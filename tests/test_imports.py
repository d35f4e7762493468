"""The import graph runs one way: app → components → core, and inside core from the service down to
the types, with no cycle (module-level imports; an import inside a function is a deliberate late edge)."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(path: Path, known: set[str]) -> set[str]:
    """The project modules ``path`` imports at module level (not inside functions)."""
    found = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # "from core.kb import index" imports the module core.kb.index; "from core.kb import X", core.kb
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                     for a in node.names]
        found |= {n for n in names if n in known}
    return found


def graph() -> dict[str, set[str]]:
    files = [p for folder in ("core", "components", "app") for p in (ROOT / folder).rglob("*.py")]
    known = {module_name(p) for p in files}
    return {module_name(p): top_level_imports(p, known) - {module_name(p)} for p in files}


def test_layers_import_only_downwards():
    for module, imports in graph().items():
        layer = module.split(".")[0]
        allowed = {"core": ("core",), "components": ("core", "components"), "app": ("core", "components", "app")}
        assert all(i.split(".")[0] in allowed[layer] for i in imports), (module, imports)


def test_core_has_no_import_cycle():
    edges = {m: {i for i in imports if i.startswith("core")} for m, imports in graph().items()
             if m.startswith("core")}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " → ".join(path[path.index(nxt):] + [nxt]) if nxt in path
                                     else f"import cycle through {nxt}")
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2
    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert "core.service" not in {i for m, imports in edges.items() if m != "core.service" and not m.startswith(
        ("core.cli", "core.evaluation", "core.dialogue", "core.__main__")) for i in imports}, \
        "only the front ends (cli, dialogue, batch runner) sit above the service"
