"""GLM-5, GLM-5.1 and GLM-5.2 end to end (glm_moe_dsa, llama.cpp's glm-dsa): DeepSeek V3.2's MLA latent cache plus
the DSA lightning indexer's keys (llama_kv_cache_dsa, one head of index_head_dim per token, K only), but only in the
layers whose indexer is full (GLM-5.2's indexer_types; every layer of GLM-5 and 5.1), and the NextN/MTP block in
the file but not loaded. Expected numbers are worked out here from the committed config.json copies and
llama.cpp's rules (src/models/glm-dsa.cpp, src/llama-model.cpp create_memory, src/llama-kv-cache-dsa.cpp at
0c1e57098)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.bot.cli_json import answer as ask
from tests.bot.cli_json import from_config
from tests.groundtruth import DATA, llamacpp_rows
from vramfit.bot.cli import run
from vramfit.calc.hf_config import from_hf_config

CONFIGS = DATA / "configs"
FILES = {"glm-5": "GLM-5.json", "glm-5.1": "GLM-5.1.json", "glm-5.2": "GLM-5.2.json"}


def _config(preset_id: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((CONFIGS / FILES[preset_id]).read_text(encoding="utf-8"))
    return config


def _full_indexer_layers(c: dict[str, Any]) -> int:
    """Layers with an indexer of their own: indexer_types' "full" entries, or all of them without the key."""
    kinds = c.get("indexer_types")
    return c["num_hidden_layers"] if kinds is None else kinds.count("full")


def _kv_by_hand(preset_id: str, context: int, users: int = 1) -> int:
    """Every trunk layer caches kv_lora_rank + qk_rope_head_dim latent values per token; the full-indexer layers
    also index_head_dim indexer keys; f16. The MTP block (num_nextn_predict_layers) gets no cells."""
    c = _config(preset_id)
    latent = c["num_hidden_layers"] * (c["kv_lora_rank"] + c["qk_rope_head_dim"])  # 78 × (512 + 64)
    indexer = _full_indexer_layers(c) * c["index_head_dim"]  # 78 (GLM-5) or 21 (GLM-5.2) × 128
    return context * users * (latent + indexer) * 2


def _params_by_hand(c: dict[str, Any]) -> int:
    """llama_model_n_params of the GGUF the converter writes (GlmMoeDsaModel on DeepseekV2Model): kv_b_proj split
    into attn_k_b (nope × kv_lora × heads) and attn_v_b (kv_lora × v_head × heads), the indexer in the full layers
    and the MTP block, first_k_dense_replace dense blocks, then routed experts, one shared expert, the router and its
    noaux_tc bias; the MTP block is a MoE block plus eh_proj, its own embeddings and head, and three norms."""
    e, heads, vocab = c["hidden_size"], c["num_attention_heads"], c["vocab_size"]
    q_lora, kv_lora = c["q_lora_rank"], c["kv_lora_rank"]
    nope, rope, v_head = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    attention = (
        2 * e  # attn_norm, ffn_norm
        + e * q_lora + q_lora + q_lora * heads * (nope + rope)  # q_a, q_a_norm, q_b
        + e * (kv_lora + rope) + kv_lora  # kv_a_mqa, kv_a_norm
        + nope * kv_lora * heads + kv_lora * v_head * heads  # k_b, v_b
        + heads * v_head * e  # attn_output
    )  # fmt: skip
    ih, idim = c["index_n_heads"], c["index_head_dim"]
    indexer = 2 * idim + e * ih + e * idim + q_lora * ih * idim  # k_norm weight+bias, proj, attn_k, attn_q_b
    dense = 3 * e * c["intermediate_size"]
    experts, width = c["n_routed_experts"], c["moe_intermediate_size"]
    moe = e * experts + experts + 3 * e * width * experts + 3 * e * width * c["n_shared_experts"]
    layers, lead = c["num_hidden_layers"], c["first_k_dense_replace"]
    total = lead * (attention + dense) + (layers - lead) * (attention + moe) + _full_indexer_layers(c) * indexer
    mtp = attention + indexer + moe + 2 * e * e + 2 * vocab * e + 3 * e  # eh_proj, embed_tokens + head, norms
    return total + c["num_nextn_predict_layers"] * mtp + 2 * vocab * e + e  # token_embd, output, output_norm


@pytest.mark.parametrize(
    ("question", "lang", "preset_id", "context"),
    [
        ("glm-5 32k on 8x h200", "en", "glm-5", 32768),
        ("지엘엠5 32k h200 8장에서 돌아가?", "ko", "glm-5", 32768),
        ("GLM 5.1 64k on 8x h200", "en", "glm-5.1", 65536),
        ("지엘엠 5.1 64k h200 8장에서 돌아가?", "ko", "glm-5.1", 65536),
        ("glm-5.2 128k on 8x b200", "en", "glm-5.2", 131072),
        ("지엘엠 5.2 128k b200 8장이면 돼?", "ko", "glm-5.2", 131072),
    ],
)
def test_glm5_caches_the_latent_and_the_full_layers_indexer_keys(
    question: str, lang: str, preset_id: str, context: int
) -> None:
    answer = ask(question, lang)
    assert (answer["request"]["model"]["id"], answer["lang"]) == (preset_id, lang)
    assert answer["estimate"]["kv_cache_bytes"] == _kv_by_hand(preset_id, context)


def test_glm52_indexes_21_of_its_78_layers() -> None:
    """GLM-5.2's shared layers reuse the last full layer's top-k: no indexer keys for 57 layers, so at 128k it
    holds 57 × 131,072 × 128 × 2 bytes (1.78 GiB) less than a GLM-5 with the same heads would."""
    c = _config("glm-5.2")
    full = [il for il, kind in enumerate(c["indexer_types"]) if kind == "full"]
    assert full == [0, 1, 2, *range(6, 78, 4)] and len(full) == 21
    glm5 = ask("glm-5 128k on 8x b200")["estimate"]["kv_cache_bytes"]
    glm52 = ask("glm-5.2 128k on 8x b200")["estimate"]["kv_cache_bytes"]
    assert glm5 - glm52 == 57 * 131072 * 128 * 2


def test_the_config_gives_the_parameters_and_kv_worked_out_by_hand() -> None:
    """``vram --json --config tests/data/configs/GLM-5.json``: 755.77 B parameters in the file (743.91 B in the trunk,
    llama.cpp's LLM_TYPE_744B_A40B, plus the 11.86 B MTP block) and 8,192 tokens of latent + indexer keys."""
    out = io.StringIO()
    assert run(["--json", "--config", str(CONFIGS / "GLM-5.json")], out) == 0
    answer = json.loads(out.getvalue())
    c = _config("glm-5")
    assert answer["estimate"]["params"] == answer["request"]["model"]["params"] == _params_by_hand(c)
    assert _params_by_hand(c) == 755_767_304_448
    # per token: 78 layers × (512 + 64 latent + 128 indexer) values × 2 bytes = 109,824 bytes
    assert answer["estimate"]["kv_cache_bytes"] == 8192 * 78 * (512 + 64 + 128) * 2 == _kv_by_hand("glm-5", 8192)
    assert answer["estimate"]["kv_v_bytes"] == 0  # MLA: K only


@pytest.mark.parametrize("preset_id", sorted(FILES))
def test_each_config_gives_its_presets_parameters(preset_id: str, tmp_path: Path) -> None:
    estimate = from_config(_config(preset_id), tmp_path)["estimate"]
    assert estimate["params"] == _params_by_hand(_config(preset_id))
    assert estimate["kv_cache_bytes"] == _kv_by_hand(preset_id, 8192)


def test_glm52s_shared_layers_have_no_indexer_and_the_mtp_block_one() -> None:
    from vramfit.calc.file_types import FileType
    from vramfit.calc.tensors import gguf_tensors
    from vramfit.calc.weights import weight_bytes

    c = _config("glm-5.2")
    arch = from_hf_config(c)
    names = {t.name for t in gguf_tensors(arch)}
    mtp = c["num_hidden_layers"]  # blk.78: the converter's block_count is 78 + num_nextn_predict_layers
    assert {"blk.2.indexer.attn_q_b.weight", "blk.6.indexer.proj.weight", f"blk.{mtp}.indexer.attn_k.weight"} <= names
    assert not any(name.startswith(("blk.3.indexer", "blk.77.indexer")) for name in names)
    assert {f"blk.{mtp}.nextn.eh_proj.weight", f"blk.{mtp}.nextn.shared_head_head.weight"} <= names
    assert "blk.3.exp_probs_b.bias" in names and "blk.2.exp_probs_b.bias" not in names  # noaux_tc, after 3 dense
    w = weight_bytes(arch, FileType.Q4_K_M)
    assert len(w.layer_bytes) == 78
    assert w.gpu_bytes + w.host_bytes < w.tensor_bytes  # the MTP block is in the file only


def test_the_measured_glm52_copy_caches_indexer_keys_in_its_full_layers_only() -> None:
    """llama.cpp's own log of the 7-layer GLM-5.2 copy (full, full, full, shared, shared, shared, full): the latent
    cache has 7 layers, the indexer cache 4."""
    rows = [r for r in llamacpp_rows() if r["arch_model"] == "GLM-5.2-7L16E"]
    assert rows
    for row in rows:
        latent, indexer = row["kv_caches"]
        assert (latent["layers"], indexer["layers"]) == (7, 4)


@pytest.mark.parametrize(
    ("change", "code", "field"),
    [
        ({"kv_lora_rank": None}, "bad_config", "kv_lora_rank"),
        ({"index_head_dim": 0}, "bad_config", "index_head_dim"),
        ({"n_routed_experts": None}, "bad_config", "n_routed_experts"),
        ({"indexer_types": ["full"] * 77}, "bad_config", "indexer_types"),
        ({"indexer_types": ["full"] * 77 + ["sparse"]}, "bad_config", "indexer_types"),
        ({"indexer_types": ["shared"] + ["full"] * 77}, "bad_config", "indexer_types"),
        # a 1M context without indexer_types: llama.cpp would cache GLM-5.2's default pattern, but which layers
        # carry indexer weights is not known
        ({"max_position_embeddings": 1048576}, "unsupported_architecture", "indexer_types"),
    ],
)
def test_a_broken_glm5_config_is_an_error_naming_the_field(
    change: dict[str, Any], code: str, field: str, tmp_path: Path
) -> None:
    config = {**_config("glm-5"), **change}
    error = from_config({k: v for k, v in config.items() if v is not None}, tmp_path)["error"]
    assert error["code"] == code
    assert field in error["message"]
