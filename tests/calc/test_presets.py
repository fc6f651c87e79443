"""The shipped catalog: enough models and GPUs, each row sourced, ids and aliases unambiguous."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from vramfit.calc.gpu import GIB
from vramfit.calc.presets import load_catalog, normalize_key
from vramfit.calc.tensors import count_params

REQUIRED_MODELS = {
    # preset id → parameter count in billions as the model cards / llama.cpp print it
    "llama-3-8b": 8.03, "llama-3-70b": 70.55, "llama-3.1-8b": 8.03, "llama-3.1-70b": 70.55, "llama-3.1-405b": 405.85,
    "llama-3.2-1b": 1.24, "llama-3.2-3b": 3.21, "llama-3.3-70b": 70.55,
    "gemma-2-2b": 2.61, "gemma-2-9b": 9.24, "gemma-2-27b": 27.23,
    "qwen2.5-0.5b": 0.49, "qwen2.5-7b": 7.62, "qwen2.5-14b": 14.77, "qwen2.5-32b": 32.76, "qwen2.5-72b": 72.71,
    "qwen3-32b": 32.76, "qwen3-30b-a3b": 30.53, "qwen3-235b-a22b": 235.09,
    "mistral-7b-v0.3": 7.25, "mistral-nemo-12b": 12.25, "mixtral-8x7b": 46.70,
    "deepseek-v3": 671.03, "deepseek-r1": 671.03, "command-r-35b": 34.98, "phi-4": 14.66,
    # llama.cpp prints "model params = 1.026 T" for Kimi K2 (tests/data/groundtruth/architectures.json); DeepSeek
    # V3.1 has V3's architecture; the Qwen3 Coder model cards give 30.5B and 480B.
    "kimi-k2-instruct": 1026.0, "deepseek-v3.1": 671.03, "qwen3-coder-30b-a3b": 30.5, "qwen3-coder-480b-a35b": 480.0,
}  # fmt: skip


def test_catalog_sizes() -> None:
    catalog = load_catalog()
    assert len(catalog.models) >= 55
    assert len(catalog.gpus) >= 80


@pytest.mark.parametrize(("model_id", "params_b"), sorted(REQUIRED_MODELS.items()))
def test_parameter_counts_match_published(model_id: str, params_b: float) -> None:
    preset = load_catalog().models[model_id]
    assert count_params(preset.architecture) / 1e9 == pytest.approx(params_b, rel=0.01)


def test_every_row_has_a_source() -> None:
    catalog = load_catalog()
    for model in catalog.models.values():
        assert model.source.startswith("https://"), model.id
    for gpu in catalog.gpus.values():
        assert gpu.source.startswith("https://"), gpu.id
        assert gpu.bandwidth_gbs > 0, gpu.id


@pytest.mark.parametrize(
    ("gpu_id", "link"),
    [("rtx-5090", (5, 16)), ("rtx-5060-ti-16gb", (5, 8)), ("rtx-4090", (4, 16)), ("rtx-4060-ti-8gb", (4, 8)),
     ("rtx-3090", (4, 16)), ("rtx-2080", (3, 16)), ("h100-sxm", (5, 16)), ("a100-80gb", (4, 16)),
     ("rx-7900-xtx", (4, 16)), ("rx-9070-xt", (5, 16)), ("a40", (4, 16))],  # the A40 states none: assumed
)  # fmt: skip
def test_a_gpu_states_its_pcie_link_with_a_source_or_is_taken_as_4_0_x16(gpu_id: str, link: tuple[int, int]) -> None:
    import tomllib
    from importlib import resources

    rows = tomllib.loads(resources.files("vramfit.presets").joinpath("gpus.toml").read_text(encoding="utf-8"))["gpu"]
    for row in rows:  # a stated link is a whole one, with where it comes from
        if "pcie_gen" in row or "pcie_lanes" in row or "pcie_source" in row:
            assert row["pcie_gen"] in (3, 4, 5) and row["pcie_lanes"] in (8, 16), row["id"]
            assert row["pcie_source"].startswith("https://") and f"{row['pcie_gen']}" in row["pcie_source"], row["id"]
            assert row["segment"] not in ("apple", "unified", "laptop"), row["id"]
    gpu = load_catalog().gpus[gpu_id]
    assert gpu.pcie_link == link
    assert gpu.pcie_assumed is (gpu_id == "a40")


def test_aliases_are_unique() -> None:
    catalog = load_catalog()
    for rows in (
        [(m.id, (m.id, m.name, *m.aliases)) for m in catalog.models.values()],
        [(g.id, (g.id, g.name, *g.aliases)) for g in catalog.gpus.values()],
    ):
        owner: dict[str, str] = {}
        for row_id, keys in rows:
            for key in keys:
                norm = normalize_key(key)
                assert owner.setdefault(norm, row_id) == row_id, f"{key!r} names {owner[norm]} and {row_id}"


def test_gpu_families_have_one_default() -> None:
    catalog = load_catalog()
    families: dict[str, int] = {}
    for gpu in catalog.gpus.values():
        families[gpu.family] = families.get(gpu.family, 0) + int(gpu.default)
    assert all(count == 1 for count in families.values()), families


@pytest.mark.parametrize(
    ("alias", "gpu_id", "memory_gib"),
    [("3060", "rtx-3060-12gb", 12), ("3060 8gb", "rtx-3060-8gb", 8), ("4090", "rtx-4090", 24),
     ("1080 ti", "gtx-1080-ti", 11), ("a100 80gb", "a100-80gb", 80), ("7900 xtx", "rx-7900-xtx", 24)],
)  # fmt: skip
def test_gpu_aliases(alias: str, gpu_id: str, memory_gib: int) -> None:
    gpu = load_catalog().gpu(alias)
    assert (gpu.id, gpu.memory_bytes) == (gpu_id, memory_gib * GIB)


def test_parsed_presets_are_cached_under_the_toml_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tomllib
    from importlib import resources

    from vramfit.calc import presets

    monkeypatch.setenv("VRAMFIT_CACHE_DIR", str(tmp_path))
    expected = tomllib.loads(resources.files("vramfit.presets").joinpath("gpus.toml").read_text(encoding="utf-8"))
    digest = hashlib.sha256(resources.files("vramfit.presets").joinpath("gpus.toml").read_bytes()).hexdigest()
    assert presets._load_toml("gpus.toml") == (expected, digest)  # parsed, and written
    (cached,) = tmp_path.glob("gpus-*.json")
    assert cached.name == f"gpus-{digest[:20]}.json"
    cached.write_text('{"gpu": [{"id": "x"}]}')  # what the next run reads, whatever the TOML says
    assert presets._load_toml("gpus.toml") == ({"gpu": [{"id": "x"}]}, digest)
    for damaged in ("{not json", '{"gpu": []}', "[" * 3000):  # parsed afresh, the damaged file set aside
        cached.write_text(damaged)
        assert presets._load_toml("gpus.toml") == (expected, digest)
        assert (tmp_path / f"{cached.name}.bad").read_text() == damaged
    monkeypatch.setenv("VRAMFIT_CACHE_DIR", "")  # off
    assert presets._load_toml("gpus.toml") == (expected, digest)


@pytest.mark.parametrize(("name", "table"), [("models.toml", "model"), ("gpus.toml", "gpu")])
def test_ids_are_unique_in_the_files(name: str, table: str) -> None:
    import tomllib

    from vramfit.calc.presets import PRESETS_DIR

    ids = [row["id"] for row in tomllib.loads((PRESETS_DIR / name).read_text(encoding="utf-8"))[table]]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


# Cards without tensor or matrix units: llama.cpp runs their prompts on FP32 or DP4A paths, so they carry no FP16
# tensor figure and get no prompt speed (presets/gpus.toml, fp16_tflops).
NO_TENSOR_CORES = {
    "gtx-1050-ti", "gtx-1060-6gb", "gtx-1060-3gb", "gtx-1070", "gtx-1070-ti", "gtx-1080", "gtx-1080-ti",
    "gtx-1650", "gtx-1660", "gtx-1660-super", "gtx-1660-ti", "tesla-p40", "tesla-p100-16gb",
    "intel-iris-xe-16gb",  # Xe-LP: no XMX matrix engines
}  # fmt: skip


def test_every_gpu_with_tensor_units_carries_its_fp16_figure_with_the_page_that_gives_it() -> None:
    """Each figure names its page and shows where the number comes from: the number itself in the quote or in the
    arithmetic of a derived row, or the sparse figure the source halves (NVIDIA's datasheets print only that)."""
    import tomllib

    from vramfit.calc.presets import PRESETS_DIR

    rows = tomllib.loads((PRESETS_DIR / "gpus.toml").read_text(encoding="utf-8"))["gpu"]
    without = {row["id"] for row in rows if not row.get("fp16_tflops")}
    assert without == NO_TENSOR_CORES
    for row in rows:
        if row["id"] in NO_TENSOR_CORES:
            assert "fp16_tflops_source" not in row
            continue
        figure, source = float(row["fp16_tflops"]), str(row["fp16_tflops_source"])
        assert source.startswith("http"), row["id"]
        shown = {f"{figure:g}", f"{figure:.1f}", f"{figure:.2f}", f"{figure:,.1f}", f"{figure / 1000:g} PFLOPS"}
        assert any(text in source for text in shown) or "sparsity" in source or "halved" in source, row["id"]


@pytest.mark.parametrize(
    ("gpu_id", "others"),
    [("apple-m2-8gb", ["apple-m2-16gb", "apple-m2-24gb"]),  # "m2" alone: the default, sold in two more sizes
     ("rtx-3060-12gb", ["rtx-3060-8gb"]),
     ("apple-m2-16gb", []),  # a size someone names: not what a bare name means
     ("rtx-4090", [])],  # one size
)  # fmt: skip
def test_other_sizes_of_the_gpu_a_bare_name_means(gpu_id: str, others: list[str]) -> None:
    catalog = load_catalog()
    assert [g.id for g in catalog.other_sizes(catalog.gpus[gpu_id])] == others
