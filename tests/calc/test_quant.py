"""Quant mix and weight bytes against llama.cpp's own quantizer output and measured allocations.

Expected numbers come from the measured ground truth (``tests/data/groundtruth/llamacpp_cpu.jsonl``: files written by
``llama_model_quantize``) or are written by hand from llama.cpp logs and ggml's block layouts, never from the code
under test.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from tests.groundtruth import llamacpp_rows
from vramfit.calc.architecture import Architecture
from vramfit.calc.errors import UnknownQuantError
from vramfit.calc.file_types import FileType, parse_file_type
from vramfit.calc.ggml import GgmlType, row_bytes, tensor_bytes
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.llama_quant import tensor_types
from vramfit.calc.tensor_specs import loader_order
from vramfit.calc.tensors import count_params, gguf_tensors, has_output_tensor, loaded_past_layers
from vramfit.calc.weights import weight_bytes

MiB = 1 << 20
GiB = 1 << 30


def _quantized_files() -> list[dict[str, Any]]:
    """One row per (model, quant) file; later rows of the same file only vary the context parameters."""
    files: dict[tuple[str, str], dict[str, Any]] = {}
    for row in llamacpp_rows():
        files.setdefault((row["arch_model"], row["quant"]), row)
    return list(files.values())


FILES = _quantized_files()
FILE_IDS = [f"{row['arch_model']}-{row['quant']}" for row in FILES]


# --- ggml block math (ggml-common.h) ---------------------------------------------------------------------------

BLOCKS = [
    # type, weights per block, bytes per block
    (GgmlType.F32, 1, 4),
    (GgmlType.F16, 1, 2),
    (GgmlType.BF16, 1, 2),
    (GgmlType.Q8_0, 32, 34),
    (GgmlType.Q8_1, 32, 36),
    (GgmlType.Q6_K, 256, 210),
    (GgmlType.Q5_K, 256, 176),
    (GgmlType.Q5_1, 32, 24),
    (GgmlType.Q5_0, 32, 22),
    (GgmlType.Q4_K, 256, 144),
    (GgmlType.Q4_1, 32, 20),
    (GgmlType.Q4_0, 32, 18),
    (GgmlType.IQ4_NL, 32, 18),
    (GgmlType.IQ4_XS, 256, 136),
    (GgmlType.MXFP4, 32, 17),
    (GgmlType.Q3_K, 256, 110),
    (GgmlType.IQ3_S, 256, 110),
    (GgmlType.IQ3_XXS, 256, 98),
    (GgmlType.Q2_K, 256, 84),
    (GgmlType.IQ2_S, 256, 82),
    (GgmlType.IQ2_XS, 256, 74),
    (GgmlType.IQ2_XXS, 256, 66),
    (GgmlType.IQ1_M, 256, 56),
    (GgmlType.IQ1_S, 256, 50),
]


@pytest.mark.parametrize(("ggml_type", "block", "size"), BLOCKS, ids=[b[0].value for b in BLOCKS])
def test_block_layout(ggml_type: GgmlType, block: int, size: int) -> None:
    assert ggml_type.block_size == block
    assert ggml_type.type_size == size
    assert row_bytes(ggml_type, 4096) == 4096 // block * size


def test_row_and_tensor_bytes() -> None:
    assert row_bytes(GgmlType.Q8_0, 32) == 34
    assert row_bytes(GgmlType.Q4_K, 256) == 144
    assert row_bytes(GgmlType.Q6_K, 14336) == 56 * 210
    assert tensor_bytes(GgmlType.Q4_K, (4096, 1024)) == 16 * 144 * 1024
    assert tensor_bytes(GgmlType.MXFP4, (2880, 2880, 32)) == 90 * 17 * 2880 * 32
    assert tensor_bytes(GgmlType.F32, (896,)) == 3584
    with pytest.raises(ValueError):
        row_bytes(GgmlType.Q4_K, 896)  # 896 is not a multiple of 256


# --- ground truth: files written by llama.cpp's quantizer ------------------------------------------------------


def _arch(row: dict[str, Any]) -> Architecture:
    return from_hf_config(row["config"])


@pytest.mark.parametrize("row", FILES, ids=FILE_IDS)
def test_tensor_bytes_match_llama_model_size(row: dict[str, Any]) -> None:
    weights = weight_bytes(_arch(row), parse_file_type(row["quant"]))
    assert weights.tensor_bytes == row["model_size_api_bytes"]


@pytest.mark.parametrize("row", FILES, ids=FILE_IDS)
def test_bytes_per_ggml_type(row: dict[str, Any]) -> None:
    by_type: dict[str, dict[str, int]] = defaultdict(lambda: {"count": 0, "bytes": 0})
    for spec, ggml_type in tensor_types(_arch(row), parse_file_type(row["quant"])):
        by_type[ggml_type.value]["count"] += 1
        by_type[ggml_type.value]["bytes"] += tensor_bytes(ggml_type, spec.shape)
    assert dict(by_type) == row["gguf_tensor_facts"]["tensor_types"]


@pytest.mark.parametrize("row", FILES, ids=FILE_IDS)
def test_token_embd_role(row: dict[str, Any]) -> None:
    weights = weight_bytes(_arch(row), parse_file_type(row["quant"]))
    expected = row["gguf_tensor_facts"]["roles"]["token_embd.weight"]
    assert (weights.token_embd_type, weights.token_embd_bytes) == (expected["type"], expected["bytes"])


@pytest.mark.parametrize("row", FILES, ids=FILE_IDS)
def test_params_and_tensor_count(row: dict[str, Any]) -> None:
    arch = _arch(row)
    assert count_params(arch) == row["model_n_params_api"]
    assert weight_bytes(arch, parse_file_type(row["quant"])).params == row["model_n_params_api"]
    assert len(gguf_tensors(arch)) == row["gguf_tensor_facts"]["n_tensors"]


@pytest.mark.parametrize("row", FILES, ids=FILE_IDS)
def test_tensor_data_matches_the_file(row: dict[str, Any]) -> None:
    # Everything after the header, byte for byte: each tensor in its type, padded to the GGUF alignment. (The header
    # itself is estimated for a real file; these test files carry a synthetic tokenizer without merges, so the
    # header is checked against published files instead: test_llama3_8b_published_file_sizes.)
    weights = weight_bytes(_arch(row), parse_file_type(row["quant"]))
    data_offset = row["gguf_tensor_facts"]["data_offset_bytes"]
    assert weights.file_bytes - weights.metadata_bytes == row["file_bytes"] - data_offset


def _file_rows(arch: Architecture, quant: str) -> list[tuple[bool, int]]:
    """(loaded, bytes) of every tensor in the file's order (weight_name_comparer)."""
    extra = loaded_past_layers(arch)
    return [
        (spec.layer is None or spec.layer < arch.n_layers or bool(extra and spec.name.endswith(extra)),
         tensor_bytes(ggml_type, spec.shape))
        for spec, ggml_type in tensor_types(arch, parse_file_type(quant))
    ]  # fmt: skip


def _mapped_gap_bytes(arch: Architecture, quant: str) -> int:
    """Bytes of unloaded tensors that lie between loaded ones in the file: llama_model_loader::get_mapping_range maps
    from the first loaded tensor to the end of the last, in the file's order (weight_name_comparer). DeepSeek V3.2's
    MTP block loads its routing bias, so the block's attention tensors, sorted before it, fall inside the range."""
    rows = _file_rows(arch, quant)
    last = max(i for i, (is_loaded, _) in enumerate(rows) if is_loaded)
    return sum(n for is_loaded, n in rows[:last] if not is_loaded)


@pytest.mark.parametrize("row", FILES, ids=FILE_IDS)
def test_loaded_weights_match_the_mapped_buffer(row: dict[str, Any]) -> None:
    # On the CPU (n_gpu_layers=0, mmap) llama.cpp maps every tensor it loads once: a tied head is no second copy,
    # and the multi-token-prediction blocks of Qwen3.5 files are not loaded at all.
    # The mapping holds the file's bytes from the first loaded tensor to the end of the last, so the padding that
    # aligns each tensor to 32 bytes in between too (Gemma 4 E2B: 6 KiB of it, 0.01 MiB in the log).
    arch = _arch(row)
    weights = weight_bytes(arch, parse_file_type(row["quant"]))
    loaded = weights.gpu_bytes + weights.host_bytes - (0 if has_output_tensor(arch) else weights.output_bytes)
    mapped = loaded + _mapped_gap_bytes(arch, row["quant"]) + _padding_bytes(arch, row["quant"])
    buffers = row["weights_buffers_mib"]
    assert round(mapped / MiB, 2) == buffers.get("CPU_Mapped", buffers.get("CPU"))


def _padding_bytes(arch: Architecture, quant: str) -> int:
    """The alignment padding after every tensor of the mapped range but the last (GGUF_DEFAULT_ALIGNMENT, 32)."""
    rows = _file_rows(arch, quant)
    first = min(i for i, (is_loaded, _) in enumerate(rows) if is_loaded)
    last = max(i for i, (is_loaded, _) in enumerate(rows) if is_loaded)
    return sum(-n % 32 for _, n in rows[first:last])


# --- hand-written checks -----------------------------------------------------------------------------------------

QWEN25_05B = {
    "model_type": "qwen2",
    "num_hidden_layers": 24,
    "hidden_size": 896,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "intermediate_size": 4864,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
}


@pytest.mark.parametrize(
    ("quant", "attn_q", "ffn_down_layer0", "token_embd"),
    [
        # width 896 is not a multiple of 256: K-quants fall back to 32-blocks; ffn_down rows (4864 = 19 x 256) do not
        ("Q4_K_M", GgmlType.Q5_0, GgmlType.Q6_K, GgmlType.Q8_0),
        ("Q5_K_M", GgmlType.Q5_1, GgmlType.Q6_K, GgmlType.Q8_0),
        ("Q6_K", GgmlType.Q8_0, GgmlType.Q6_K, GgmlType.Q8_0),
        ("Q3_K_M", GgmlType.Q4_0, GgmlType.Q5_K, GgmlType.Q8_0),
        ("Q2_K", GgmlType.Q4_0, GgmlType.Q3_K, GgmlType.Q8_0),
        ("IQ4_XS", GgmlType.IQ4_NL, GgmlType.Q5_K, GgmlType.Q8_0),
        ("Q4_0", GgmlType.Q4_0, GgmlType.Q4_0, GgmlType.Q8_0),
    ],
)
def test_row_length_fallback_qwen25_05b(
    quant: str, attn_q: GgmlType, ffn_down_layer0: GgmlType, token_embd: GgmlType
) -> None:
    types = {spec.name: t for spec, t in tensor_types(from_hf_config(QWEN25_05B), parse_file_type(quant))}
    assert types["blk.5.attn_q.weight"] == attn_q
    assert types["blk.0.ffn_down.weight"] == ffn_down_layer0
    assert types["token_embd.weight"] == token_embd  # tied: takes the output rule, Q8_0 when 896 % block != 0
    assert types["blk.0.attn_norm.weight"] == GgmlType.F32
    assert types["blk.0.attn_q.bias"] == GgmlType.F32


LLAMA3_8B = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
}


def test_llama3_8b_q4_k_m_matches_llama_cpp_logs() -> None:
    # llama.cpp with every layer on the GPU: "CPU_Mapped model buffer size = 281.81 MiB" (token_embd) and
    # "CUDA0 model buffer size = 4403.49 MiB"; 4685.30 MiB in all ("4.58 GiB (4.89 BPW)").
    weights = weight_bytes(from_hf_config(LLAMA3_8B), FileType.Q4_K_M)
    assert weights.tensor_bytes / MiB == pytest.approx(4685.30, abs=0.05)
    assert weights.host_bytes / MiB == pytest.approx(281.81, abs=0.05)
    assert weights.gpu_bytes / MiB == pytest.approx(4403.49, abs=0.05)
    assert weights.token_embd_type == "Q4_K"
    assert weights.output_type == "Q6_K"


# Meta-Llama-3-8B-Instruct GGUF file sizes (exact bytes from an ls listing, made with llama.cpp's standard recipes)
# and its real metadata size, 7,835,936 bytes: the tensor data is the difference.
LLAMA3_8B_FILES = {
    "BF16": 16068890912,
    "Q2_K": 3179131168,
    "Q3_K_S": 3664498976,
    "Q3_K_M": 4018917664,
    "Q3_K_L": 4321956128,
    "Q4_K_S": 4692668704,
    "Q4_K_M": 4920733984,
}


@pytest.mark.parametrize(("quant", "file_size"), LLAMA3_8B_FILES.items())
def test_llama3_8b_published_file_sizes(quant: str, file_size: int) -> None:
    weights = weight_bytes(from_hf_config(LLAMA3_8B), parse_file_type(quant))
    assert weights.tensor_bytes == file_size - 7_835_936
    assert abs(weights.file_bytes - file_size) <= max(file_size // 100, 8 * MiB)


LLAMA_70B = {
    "model_type": "llama",
    "num_hidden_layers": 80,
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 28672,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
}

PHI35_MINI = {
    "model_type": "phi3",
    "num_hidden_layers": 32,
    "hidden_size": 3072,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "intermediate_size": 8192,
    "vocab_size": 32064,
    "tie_word_embeddings": False,
}

# (name, config, quant, GPU MiB, CPU MiB) from llama.cpp "model buffer size" lines with every layer offloaded.
MEASURED_SPLITS = [
    # 80-layer Llama with GQA is LLM_TYPE_70B: attn_v Q4_K -> Q5_K
    ("Llama-3-70B Q4_K_M", LLAMA_70B, "Q4_K_M", 39979.48, 563.62),
    ("Llama-3.3-70B Q8_0", {**LLAMA_70B, "rope_scaling": {"rope_type": "llama3"}}, "Q8_0", 70429.66, 1064.62),
    (
        "Llama-3.2-1B Q4_K_M (tied: GPU holds the output copy)",
        {
            **LLAMA3_8B,
            "num_hidden_layers": 16,
            "hidden_size": 2048,
            "head_dim": 64,
            "intermediate_size": 8192,
            "tie_word_embeddings": True,
            "rope_scaling": {"rope_type": "llama3"},
        },
        "Q4_K_M",
        762.81,
        205.49,
    ),
    (
        "Qwen2.5-1.5B Q4_K_M",
        {
            **QWEN25_05B,
            "num_hidden_layers": 28,
            "hidden_size": 1536,
            "num_attention_heads": 12,
            "intermediate_size": 8960,
        },
        "Q4_K_M",
        934.70,
        182.57,
    ),
    (
        "Qwen2.5-Coder-32B Q8_0",
        {
            **QWEN25_05B,
            "num_hidden_layers": 64,
            "hidden_size": 5120,
            "num_attention_heads": 40,
            "num_key_value_heads": 8,
            "intermediate_size": 27648,
            "vocab_size": 152064,
            "tie_word_embeddings": False,
        },
        "Q8_0",
        32413.18,
        788.91,
    ),
    (
        "gemma-2-9b Q4_K_M",
        {
            "model_type": "gemma2",
            "num_hidden_layers": 42,
            "hidden_size": 3584,
            "num_attention_heads": 16,
            "num_key_value_heads": 8,
            "head_dim": 256,
            "intermediate_size": 14336,
            "vocab_size": 256000,
        },
        "Q4_K_M",
        5488.39,
        717.77,
    ),
    (
        "Phi-3.5-mini Q8_0 (fused attn_qkv, longrope factors)",
        {**PHI35_MINI, "rope_scaling": {"type": "longrope"}},
        "Q8_0",
        3772.58,
        99.81,
    ),
    (
        "GLM-Z1-9B-0414 Q5_K_M (fused gate+up, ffn_down width 13696 falls back)",
        {
            "model_type": "glm4",
            "num_hidden_layers": 40,
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_key_value_heads": 2,
            "head_dim": 128,
            "intermediate_size": 13696,
            "vocab_size": 151552,
            "tie_word_embeddings": False,
            "attention_bias": True,
        },
        "Q5_K_M",
        6308.38,
        407.00,
    ),
    (
        "c4ai-command-r-v01 Q4_K_M (tied, Metal maps it all)",
        {
            "model_type": "cohere",
            "num_hidden_layers": 40,
            "hidden_size": 8192,
            "num_attention_heads": 64,
            "num_key_value_heads": 64,
            "intermediate_size": 22528,
            "vocab_size": 256000,
        },
        "Q4_K_M",
        20519.41,
        1640.62,
    ),
]


@pytest.mark.parametrize(
    ("config", "quant", "gpu_mib", "cpu_mib"), [c[1:] for c in MEASURED_SPLITS], ids=[c[0] for c in MEASURED_SPLITS]
)
def test_measured_gpu_host_split(config: dict[str, Any], quant: str, gpu_mib: float, cpu_mib: float) -> None:
    weights = weight_bytes(from_hf_config(config), parse_file_type(quant))
    assert weights.gpu_bytes / MiB == pytest.approx(gpu_mib, abs=0.05)
    assert weights.host_bytes / MiB == pytest.approx(cpu_mib, abs=0.05)


def test_imatrix_rules_match_logged_sizes() -> None:
    # Llama-3.1-405B IQ3_XXS (made with an importance matrix): CPU model buffer 148619.41 MiB.
    l405 = {
        **LLAMA_70B,
        "num_hidden_layers": 126,
        "hidden_size": 16384,
        "num_attention_heads": 128,
        "intermediate_size": 53248,
        "rope_scaling": {"rope_type": "llama3"},
    }
    weights = weight_bytes(from_hf_config(l405), FileType.IQ3_XXS, has_imatrix=True)
    assert weights.tensor_bytes / MiB == pytest.approx(148619.41, abs=0.05)
    # DeepSeek-V2.5 Q4_0 with an imatrix (first n_layer/8 ffn_down -> Q4_1): "model size = 124.23 GiB".
    v25 = {
        "model_type": "deepseek_v2",
        "num_hidden_layers": 60,
        "hidden_size": 5120,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "intermediate_size": 12288,
        "moe_intermediate_size": 1536,
        "n_routed_experts": 160,
        "n_shared_experts": 2,
        "num_experts_per_tok": 6,
        "first_k_dense_replace": 1,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "v_head_dim": 128,
        "vocab_size": 102400,
        "tie_word_embeddings": False,
    }
    weights = weight_bytes(from_hf_config(v25), FileType.Q4_0, has_imatrix=True)
    assert weights.tensor_bytes / GiB == pytest.approx(124.23, abs=0.005)


def test_qwen3_moe_q8_0_total() -> None:
    # Qwen3-235B-A22B Q8_0: CUDA0 39273.87 + CUDA_Host 630.59 + CPU 198451.27 MiB of model buffers.
    config = {
        "model_type": "qwen3_moe",
        "num_hidden_layers": 94,
        "hidden_size": 4096,
        "num_attention_heads": 64,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "intermediate_size": 12288,
        "moe_intermediate_size": 1536,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "vocab_size": 151936,
        "tie_word_embeddings": False,
    }
    weights = weight_bytes(from_hf_config(config), FileType.Q8_0)
    assert weights.tensor_bytes / MiB == pytest.approx(39273.87 + 630.59 + 198451.27, abs=0.05)
    assert weights.params == pytest.approx(235.094e9, abs=0.0005e9)  # "model params = 235.09 B"


DEEPSEEK_V3 = {
    "model_type": "deepseek_v3",
    "num_hidden_layers": 61,
    "hidden_size": 7168,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "v_head_dim": 128,
    "vocab_size": 129280,
    "tie_word_embeddings": False,
}
MIXTRAL = {
    "model_type": "mixtral",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
}
GPT_OSS_20B = {
    "model_type": "gpt_oss",
    "num_hidden_layers": 24,
    "hidden_size": 2880,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "intermediate_size": 2880,
    "num_local_experts": 32,
    "num_experts_per_tok": 4,
    "vocab_size": 201088,
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
    "quantization_config": {"quant_method": "mxfp4"},  # OpenAI's checkpoint: experts in MXFP4
}


@pytest.mark.parametrize(
    ("config", "billions"),
    [(DEEPSEEK_V3, 671.03), (MIXTRAL, 46.70), (GPT_OSS_20B, 20.91)],
    ids=["deepseek-v3", "mixtral-8x7b", "gpt-oss-20b"],
)
def test_params_as_llama_cpp_prints_them(config: dict[str, Any], billions: float) -> None:
    # llama.cpp's "model params = 671.03 B" etc.
    assert count_params(from_hf_config(config)) / 1e9 == pytest.approx(billions, abs=0.005)


def test_deepseek_mla_tensors() -> None:
    types = {s.name: (s, t) for s, t in tensor_types(from_hf_config(DEEPSEEK_V3), FileType.Q4_K_M)}
    k_b, k_b_type = types["blk.10.attn_k_b.weight"]
    v_b, v_b_type = types["blk.10.attn_v_b.weight"]
    assert k_b.shape == (128, 512, 128)  # {qk_nope, kv_lora_rank, n_head}
    assert v_b.shape == (512, 128, 128)  # {kv_lora_rank, v_head_dim, n_head}
    assert k_b_type == GgmlType.Q5_0  # 128-wide rows cannot hold Q4_K's 256-blocks
    assert v_b_type == GgmlType.Q4_K
    assert "blk.0.ffn_down.weight" in types and "blk.3.ffn_down_exps.weight" in types
    assert "blk.2.ffn_gate_exps.weight" not in types  # first_k_dense_replace = 3
    assert types["blk.3.ffn_gate_inp.weight"][1] == GgmlType.F32
    assert types["blk.3.exp_probs_b.bias"][1] == GgmlType.F32
    # use_more_bits(i, 61) with the layer parsed from the name: i < 7, i >= 53, or (i - 7) % 3 == 2
    assert types["blk.3.ffn_down_exps.weight"][1] == GgmlType.Q6_K
    assert types["blk.8.ffn_down_exps.weight"][1] == GgmlType.Q4_K
    assert types["blk.9.ffn_down_exps.weight"][1] == GgmlType.Q6_K
    assert types["blk.9.ffn_down_shexp.weight"][1] == GgmlType.Q6_K


def test_eight_expert_rules() -> None:
    types = {s.name: t for s, t in tensor_types(from_hf_config(MIXTRAL), FileType.Q4_K_M)}
    assert types["blk.7.attn_v.weight"] == GgmlType.Q8_0
    assert types["blk.7.attn_k.weight"] == GgmlType.Q8_0
    assert types["blk.7.attn_output.weight"] == GgmlType.Q5_K
    assert types["blk.7.ffn_gate_inp.weight"] == GgmlType.F32
    weights = weight_bytes(from_hf_config(MIXTRAL), FileType.Q4_K_M)
    assert all(0 < e < layer for e, layer in zip(weights.expert_layer_bytes, weights.layer_bytes, strict=True))


def test_gpt_oss_keeps_mxfp4_experts() -> None:
    arch = from_hf_config(GPT_OSS_20B)
    for ftype in (FileType.F16, FileType.Q4_K_M, FileType.MXFP4_MOE):
        types = {s.name: t for s, t in tensor_types(arch, ftype)}
        assert types["blk.0.ffn_down_exps.weight"] == GgmlType.MXFP4
        assert types["blk.0.attn_sinks.weight"] == GgmlType.F32
        assert types["blk.0.ffn_up_exps.bias"] == GgmlType.F32
    types = {s.name: t for s, t in tensor_types(arch, FileType.Q4_K_M)}
    assert types["output.weight"] == GgmlType.Q8_0  # 2880 % 256 != 0
    assert types["blk.0.attn_q.weight"] == GgmlType.Q5_0  # Q4_K falls back on 2880-wide rows
    mxfp4 = {s.name: t for s, t in tensor_types(arch, FileType.MXFP4_MOE)}
    assert mxfp4["blk.0.attn_q.weight"] == GgmlType.Q8_0


def test_gpt_oss_from_a_16_bit_checkpoint_quantizes_its_experts() -> None:
    config = {k: v for k, v in GPT_OSS_20B.items() if k != "quantization_config"}
    types = {s.name: t for s, t in tensor_types(from_hf_config(config), FileType.Q4_K_M)}
    assert types["blk.0.ffn_up_exps.weight"] == GgmlType.Q5_0  # Q4_K on 2880-wide rows falls back to Q5_0
    assert types["blk.0.ffn_gate_inp.weight"] == GgmlType.F32


def test_phi3_fused_qkv_takes_attn_v_rules() -> None:
    # Current llama-quant.cpp counts attn_qkv as attn_v-like: Q6_K on use_more_bits layers, Q4_K elsewhere.
    tensors = {s.name: (s, t) for s, t in tensor_types(from_hf_config(PHI35_MINI), FileType.Q4_K_M)}
    qkv, qkv_type = tensors["blk.0.attn_qkv.weight"]
    assert qkv.shape == (3072, 3 * 3072)
    assert qkv_type == GgmlType.Q6_K
    assert tensors["blk.5.attn_qkv.weight"][1] == GgmlType.Q4_K
    assert tensors["blk.0.ffn_up.weight"][0].shape == (3072, 2 * 8192)


def test_loader_order_sorts_by_layer_then_name() -> None:
    names = [s.name for s in loader_order(gguf_tensors(from_hf_config(QWEN25_05B)))]
    assert names[:3] == ["output_norm.weight", "token_embd.weight", "blk.0.attn_k.bias"]
    assert names.index("blk.2.attn_k.bias") < names.index("blk.10.attn_k.bias")


def test_weight_bytes_parts_add_up() -> None:
    weights = weight_bytes(from_hf_config(QWEN25_05B), FileType.Q4_K_M)
    non_layer = weights.tensor_bytes - sum(weights.layer_bytes) - weights.token_embd_bytes
    assert non_layer == 896 * 4  # output_norm only: the model is tied
    assert weights.output_bytes == weights.token_embd_bytes  # the GPU copy of the tied embedding
    assert weights.gpu_bytes == weights.tensor_bytes
    assert weights.host_bytes == weights.token_embd_bytes
    assert weights.expert_layer_bytes == (0,) * 24


# --- vLLM formats ------------------------------------------------------------------------------------------------


def test_vllm_fp8_llama3_8b() -> None:
    arch = from_hf_config({**LLAMA3_8B, "max_position_embeddings": 8192})
    weights = weight_bytes(arch, FileType.FP8)
    embeddings = 2 * 128256 * 4096 * 2  # embed_tokens + lm_head in bf16
    linear = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336)  # 1 byte each
    scales = 32 * 4 * (4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096)  # fp32 per output channel
    norms = (2 * 32 + 1) * 4096 * 2
    rotary = 8192 * 128 * 2  # cos/sin cache
    assert weights.tensor_bytes == embeddings + linear + scales + norms + rotary
    assert weights.gpu_bytes == weights.tensor_bytes and weights.host_bytes == 0


@pytest.mark.parametrize(
    ("config", "quant", "gib"),
    [
        # vLLM "Loading model weights took ... GiB" / "model weights take ... GiB"
        ({**LLAMA3_8B, "rope_scaling": {"rope_type": "llama3"}, "max_position_embeddings": 131072}, "BF16", 14.99),
        ({**LLAMA_70B, "rope_scaling": {"rope_type": "llama3"}, "max_position_embeddings": 131072}, "INT8", 67.72),
        ({**QWEN25_05B, "max_position_embeddings": 32768}, "AWQ", 0.43),
        (GPT_OSS_20B, "BF16", 13.47),
    ],
    ids=["llama-3.1-8b-bf16", "llama-3.1-70b-w8a8", "qwen2.5-0.5b-awq", "gpt-oss-20b-mxfp4"],
)
def test_vllm_weight_memory(config: dict[str, Any], quant: str, gib: float) -> None:
    weights = weight_bytes(from_hf_config(config), parse_file_type(quant), engine="vllm")
    assert weights.gpu_bytes / GiB == pytest.approx(gib, abs=0.01)


def test_vllm_int4_group_math() -> None:
    arch = from_hf_config(LLAMA3_8B)
    int4 = weight_bytes(arch, FileType.INT4)
    bf16 = weight_bytes(arch, FileType.BF16, engine="vllm")
    # attn_q 4096 x 4096: 8 MiB of nibbles + 32 groups x 4096 rows x (2 B scale + 0.5 B zero)
    q_int4 = 4096 * 4096 // 2 + 32 * 4096 * 2 + 32 * 4096 // 2
    q_bf16 = 4096 * 4096 * 2
    assert bf16.layer_bytes[0] - int4.layer_bytes[0] > q_bf16 - q_int4
    assert int4.token_embd_bytes == bf16.token_embd_bytes == 128256 * 4096 * 2


# --- names -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Q4_K_M", FileType.Q4_K_M),
        ("q4_k_m", FileType.Q4_K_M),
        ("Q4_K", FileType.Q4_K_M),
        ("iq4_xs", FileType.IQ4_XS),
        ("fp16", FileType.F16),
        ("bf16", FileType.BF16),
        ("awq", FileType.INT4),
        ("GPTQ", FileType.INT4),
        ("fp8", FileType.FP8),
        ("mxfp4", FileType.MXFP4_MOE),
    ],
)
def test_parse_file_type(name: str, expected: FileType) -> None:
    assert parse_file_type(name) is expected


def test_unknown_quant_suggests() -> None:
    with pytest.raises(UnknownQuantError) as info:
        parse_file_type("Q4_K_X")
    assert info.value.code == "unknown_quant"
    assert "Q4_K_M" in info.value.suggestions or "Q4_K_S" in info.value.suggestions
    with pytest.raises(UnknownQuantError):
        tensor_types(from_hf_config(LLAMA3_8B), FileType.FP8)  # a vLLM format has no GGUF mix
