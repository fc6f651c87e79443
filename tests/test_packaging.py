"""What a user meets when installing: one import name, the bot extra missing, and the test data in the repository."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.data.sync import sync
from tests.groundtruth import DATA

ROOT = Path(__file__).resolve().parents[1]
# What `pip install vramfit` (no extras) brings: the core dependencies and what they import.
CORE = (
    "pydantic", "pydantic_core", "annotated_types", "typing_extensions", "typing_inspection", "babel", "rapidfuzz",
    "shtab",
)  # fmt: skip


def _core_only_path(tmp_path: Path) -> Path:
    """A folder holding links to the core dependencies only, as an install without the bot extra has them."""
    site = tmp_path / "site"
    site.mkdir()
    for name in CORE:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue  # an optional transitive module this pydantic release does without
        origin = Path(spec.origin)
        source = origin.parent if origin.name == "__init__.py" else origin
        (site / source.name).symlink_to(source, target_is_directory=source.is_dir())
    (site / "vramfit").mkdir()  # the project itself, laid out as the wheel installs it
    for folder in ("calc", "bot", "presets", "locales"):
        (site / "vramfit" / folder).symlink_to(ROOT / folder, target_is_directory=True)
    return site


@pytest.mark.parametrize(
    ("lang_env", "expected"), [("en_US.UTF-8", "needs the bot extra"), ("ko_KR.UTF-8", "필요해요")]
)
def test_vram_bot_without_the_bot_extra_says_what_to_install(tmp_path: Path, lang_env: str, expected: str) -> None:
    site = _core_only_path(tmp_path)
    code = (
        f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(site)!r}]; from bot.__main__ import main; sys.exit(main([]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHON"))} | {"LANG": lang_env}
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert expected in lines[0]
    assert 'pip install "vramfit[bot]"' in lines[0]
    assert "discord" in lines[0]


def test_the_ground_truth_is_in_the_repository() -> None:
    for rel, rows in [
        ("groundtruth/llamacpp_cpu.jsonl", 112),
        ("groundtruth/measured.jsonl", 80),
        ("groundtruth/speed.jsonl", 128),
    ]:
        lines = [line for line in (DATA / rel).read_text(encoding="utf-8").splitlines() if line.strip()]
        assert len(lines) >= rows, rel
    measured = [json.loads(line) for line in (DATA / "groundtruth/measured.jsonl").read_text().splitlines()]
    assert all(row["source"].startswith("https://") and row["quote"] for row in measured)


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_sync_appends_only_the_rows_the_copy_lacks(tmp_path: Path) -> None:
    newer, copy = tmp_path / "newer", tmp_path / "copy"
    _write_jsonl(newer / "groundtruth/measured.jsonl", [{"id": "a", "kv_mib": 1}, {"id": "b", "kv_mib": 2}])
    _write_jsonl(copy / "groundtruth/measured.jsonl", [{"id": "a", "kv_mib": 99}])  # kept as it is, never rewritten
    _write_jsonl(newer / "groundtruth/llamacpp_cpu.jsonl", [{"n_ctx": 512}, {"n_ctx": 1024}])
    _write_jsonl(copy / "groundtruth/llamacpp_cpu.jsonl", [{"n_ctx": 512}])
    (newer / "groundtruth/architectures.json").write_text(json.dumps({"models": {"x": {}, "y": {}}}))
    (copy / "groundtruth/architectures.json").write_text(json.dumps({"_about": "kept", "models": {"x": {"k": 1}}}))

    added = sync(newer, copy)

    assert added == {
        "groundtruth/measured.jsonl": 1,
        "groundtruth/llamacpp_cpu.jsonl": 1,
        "groundtruth/architectures.json": 1,
    }
    rows = [json.loads(x) for x in (copy / "groundtruth/measured.jsonl").read_text().splitlines()]
    assert rows == [{"id": "a", "kv_mib": 99}, {"id": "b", "kv_mib": 2}]
    arch = json.loads((copy / "groundtruth/architectures.json").read_text())
    assert arch == {"_about": "kept", "models": {"x": {"k": 1}, "y": {}}}
    assert sync(newer, copy)["groundtruth/measured.jsonl"] == 0  # a second run adds nothing


def test_the_distribution_installs_under_one_import_name() -> None:
    import tomllib

    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert all(name.startswith("vramfit.") for name in setuptools["packages"])
    on_disk = {
        "vramfit." + ".".join(p.parent.relative_to(ROOT).parts)
        for folder in ("calc", "bot", "presets", "locales")
        for p in (ROOT / folder).rglob("__init__.py")
    }
    on_disk |= {  # the catalogs' folders ship as packages of data (listed, so the build warns of nothing)
        "vramfit.locales." + ".".join(p.relative_to(ROOT / "locales").parts)
        for p in (ROOT / "locales").glob("*/LC_MESSAGES")
    }
    assert on_disk == set(setuptools["packages"])  # every package of the tree ships, and nothing else
