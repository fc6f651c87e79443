"""The parser's public pieces: number reading (style-ecosystem.md E.1), ParsedQuery.to_request, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from vramfit.bot.parser import (
    ASSUMED_KEYS,
    ParsedQuery,
    canonical_quant,
    no_model_error,
    parse,
    parse_context,
    parse_count,
    parse_gpu_spec,
    parse_korean_number,
    parse_quantity,
)
from vramfit.bot.parser.numbers import rewrite_numbers
from vramfit.calc.errors import BadNumberError, UnknownGpuError, UnknownModelError, UnknownQuantError
from vramfit.calc.gpu import GIB
from vramfit.calc.presets import Catalog, ModelPreset, load_catalog
from vramfit.calc.request import MAX_CONTEXT, Engine, KvType, Request


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("32k", 32768),
        ("128K", 131072),
        ("1M", 1048576),
        ("1k", 1024),
        ("20k", 20000),
        ("100k", 100000),
        ("1.5k", 1500),
        ("8192", 8192),
        ("4096토큰", 4096),
        ("20000 tokens", 20000),
        ("8천", 8000),
        ("8천 토큰", 8000),
        ("3만 2천", 32000),
        ("3만2천", 32000),
        ("12만 8천", 128000),
        ("삼만이천", 32000),
        ("이천사십팔", 2048),
        ("1.5만", 15000),
    ],
)
def test_parse_context(text: str, tokens: int) -> None:
    assert parse_context(text) == tokens


@pytest.mark.parametrize("text", ["", "abc", "k", "천천히", "9" * 40])
def test_parse_context_rejects(text: str) -> None:
    with pytest.raises(BadNumberError):
        parse_context(text)


def test_korean_numbers() -> None:
    assert parse_korean_number("12억") == 1_200_000_000
    assert parse_korean_number("3만 5000") == 35000
    with pytest.raises(BadNumberError):
        parse_korean_number("사용자")


@pytest.mark.parametrize(
    ("text", "count"), [("2", 2), ("두", 2), ("둘", 2), ("열", 10), ("열두", 12), ("스무", 20), ("two", 2), ("dual", 2)]
)
def test_parse_count(text: str, count: int) -> None:
    assert parse_count(text) == count


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("4090 두 장", "4090 2 장"),
        ("사용자 열 명", "사용자 10 명"),
        ("3만 2천 토큰", "32000 토큰"),
        ("8천이면", "8000이면"),  # the particle 이 is not the digit 2
        ("이만큼", "이만큼"),  # a Sino-Korean span needs a counting word after it
        ("천천히", "천천히"),
        ("세대", "세대"),  # "generation", not three of something
        ("two 3090s", "2 3090s"),
        ("dual 4090", "2x  4090"),
    ],
)
def test_rewrite_numbers(text: str, rewritten: str) -> None:
    assert rewrite_numbers(text) == rewritten


def test_to_request_defaults() -> None:
    parsed = parse("llama 3.1 8b on a 3060")
    request = parsed.to_request()
    assert isinstance(request, Request)
    assert request.model.id == "llama-3.1-8b"
    assert request.model.architecture.n_layers == 32
    assert (request.quant, request.context, request.users) == ("Q4_K_M", 8192, 1)
    assert (request.kv_cache, request.engine, request.flash_attn) == (KvType.F16, Engine.LLAMA_CPP, None)
    assert request.gpus[0].gpu.id == "rtx-3060-12gb"
    assert request.gpus[0].gpu.memory_bytes == 12 * GIB
    assert parsed.assumed == ("quant", "context", "users", "kv_cache", "engine", "gpu_variant", "ram", "ram_speed")
    assert set(parsed.assumed) <= set(ASSUMED_KEYS)


def test_to_request_reads_and_overrides() -> None:
    parsed = parse("라마3.1 8b q8 32k 사용자 4명 kv q8_0 vllm 4090 두 장")  # q8 stays GGUF Q8_0 under vLLM
    request = parsed.to_request()
    assert (request.quant, request.context, request.users, request.kv_cache) == ("Q8_0", 32768, 4, KvType.Q8_0)
    assert request.engine == Engine.VLLM
    assert (request.gpus[0].gpu.id, request.gpus[0].count) == ("rtx-4090", 2)
    flags = parsed.to_request(quant="q5_k_m", context=4096, model="qwen2.5-7b", users=None)
    assert (flags.quant, flags.context, flags.model.id, flags.users) == ("Q5_K_M", 4096, "qwen2.5-7b", 4)
    with pytest.raises(UnknownQuantError):
        parsed.to_request(quant="q9_z")
    with pytest.raises(UnknownModelError):
        parsed.to_request(model="no-such-model")
    with pytest.raises(BadNumberError):
        parsed.to_request(context=MAX_CONTEXT + 1)
    with pytest.raises(TypeError):
        parsed.to_request(colour="blue")


def test_compare_request() -> None:
    parsed = parse("llama 3.1 8b vs qwen2.5 7b 16k on a 4090")
    assert parsed.intent == "compare"
    assert parsed.to_request().model.id == "llama-3.1-8b"
    second = parsed.compare_request()
    assert (second.model.id, second.context) == ("qwen2.5-7b", 16384)


def test_no_model_named() -> None:
    parsed = parse("will it run on my 3060?")
    assert parsed.model is None
    with pytest.raises(UnknownModelError) as info:
        parsed.to_request()
    assert info.value.code == "unknown_model"
    assert 1 <= len(info.value.suggestions) <= 5
    assert info.value.details["example"]
    ko = no_model_error("ko")
    assert "라마" in str(ko.details["example"])


def test_errors_carry_codes_and_suggestions() -> None:
    with pytest.raises(UnknownModelError) as model_info:
        parse("llama 3.1 on a 3060")
    assert model_info.value.suggestions[:3] == ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b"]
    with pytest.raises(UnknownGpuError) as gpu_info:
        parse("llama 3.1 8b on a 4060 ti 12gb")
    assert set(gpu_info.value.suggestions) == {"rtx-4060-ti-8gb", "rtx-4060-ti-16gb"}
    with pytest.raises(BadNumberError):
        parse("llama 3.1 8b 20M context")  # over calc.request.MAX_CONTEXT


def test_apple_memory_not_in_catalog_is_built() -> None:
    parsed = parse("m2 max 48gb llama 3.1 70b")
    gpu = parsed.gpus[0].gpu
    assert gpu.id == "apple-m2-max-48gb"
    assert gpu.memory_bytes == 48 * GIB
    assert gpu.vendor == "apple"


def test_canonical_quant() -> None:
    assert canonical_quant("q4") == "Q4_K_M"
    assert canonical_quant("Q4_K") == "Q4_K_M"
    assert canonical_quant("fp16") == "F16"
    assert canonical_quant("awq") == "INT4"
    assert canonical_quant("int4", Engine.VLLM) == "INT4"
    assert canonical_quant("int4") == "Q4_K_M"


def test_parsed_query_is_frozen_and_dumps() -> None:
    parsed = parse("qwen3 8b 32k on 2x 3090")
    with pytest.raises(ValueError):
        parsed.context = 1  # type: ignore[misc]
    dumped = parsed.model_dump(mode="json")
    assert dumped["gpus"][0]["count"] == 2
    assert ParsedQuery.model_validate(dumped).gpus == parsed.gpus


def test_small_custom_catalog() -> None:
    real = load_catalog()
    tiny = Catalog(
        [ModelPreset(**{**real.models["llama-3.1-8b"].model_dump(), "aliases": ("my llama",), "ollama_quants": {}})],
        [real.gpus["rtx-3060-12gb"], real.gpus["rtx-3060-8gb"]],
    )
    parsed = parse("my llama 32k on a 3060 8gb", tiny)
    assert parsed.model == "llama-3.1-8b"
    assert parsed.gpus[0].gpu.id == "rtx-3060-8gb"
    assert parsed.to_request().model.id == "llama-3.1-8b"  # the catalog parse() used
    with pytest.raises(UnknownModelError) as unknown:  # a family this catalog lacks is no model name here: said so
        parse("qwen 2.5 7b", tiny)
    assert unknown.value.details["reason"] == "not_in_catalog" and unknown.value.suggestions == []


def test_every_catalog_name_reads_back() -> None:
    """Each preset's id, name and aliases, typed alone, parse to that preset (catches alias collisions in the data)."""
    catalog = load_catalog()
    wrong: list[str] = []
    for model in catalog.models.values():
        for text in (model.id, model.name, *model.aliases):
            if parse(text, catalog).model != model.id:
                wrong.append(f"model {text!r}")
    for gpu in catalog.gpus.values():
        for text in (gpu.id, gpu.name, *gpu.aliases):
            if [c.gpu.id for c in parse(text, catalog).gpus] != [gpu.id]:
                wrong.append(f"gpu {text!r}")
    assert not wrong


@pytest.mark.parametrize(
    ("text", "value"),
    [("32k", 32768), ("8192", 8192), ("8", 8), ("3만 2천", 32000), ("4096토큰", 4096), ("두", 2), ("1M", 1048576)],
)
def test_parse_quantity(text: str, value: int) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "lots", "k", "-3"])
def test_parse_quantity_none(text: str) -> None:
    assert parse_quantity(text) is None


@pytest.mark.parametrize(
    ("spec", "gpu_id", "count"),
    [
        ("rtx-3060-12gb", "rtx-3060-12gb", 1),
        ("3060", "rtx-3060-12gb", 1),
        ("3060 8gb", "rtx-3060-8gb", 1),
        ("2x 3090", "rtx-3090", 2),
        ("4090 두 장", "rtx-4090", 2),
        ("m2 max 64gb", "apple-m2-max-64gb", 1),
        ("24gb", "generic-24gb", 1),
        ("H100 x8", "h100-sxm", 8),
    ],
)
def test_parse_gpu_spec(spec: str, gpu_id: str, count: int) -> None:
    choice = parse_gpu_spec(spec)
    assert (choice.gpu.id, choice.count) == (gpu_id, count)


@pytest.mark.parametrize("spec", ["", "banana", "rtx 4050", "3060 16gb"])
def test_parse_gpu_spec_unknown(spec: str) -> None:
    with pytest.raises(UnknownGpuError):
        parse_gpu_spec(spec)


def test_the_name_index_is_kept_in_the_cache_folder_and_rebuilt_when_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vramfit.bot.parser import index as index_module
    from vramfit.calc.presets import Catalog, load_catalog

    monkeypatch.setenv("VRAMFIT_CACHE_DIR", str(tmp_path))
    shipped = load_catalog()
    built = index_module.build_index(shipped)
    assert index_module._stored_index(shipped) == built  # built, and written
    (stored,) = tmp_path.glob("parser-index-*.json")
    assert index_module._stored_index(shipped) == built  # read back
    stored.write_bytes(b"not an index")
    assert index_module._stored_index(shipped) == built  # a damaged file is rebuilt
    custom = Catalog(list(shipped.models.values())[:2], list(shipped.gpus.values())[:2])
    assert custom.fingerprint == ""
    assert index_module._stored_index(custom).model_keys == index_module.build_index(custom).model_keys
    assert len(list(tmp_path.glob("parser-index-*.json"))) == 1  # a catalog built in code is never stored


GIB_RAM = 1 << 30


@pytest.mark.parametrize(
    ("question", "ram_gb", "gpu"),
    [("Can I run Llama 3.3 70B on my 4090 with 64GB RAM?", 64, "rtx-4090"),
     ("gpt-oss-120b on a 5090 with 64GB of RAM", 64, "rtx-5090"),
     ("라마3 70b 4090 램 64기가", 64, "rtx-4090"),
     ("4090에 램 64GB면 gpt-oss 120b 돌아가?", 64, "rtx-4090"),
     ("qwen3 235b 3090 ddr5 128gb", 128, "rtx-3090"),
     ("32gb ram 8gb vram llama 3 8b", 32, "generic-8gb"),  # the "ram" belongs to the size before it
     ("qwen3 30b a3b 16gb vram 32gb system memory", 32, "generic-16gb")],
)  # fmt: skip
def test_system_ram_is_read_and_never_taken_for_a_gpu(question: str, ram_gb: int, gpu: str) -> None:
    parsed = parse(question)
    assert parsed.ram_bytes == ram_gb * GIB_RAM
    assert [c.gpu.id for c in parsed.gpus] == [gpu]
    assert "ram" not in parsed.assumed and parsed.unparsed == ()
    assert parsed.to_request().ram_bytes == ram_gb * GIB_RAM


def test_an_absurd_ram_size_is_a_bad_number() -> None:
    with pytest.raises(BadNumberError):
        parse("llama 3 8b 4090 with 99999999gb ram")


@pytest.mark.parametrize(
    ("question", "ram_gb", "speed"),
    [("gpt-oss-120b on a 5090 with 64gb ddr4", 64, ("ddr4", 3200, 2)),  # the kind alone: its desktop rate
     ("gpt-oss-120b on a 5090 with 64gb ddr5 ram", 64, ("ddr5", 5600, 2)),
     ("qwen3 235b 3090 ddr5 128gb", 128, ("ddr5", 5600, 2)),  # "ddr5" still names the size's RAM
     ("gpt-oss-120b on a 5090, 64GB DDR4-3600 dual channel", 64, ("ddr4", 3600, 2)),
     ("qwen3 235b on a 3090 with 256gb ddr5 6400mt/s 8 channel", 256, ("ddr5", 6400, 8)),
     ("gpt-oss 120b 5090 램 64기가 ddr4 듀얼채널", 64, ("ddr4", 3200, 2)),
     ("큐웬3 235b 3090 램 128기가 ddr5-6000 4채널", 128, ("ddr5", 6000, 4))],
)  # fmt: skip
def test_the_ram_kind_rate_and_channels_are_read(question: str, ram_gb: int, speed: tuple[str, int, int]) -> None:
    parsed = parse(question)
    assert parsed.ram_bytes == ram_gb * GIB_RAM
    assert parsed.ram_speed is not None
    assert (parsed.ram_speed.kind, parsed.ram_speed.mts, parsed.ram_speed.channels) == speed
    assert "ram_speed" not in parsed.assumed and parsed.unparsed == ()
    assert parsed.to_request().ram_speed == parsed.ram_speed


def test_a_channel_count_alone_takes_ddr5_at_its_desktop_rate_and_says_so() -> None:
    parsed = parse("gpt-oss-120b on a 5090 with 64gb ram, quad channel")
    assert parsed.ram_speed is not None and (parsed.ram_speed.kind, parsed.ram_speed.channels) == ("ddr5", 4)
    assert "ram_speed" in parsed.assumed and parsed.unparsed == ()
    assert "ram_speed" in parse("gpt-oss-120b on a 5090 with 64gb ram").assumed


@pytest.mark.parametrize("question", ["gpt-oss-120b 5090 ddr4-9000", "gpt-oss-120b 5090 ddr5 64 channel"])
def test_a_ram_rate_or_channel_count_no_memory_runs_at_is_a_bad_number(question: str) -> None:
    with pytest.raises(BadNumberError):
        parse(question)


def test_models_past_the_two_compared_are_said_as_not_understood() -> None:
    parsed = parse("compare llama 3 8b vs llama 3 70b vs gemma 2 9b vs qwen2.5 7b on a 3090")
    assert (parsed.model, parsed.compare_model) == ("llama-3-8b", "llama-3-70b")
    assert parsed.unparsed == ("Gemma 2 9B", "Qwen2.5 7B") and parsed.gpus[0].gpu.id == "rtx-3090"
