"""The import-layers contract: which package may import which, and no import cycles.

    python -m tests.import_layers        # prints the violations, exit 1 when there are any (``make lint`` runs it)

Modules are named here by their folders (``calc.kv``); the code imports them by their installed name
(``vramfit.calc.kv``), and a bare ``import calc`` is a violation (it would load a second copy of the module).

Layers, highest first; a module may import its own layer and the ones below, never above:

    bot.exts, bot.bot, bot.process, bot.tree, bot.translator, bot.__main__   the discord.py application
    bot.cli                                                                    the terminal front end
    bot.ui, bot.render                                                         what users see
    bot.answering, bot.storage, bot.i18n, ...                                  answering (no Discord), storage
    bot.parser, bot.errors                                                     text → a question; the bot's error
    calc                                                                       the calculator (stdlib + pydantic)

inside calc, the engine profiles never import the solvers or the answer, nor each other; no module outside
calc/families/ names an architecture (a llama.cpp architecture name or a config.json model_type in code, not in a
docstring): what one family is lives in its module; the sources never import
the answering layer; and the extensions in bot/exts never import each other. Imports inside ``if TYPE_CHECKING:`` do
not count (they never run); function-local imports do, in the layers and in the cycles, and each says on its line
why it is not at module top.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("calc", "bot")
APP = ("bot.exts", "bot.bot", "bot.process", "bot.tree", "bot.translator", "bot.__main__", "bot.cli")
VIEW = ("bot.ui", "bot.render")
FORBIDDEN_IN_CALC = ("bot", "discord", "babel", "aiohttp", "psycopg", "huggingface_hub", "httpx2", "httpx")
DISCORD_FREE = (
    "bot.answering", "bot.sources", "bot.parser", "bot.render.text", "bot.render.contract", "bot.render.errors",
    "bot.cli",
)  # fmt: skip
CALC_ABOVE_ENGINES = ("calc.solve", "calc.estimate", "calc.advice", "calc.presets")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(path: Path) -> Iterator[tuple[str, int, bool]]:
    """(imported module, line, at module level) for every import that runs."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]

    def walk(node: ast.AST, top: bool) -> Iterator[tuple[str, int, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    yield from walk(other, top)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, child.lineno, top
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    base = ".".join([*package.split(".")[: len(package.split(".")) - child.level + 1], base]).strip(".")
                yield base, child.lineno, top
                for alias in child.names:  # "from calc.engines import vllm" imports the module calc.engines.vllm
                    yield f"{base}.{alias.name}", child.lineno, top
            else:
                inner = top and not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                yield from walk(child, inner)

    yield from walk(tree, True)


def layer(module: str) -> int:
    if module == "calc" or module.startswith("calc."):
        return 0
    if module in ("bot.parser", "bot.errors") or module.startswith("bot.parser."):
        return 1
    if module.startswith(VIEW):
        return 3
    if module.startswith(APP) or module == "bot":
        return 4
    return 2


def violations() -> list[str]:
    modules = {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}
    found: list[str] = []
    graph: dict[str, set[str]] = {m: set() for m in modules}
    names = architecture_names()
    for module, path in modules.items():
        where = path.relative_to(ROOT)
        found += unexplained_local_imports(path.read_text(encoding="utf-8"), str(where))
        if module.startswith("calc") and not module.startswith("calc.families"):
            found += architecture_name_uses(path.read_text(encoding="utf-8"), str(where), names)
        for imported, line, _top in imports(path):
            if imported.split(".")[0] in PACKAGES:
                found.append(f"{where}:{line}: imports {imported}; the installed name is vramfit.{imported}")
            target = imported.removeprefix("vramfit.")
            if module.startswith("calc") and target.split(".")[0] in FORBIDDEN_IN_CALC:
                found.append(f"{where}:{line}: calc imports {target} (calc stays pure)")
            if module.startswith(DISCORD_FREE) and target.split(".")[0] == "discord":
                found.append(f"{where}:{line}: {module} imports {target} (terminal and JSON answers need no Discord)")
            if target not in modules:
                continue
            if layer(target) > layer(module) and module != "bot":
                above = f"{target} (layer {layer(target)})"
                found.append(f"{where}:{line}: {module} (layer {layer(module)}) imports {above}")
            if module.startswith("bot.sources") and target.startswith("bot.answering"):
                found.append(f"{where}:{line}: {module} imports {target} (sources raise bot.errors, answer nothing)")
            if module.startswith("bot.exts.") and target.startswith("bot.exts.") and target != module:
                found.append(f"{where}:{line}: the extension {module} imports the extension {target}")
            if module.startswith("calc.engines.") and (
                target.startswith(CALC_ABOVE_ENGINES)
                or (target.startswith("calc.engines.") and target not in ("calc.engines.profile", module))
            ):
                found.append(f"{where}:{line}: the engine profile {module} imports {target}")
            if target != module:  # function-local imports too: a cycle hidden in a function is still a cycle
                graph[module].add(target)
    found += [f"import cycle: {' → '.join(cycle)}" for cycle in cycles(graph)]
    return found


def architecture_names() -> frozenset[str]:
    """Every name a family answers to: llama.cpp architecture names and config.json model_types."""
    from vramfit.calc.families import BY_ARCH, BY_MODEL_TYPE  # the registry itself says which names are taken

    return frozenset(BY_ARCH) | frozenset(BY_MODEL_TYPE)


def architecture_name_uses(source: str, where: str, names: frozenset[str]) -> list[str]:
    """Strings in code (docstrings aside) that name an architecture: a switch on one (``arch == "qwen2"``, a set of
    them, a table keyed by them) belongs in that architecture's family module."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
        if id(node) not in docstrings
    ]
    return [
        f"{where}:{node.lineno}: names the architecture {node.value!r}; say it in its family (calc/families/)"
        for node in sorted(found, key=lambda node: (node.lineno, node.col_offset))
    ]


def unexplained_local_imports(source: str, where: str) -> list[str]:
    """vramfit imports inside a function with no comment on their line: the house imports at module top, and a part
    loaded lazily (heavy and optional: discord.py in ``python -m vramfit.bot``) says why where it is imported."""
    lines = source.splitlines()
    return [
        f"{where}:{node.lineno}: imports {name} inside a function; import it at module top, or say on the line why "
        "it loads lazily"
        for function in ast.walk(ast.parse(source))
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for name in ([node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names])
        if name.startswith("vramfit.") and "#" not in lines[node.lineno - 1]
    ]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle of imports that run, function-local ones included (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            connect(node)
    return components


def main() -> int:
    found = violations()
    for line in found:
        print(line)
    print(f"import layers: {len(found)} violation(s)")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
