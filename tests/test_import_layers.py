"""The import-layers contract (tests/import_layers.py) holds, and the checker itself finds what it should."""

from __future__ import annotations

import pytest

from tests.import_layers import (
    architecture_name_uses,
    architecture_names,
    cycles,
    layer,
    unexplained_local_imports,
    violations,
)


def test_the_tree_keeps_its_layers_and_has_no_cycles() -> None:
    assert violations() == []


@pytest.mark.parametrize(
    ("module", "expected"),
    [("calc.engines.vllm", 0), ("bot.parser.numbers", 1), ("bot.answering.service", 2), ("bot.storage.store", 2),
     ("bot.render.embed", 3), ("bot.ui.replies", 3), ("bot.exts.vram", 4), ("bot.cli", 4), ("bot.tree", 4)],
)  # fmt: skip
def test_layers(module: str, expected: int) -> None:
    assert layer(module) == expected


def test_cycles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_a_function_local_import_says_why() -> None:
    source = (
        "import vramfit.calc.kv\n"
        "def f():\n"
        "    from vramfit.calc.presets import load_catalog\n"
        "    from vramfit.bot.parser import parse  # the parser's tables: only text needs them\n"
        "    import vramfit.calc.gpu\n"
        "    from json import loads\n"
    )
    found = unexplained_local_imports(source, "m.py")
    assert [f.split(":")[1] for f in found] == ["3", "5"]
    assert "vramfit.calc.presets" in found[0] and "vramfit.calc.gpu" in found[1]


def test_a_switch_on_an_architecture_name_is_found() -> None:
    source = (
        '"""Mentions qwen2 and "llama" in the docstring, which is fine."""\n'
        'def f(arch):\n'
        '    """A docstring naming "gemma3" alone."""\n'
        '    if arch.arch == "qwen2":\n'
        '        return 1\n'
        '    return arch.arch in ("gemma", "mixtral", "llama.cpp")\n'
        '_TIED = frozenset({"lfm2"})\n'
    )
    found = architecture_name_uses(source, "calc/kv.py", architecture_names())
    assert [f.split(":")[1] for f in found] == ["4", "6", "6", "7"]
    assert "'qwen2'" in found[0] and "'gemma'" in found[1] and "'mixtral'" in found[2] and "'lfm2'" in found[3]


def test_the_names_are_the_registry_s() -> None:
    names = architecture_names()
    assert {"llama", "qwen35moe", "nemotron_h_moe", "glm-dsa", "mixtral", "kimi_k25"} <= names
    assert "llama.cpp" not in names and "falcon" not in names
