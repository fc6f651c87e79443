"""Safetensors repos on the Hub: the real huggingface_hub client (list_repo_tree, hf_hub_download for config.json,
get_safetensors_metadata for the headers) against the fake Hub on 127.0.0.1, with safetensors files written in the
test (tests/fake_hub/safetensors.py): the parameters and bytes read remotely are those of the tensors written."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bot.cli_json import run_json
from tests.calc.test_gguf import TINY_LLAMA
from tests.fake_hub import FakeHub, Repo, use_hub
from tests.fake_hub.safetensors import Tensor, llama_tensors, nbytes, safetensors_file, shard
from vramfit.bot.cli import run
from vramfit.bot.sources.references import find_reference

CONFIG: dict[str, Any] = {**TINY_LLAMA, "architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16"}
FP8 = {**CONFIG, "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"}}
AWQ = {**CONFIG, "torch_dtype": "float16",
       "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm"}}  # fmt: skip
COMMIT12 = "a1b2c3d4e5f6"  # the fake Hub's commit, as the source link shows it
ROTARY = 4096 * 64 * 2  # vLLM's cos/sin cache: max positions × head dim × 2 bytes


def _by_hand_params(c: dict[str, Any]) -> int:
    """The tiny Llama's weights counted from its config: embeddings and head, per layer two norms and seven
    matrices, the final norm (what every form of the checkpoint holds, however it is packed)."""
    h, ff, vocab, heads, kv = (c["hidden_size"], c["intermediate_size"], c["vocab_size"], c["num_attention_heads"],
                               c["num_key_value_heads"])  # fmt: skip
    head_dim = h // heads
    per_layer = 2 * h + 2 * heads * head_dim * h + 2 * kv * head_dim * h + 3 * ff * h
    return 2 * vocab * h + c["num_hidden_layers"] * per_layer + h


def _by_hand_bytes(tensors: list[Tensor]) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, dtype, shape in tensors:
        out[dtype] = out.get(dtype, 0) + nbytes(dtype, shape)
    return out


TENSORS = {"bf16": llama_tensors(CONFIG), "fp8": llama_tensors(CONFIG, "fp8"), "awq": llama_tensors(CONFIG, "awq")}
REPOS = {"bf16": "tiny-org/Tiny-Llama", "fp8": "tiny-org/Tiny-Llama-FP8", "awq": "tiny-org/Tiny-Llama-AWQ"}


def _config(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode()


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    import huggingface_hub.constants

    weights = safetensors_file(TENSORS["bf16"])
    repos = {
        REPOS["bf16"]: Repo(files={**shard(TENSORS["bf16"], 2), "config.json": _config(CONFIG), "README.md": b"hi"}),
        REPOS["fp8"]: Repo(files={"model.safetensors": safetensors_file(TENSORS["fp8"]), "config.json": _config(FP8)}),
        REPOS["awq"]: Repo(files={**shard(TENSORS["awq"], 3), "config.json": _config(AWQ)}),
        "tiny-org/Gated-Llama": Repo(files={"model.safetensors": weights, "config.json": _config(CONFIG)}, gated=True),
        "tiny-org/No-Config": Repo(files={"model.safetensors": weights}),
        "tiny-org/Only-Readme": Repo(files={"README.md": b"weights elsewhere"}),
        "tiny-org/Made-Up": Repo(files={"model.safetensors": weights, "config.json": b'{"model_type": "madeup"}'}),
        "tiny-org/Elsewhere-Llama": Repo(
            files={"model.safetensors": weights, "config.json": _config(CONFIG)},
            redirect_to="http://storage.example.net",
        ),
    }
    with FakeHub(repos) as server:
        use_hub(monkeypatch, server.url, tmp_path / "cache", deadline_seconds="3")
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf"))  # config.json's copy
        yield server


@pytest.mark.parametrize(("form", "quant"), [("bf16", "BF16"), ("fp8", "FP8"), ("awq", "INT4")])
def test_params_and_bytes_from_the_headers_are_those_of_the_tensors_written(
    hub: FakeHub, form: str, quant: str
) -> None:
    data = run_json("--hf", REPOS[form], "--engine", "vllm")
    checkpoint = data["request"]["model"]["checkpoint"]
    assert checkpoint["params"] == _by_hand_params(CONFIG) == data["request"]["model"]["params"]
    assert checkpoint["dtype_bytes"] == _by_hand_bytes(TENSORS[form])
    assert checkpoint["tensor_bytes"] == sum(_by_hand_bytes(TENSORS[form]).values())
    assert checkpoint["tensors"] == len(TENSORS[form])
    assert data["request"]["quant"] == quant == checkpoint["file_type"]  # vLLM runs the checkpoint as it is
    assert data["estimate"]["weights_bytes"] == checkpoint["tensor_bytes"] + ROTARY
    assert data["request"]["model"]["source"] == f"https://huggingface.co/{REPOS[form]}/tree/{COMMIT12}"
    # Only the headers were read: ranged reads of the weight files, a small part of them.
    reads = [r for r in hub.log if r.method == "GET" and r.path.startswith("/storage/") and ".safetensors" in r.path]
    weights = [r for r in reads if r.path.endswith(".safetensors")]
    assert weights and all(r.range.startswith("bytes=") for r in weights)
    assert sum(r.bytes_sent for r in weights) < checkpoint["tensor_bytes"] // 4


def test_awq_counts_eight_weights_per_packed_int32_and_no_scales(hub: FakeHub) -> None:
    dtype_params = run_json("--hf", REPOS["awq"], "--engine", "vllm")["request"]["model"]["checkpoint"]["dtype_params"]
    qweights = sum(nbytes(d, s) // 4 for n, d, s in TENSORS["awq"] if n.endswith(".qweight"))
    assert dtype_params["I32"] == 8 * qweights  # qzeros are I32 too, and no weights
    assert dtype_params["F16"] == 0  # the scales


def test_the_vllm_answer_for_an_fp8_repo_holds_the_checkpoints_bytes(hub: FakeHub) -> None:
    from vramfit.calc.checkpoints import checkpoint_weights
    from vramfit.calc.file_types import FileType
    from vramfit.calc.hf_config import from_hf_config

    data = run_json("--engine", "vllm", f"{REPOS['fp8']} on an h100")
    measured = sum(_by_hand_bytes(TENSORS["fp8"]).values())
    assert data["request"]["quant"] == "FP8" and data["request"]["engine"] == "vllm"
    assert data["estimate"]["weights_bytes"] == measured + ROTARY
    # The architecture alone would size per-channel scales; this checkpoint has one scale per matrix.
    assert checkpoint_weights(from_hf_config(FP8), FileType.FP8).tensor_bytes != measured + ROTARY
    assert run_json(f"{REPOS['fp8']} on an h100 with vllm")["estimate"] == data["estimate"]  # the engine in words
    out = io.StringIO()
    assert run(["--engine", "vllm", f"{REPOS['fp8']} on an h100"], out) == 0
    assert f"vllm serve {REPOS['fp8']} --max-model-len" in out.getvalue()
    assert "--quantization" not in out.getvalue()  # the checkpoint's config.json says FP8 itself


def test_llama_cpp_on_a_safetensors_repo_sizes_the_gguf_its_quantizer_would_make(hub: FakeHub, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG))
    remote = run_json(f"{REPOS['bf16']} 8k 3060")
    local = run_json("--config", str(config), "--context", "8192", "--gpu", "3060")
    assert remote["request"]["quant"] == "Q4_K_M" and remote["request"]["engine"] == "llama.cpp"
    assert remote["estimate"] == local["estimate"]
    assert remote["request"]["model"]["checkpoint"]["file_type"] == "BF16"
    out = io.StringIO()
    assert run([f"{REPOS['bf16']} 8k 3060"], out) == 0
    assert "llama-server -m Tiny-Llama-Q4_K_M.gguf" in out.getvalue()
    assert run_json(f"https://huggingface.co/{REPOS['bf16']} Q8_0 8k 3060")["request"]["quant"] == "Q8_0"  # a link


def test_korean_question_with_a_safetensors_repo(hub: FakeHub) -> None:
    out = io.StringIO()
    assert run([f"{REPOS['bf16']}에서 8k 3060에서 돌아가?"], out) == 0
    assert "가중치" in out.getvalue() and "Traceback" not in out.getvalue()


@pytest.mark.parametrize(
    ("repo", "code", "english", "korean"),
    [
        ("tiny-org/Gated-Llama", "remote_gated", "HF_TOKEN", "접근 권한"),
        ("tiny-org/Missing-Llama-8B", "remote_not_found", "couldn't find", "찾지 못했어요"),
        ("tiny-org/No-Config", "remote_no_config", "has no config.json", "config.json이 없어서"),
        ("tiny-org/Only-Readme", "remote_no_weights", "neither GGUF files nor", "GGUF 파일도"),
        ("tiny-org/Made-Up", "unsupported_architecture", "madeup", "madeup"),
        ("tiny-org/Elsewhere-Llama", "remote_host_refused", "Hugging Face only", "허깅페이스에서만"),
    ],
)
def test_errors_are_sentences_in_both_languages(hub: FakeHub, repo: str, code: str, english: str, korean: str) -> None:
    assert run_json(repo, status=2)["error"]["code"] == code
    for lang, words in (("en", english), ("ko", korean)):
        out = io.StringIO()
        assert run([f"{repo} 8k 3060", "--lang", lang], out) == 2
        assert words in out.getvalue() and "Traceback" not in out.getvalue(), out.getvalue()
    assert not any("example" in r.path for r in hub.log)


def test_a_second_question_answers_from_the_cache_without_the_hub(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = run_json("--engine", "vllm", f"{REPOS['fp8']} on an h100")
    requests = len(hub.log)
    assert requests > 0
    again = run_json(f"{REPOS['fp8']} 32k 4090 with vllm")  # another context and GPU: the same repo
    assert len(hub.log) == requests
    assert again["estimate"]["weights_bytes"] == first["estimate"]["weights_bytes"]
    assert run_json(f"{REPOS['fp8']} 8k 3060")["request"]["quant"] == "Q4_K_M"  # llama.cpp, from the same cache
    monkeypatch.setenv("VRAMFIT_OFFLINE", "1")
    assert run_json("--engine", "vllm", f"{REPOS['fp8']} on an h100")["estimate"] == first["estimate"]
    assert run_json(REPOS["awq"], status=2)["error"]["code"] == "remote_offline"  # never read: says so
    assert len(hub.log) == requests


def test_a_url_to_another_host_is_refused_beside_a_bare_repo(hub: FakeHub) -> None:
    error = run_json(f"{REPOS['bf16']} from https://models.example.org/tiny.safetensors 3060", status=2)["error"]
    assert error["code"] == "remote_host_refused"
    assert hub.log == []  # nothing fetched at all


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_bot_answers_a_safetensors_repo_and_then_from_the_cache(hub: FakeHub, lang: str) -> None:
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.bot.render.embed import render_card

    question = f"{REPOS['fp8']} on an h100 with vllm" + ("" if lang == "en" else "에서 돌아가?")
    card = CalcBackend().answer(question, None, {})
    expected = sum(_by_hand_bytes(TENSORS["fp8"]).values()) + ROTARY
    assert card.estimate.weights_bytes == expected  # type: ignore[union-attr]
    requests = len(hub.log)
    description = render_card(card, lang).description or ""  # type: ignore[arg-type]
    link = f"[{REPOS['fp8']}](https://huggingface.co/{REPOS['fp8']}/tree/{COMMIT12})"
    words = "safetensors headers of " if lang == "en" else ""
    assert words + link in description
    assert ("config.json과 safetensors 헤더" in description) == (lang == "ko")
    again = CalcBackend().answer(f"{REPOS['fp8']} 8k on 2x h100 with vllm", None, {})
    assert again.estimate.weights_bytes == expected  # type: ignore[union-attr]
    assert len(hub.log) == requests


@pytest.mark.parametrize(
    ("text", "repo"),
    [
        ("Qwen/Qwen3-8B 32k 4090", "Qwen/Qwen3-8B"),
        ("will openai/gpt-oss-20b run on an h100?", "openai/gpt-oss-20b"),
        ("Qwen/Qwen3-8B에서 32k", "Qwen/Qwen3-8B"),
        ("deepseek-ai/DeepSeek-V3.1, 32k", "deepseek-ai/DeepSeek-V3.1"),
        ("01-ai/Yi-34B on 2x 3090", "01-ai/Yi-34B"),
        ("microsoft/phi-4?", "microsoft/phi-4"),
        ("tokens/s on a 3090", None),
        ("CPU/GPU split for llama 3 8b", None),
        ("3090/4090", None),
        ("qwen3-8b/14b on a 3090", None),
        ("q4/q8 for llama3", None),
        ("fp8/int8 on vllm", None),
        ("rtx3090/rtx4090", None),
        ("someone/tiny-llama:3b 4090", None),  # an Ollama tag in another namespace
        ("library/qwen3:30b", None),
    ],
)
def test_bare_repos_are_found_and_slashed_words_are_not(text: str, repo: str | None) -> None:
    found = find_reference(text)
    assert (found[0].repo if found else None) == repo


def test_a_repo_a_preset_lists_as_its_alias_is_the_presets(hub: FakeHub) -> None:
    """ "openai/gpt-oss-20b" is an alias of the gpt-oss-20b preset: answered from the catalog, with no request."""
    from vramfit.bot.answering.service import CalcBackend

    assert run_json("openai/gpt-oss-20b 32k 4090")["request"]["model"]["id"] == "gpt-oss-20b"
    card = CalcBackend().answer("openai/gpt-oss-20b 32k 4090", None, {})
    assert card.model.id == "gpt-oss-20b"  # type: ignore[union-attr]
    assert hub.log == []
