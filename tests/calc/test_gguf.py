"""GGUF headers: files written by the reference writer (gguf-py) read back to exact sizes and architecture."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFWriter, LlamaFileType

from vramfit.calc.architecture import Architecture
from vramfit.calc.errors import BadFileError
from vramfit.calc.file_types import LLAMA_FTYPE_LABELS, FileType, file_type_in_header
from vramfit.calc.gguf import GgufHeader, architecture_from_gguf, read_gguf, weights_from_gguf
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.llama_quant import tensor_types
from vramfit.calc.tensors import gguf_tensors
from vramfit.calc.weights import weight_bytes

TINY_LLAMA = {
    "model_type": "llama",
    "hidden_size": 512,
    "intermediate_size": 1024,
    "num_hidden_layers": 3,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "vocab_size": 2048,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
}


def write_gguf(
    path: Path,
    config: dict[str, object],
    ftype: FileType,
    *,
    declare: bool = False,
    split_max_tensors: int = 0,
    name: str = "",
) -> None:
    """A GGUF with the architecture's tensors in llama.cpp's quant mix and zero weights; with ``declare`` also
    general.file_type, as llama-quantize writes it (gguf-py's number for the type); with ``split_max_tensors``, in
    parts of at most that many tensors, named as gguf-split names them (``{stem}-00001-of-00002.gguf``)."""
    arch = from_hf_config(config)
    writer = GGUFWriter(str(path), arch="llama", split_max_tensors=split_max_tensors)
    if name:  # general.name, as a converter writes it (or anyone who edits the file)
        writer.add_name(name)
    if declare:
        writer.add_file_type(LlamaFileType[("ALL_" if ftype == FileType.F32 else "MOSTLY_") + ftype.value].value)
    writer.add_block_count(arch.n_layers)
    writer.add_embedding_length(arch.hidden_size)
    writer.add_head_count(arch.n_heads[0])
    writer.add_head_count_kv(arch.n_kv_heads[0])
    writer.add_feed_forward_length(arch.ffn_size[0])
    writer.add_context_length(arch.context_length)
    writer.add_key_length(arch.head_dim_k)
    writer.add_value_length(arch.head_dim_v)
    writer.add_vocab_size(arch.vocab_size)
    writer.add_token_list([f"t{i}" for i in range(arch.vocab_size)])
    _write_zero_tensors(writer, arch, ftype)


def _write_zero_tensors(writer: GGUFWriter, arch: Architecture, ftype: FileType) -> None:
    """Every tensor of ``arch`` in llama.cpp's quant mix, all zeros, then the file."""
    for spec, ggml_type in tensor_types(arch, ftype):
        outer = tuple(reversed(spec.shape[1:]))
        if ggml_type.is_quantized:  # gguf-py takes quantized data as bytes, one row of blocks per array row
            row = ggml_type.type_size * spec.shape[0] // ggml_type.block_size
            data = np.zeros((*outer, row), dtype=np.uint8)
            writer.add_tensor(spec.name, data, raw_dtype=GGMLQuantizationType[ggml_type.value])
        else:
            dtype = np.float32 if ggml_type.value == "F32" else np.float16
            writer.add_tensor(spec.name, np.zeros((*outer, spec.shape[0]), dtype=dtype))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_the_file_type_table_is_llama_cpps() -> None:
    # Every number the table names is gguf-py's (llama.cpp's llama_ftype) for the same name.
    for number, label in LLAMA_FTYPE_LABELS.items():
        assert LlamaFileType(number).name.removeprefix("MOSTLY_").removeprefix("ALL_") == label


@pytest.mark.parametrize(
    ("metadata", "label"),
    [
        ({"general.file_type": 15}, "Q4_K_M"),
        ({"general.file_type": 2}, "Q4_0"),  # Ollama's QAT and older tags
        ({"general.file_type": 0}, "F32"),
        ({"general.file_type": 38}, "MXFP4_MOE"),
        ({"general.file_type": 15 | 1024}, "Q4_K_M"),  # llama.cpp's "guessed" bit
        ({"general.file_type": 4}, ""),  # removed from llama.cpp
        ({"general.file_type": "15"}, ""),
        ({"general.file_type": True}, ""),
        ({}, ""),
    ],
)
def test_the_header_declares_its_quant(metadata: dict[str, object], label: str) -> None:
    assert file_type_in_header(metadata) == label


def test_a_written_file_declares_its_quant(tmp_path: Path) -> None:
    for ftype in (FileType.Q4_K_M, FileType.Q8_0, FileType.F16):
        write_gguf(tmp_path / "x.gguf", TINY_LLAMA, ftype, declare=True)
        assert file_type_in_header(read_gguf(tmp_path / "x.gguf").metadata) == ftype.value


@pytest.mark.parametrize("ftype", [FileType.Q4_K_M, FileType.Q8_0, FileType.F16])
def test_header_gives_exact_sizes_and_shape(tmp_path: Path, ftype: FileType) -> None:
    path = tmp_path / "tiny.gguf"
    write_gguf(path, TINY_LLAMA, ftype)
    header = read_gguf(path)
    arch = architecture_from_gguf(header)
    expected_arch = from_hf_config(TINY_LLAMA)
    assert (arch.n_layers, arch.hidden_size, arch.n_kv_heads, arch.head_dim_k, arch.vocab_size) == (
        3,
        512,
        (2, 2, 2),
        64,
        2048,
    )
    assert arch.tied_embeddings is False
    weights = weights_from_gguf(arch, header)
    predicted = weight_bytes(expected_arch, ftype)
    assert weights.tensor_bytes == predicted.tensor_bytes
    assert weights.gpu_bytes == predicted.gpu_bytes
    assert weights.host_bytes == predicted.host_bytes
    assert weights.params == predicted.params == sum(t.n_elements for t in gguf_tensors(expected_arch))
    assert weights.file_bytes == path.stat().st_size


def test_tied_model_puts_a_copy_of_the_embeddings_on_the_gpu(tmp_path: Path) -> None:
    path = tmp_path / "tied.gguf"
    write_gguf(path, {**TINY_LLAMA, "tie_word_embeddings": True}, FileType.Q8_0)
    header = read_gguf(path)
    weights = weights_from_gguf(architecture_from_gguf(header), header)
    assert weights.gpu_bytes == weights.tensor_bytes
    assert weights.host_bytes == weights.output_bytes > 0


@pytest.mark.parametrize("content", [b"", b"GGML" + b"\0" * 40, b"GGUF\x03\0\0\0" + b"\xff" * 16, b"GGUF\x03\0\0"])
def test_bad_files_are_bad_file_errors(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(BadFileError):
        read_gguf(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BadFileError):
        read_gguf(tmp_path / "nope.gguf")


def test_config_json_shape_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY_LLAMA), encoding="utf-8")
    assert from_hf_config(json.loads(path.read_text())) == from_hf_config(TINY_LLAMA)


# Tiny configs of the 2026 architectures, in config.json's own keys, and a writer that puts in a GGUF header the keys
# llama.cpp's converters write for each (convert_hf_to_gguf.py at llama.cpp 0c1e57098).
TINY_2026: dict[str, dict[str, object]] = {
    "qwen35": {"model_type": "qwen3_5_text", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4,
               "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1024,
               "full_attention_interval": 4, "linear_num_key_heads": 4, "linear_num_value_heads": 8,
               "linear_key_head_dim": 32, "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4,
               "mtp_num_hidden_layers": 1, "tie_word_embeddings": True},
    "granitehybrid": {"model_type": "granitemoehybrid", "hidden_size": 256, "intermediate_size": 512,
                      "shared_intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 4,
                      "num_key_value_heads": 2, "vocab_size": 1024, "layer_types": ["mamba", "attention", "mamba",
                      "mamba"], "mamba_n_heads": 8, "mamba_d_head": 32, "mamba_d_state": 16, "mamba_d_conv": 4,
                      "mamba_n_groups": 1, "tie_word_embeddings": True},
    "glm4moe": {"model_type": "glm4_moe", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4,
                "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1024,
                "moe_intermediate_size": 256, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1,
                "first_k_dense_replace": 1, "num_nextn_predict_layers": 1, "attention_bias": True,
                "use_qk_norm": True, "tie_word_embeddings": False},
    "deepseek2": {"model_type": "kimi_k2", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4,
                  "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1024, "kv_lora_rank": 64,
                  "q_lora_rank": 96, "qk_rope_head_dim": 32, "qk_nope_head_dim": 64, "v_head_dim": 64,
                  "moe_intermediate_size": 128, "n_routed_experts": 8, "num_experts_per_tok": 2,
                  "n_shared_experts": 1, "first_k_dense_replace": 1, "topk_method": "noaux_tc",
                  "tie_word_embeddings": False},
    "glm-dsa": {"model_type": "glm_moe_dsa", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4,
                "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1024, "kv_lora_rank": 64,
                "q_lora_rank": 96, "qk_rope_head_dim": 32, "qk_nope_head_dim": 64, "v_head_dim": 96,
                "moe_intermediate_size": 128, "n_routed_experts": 8, "num_experts_per_tok": 2,
                "n_shared_experts": 1, "first_k_dense_replace": 1, "topk_method": "noaux_tc",
                "index_n_heads": 4, "index_head_dim": 32, "num_nextn_predict_layers": 1,
                "indexer_types": ["full", "shared", "full", "shared"], "tie_word_embeddings": False},
    "lfm2": {"model_type": "lfm2", "hidden_size": 256, "block_ff_dim": 512, "num_hidden_layers": 4,
             "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024, "conv_L_cache": 3,
             "layer_types": ["conv", "full_attention", "conv", "full_attention"]},
    "gemma4": {"model_type": "gemma4_text", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 6,
               "num_attention_heads": 4, "num_key_value_heads": 2, "num_global_key_value_heads": 1, "head_dim": 64,
               "global_head_dim": 128, "vocab_size": 1024, "sliding_window": 128, "attention_k_eq_v": True,
               "layer_types": ["sliding_attention"] * 5 + ["full_attention"], "tie_word_embeddings": True},
}  # fmt: skip


def _write_ssm(writer: GGUFWriter, prefix: str, sizes: list[int], *, inner: int) -> None:
    """ssm.conv_kernel, state_size, group_count, time_step_rank (in that order) and inner_size."""
    for key, value in zip(("conv_kernel", "state_size", "group_count", "time_step_rank"), sizes, strict=True):
        writer.add_uint32(f"{prefix}ssm.{key}", value)
    writer.add_uint32(f"{prefix}ssm.inner_size", inner)


def _write_experts(writer: GGUFWriter, prefix: str, c: dict[str, object]) -> None:
    """The expert keys DeepSeek-style converters write (routed, used, width, shared, leading dense blocks)."""
    for key, field in (("expert_count", "n_routed_experts"), ("expert_used_count", "num_experts_per_tok"),
                       ("expert_feed_forward_length", "moe_intermediate_size"),
                       ("expert_shared_count", "n_shared_experts"),
                       ("leading_dense_block_count", "first_k_dense_replace")):  # fmt: skip
        writer.add_uint32(prefix + key, c[field])  # type: ignore[arg-type]


def _write_mtp_block_and_heads(writer: GGUFWriter, prefix: str, c: dict[str, object], layers: int) -> None:
    """What Qwen3NextModel and Glm4MoeModel write alike: the MTP (NextN) block counted in block_count, the FFN width,
    one head_count_kv for every layer, and K and V of head_dim."""
    writer.add_uint32(prefix + "block_count", layers + 1)
    writer.add_uint32(prefix + "nextn_predict_layers", 1)
    writer.add_uint32(prefix + "feed_forward_length", c["intermediate_size"])  # type: ignore[arg-type]
    writer.add_uint32(prefix + "attention.head_count_kv", c["num_key_value_heads"])  # type: ignore[arg-type]
    writer.add_uint32(prefix + "attention.key_length", c["head_dim"])  # type: ignore[arg-type]
    writer.add_uint32(prefix + "attention.value_length", c["head_dim"])  # type: ignore[arg-type]


def write_2026_gguf(path: Path, name: str, ftype: FileType) -> None:
    c = TINY_2026[name]
    layers = int(c["num_hidden_layers"])  # type: ignore[call-overload]
    kinds = c.get("layer_types")
    writer = GGUFWriter(str(path), arch=name)
    a = f"{name}."
    writer.add_uint32(a + "embedding_length", c["hidden_size"])  # type: ignore[arg-type]
    writer.add_uint32(a + "attention.head_count", c["num_attention_heads"])  # type: ignore[arg-type]
    writer.add_uint32(a + "context_length", 4096)
    writer.add_uint32(a + "vocab_size", c["vocab_size"])  # type: ignore[arg-type]
    kv = int(c["num_key_value_heads"])  # type: ignore[call-overload]
    if name == "qwen35":  # Qwen3NextModel: one head_count_kv, ssm.* sizes, the MTP block in block_count
        _write_mtp_block_and_heads(writer, a, c, layers)
        writer.add_uint32(a + "full_attention_interval", 4)
        keys = ("linear_conv_kernel_dim", "linear_key_head_dim", "linear_num_key_heads", "linear_num_value_heads")
        _write_ssm(writer, a, [int(c[k]) for k in keys], inner=8 * 32)  # type: ignore[call-overload]
    elif name == "glm4moe":  # Glm4MoeModel: the NextN block in block_count, expert counts, leading dense blocks
        _write_mtp_block_and_heads(writer, a, c, layers)
        _write_experts(writer, a, c)
    elif name in ("deepseek2", "glm-dsa"):  # DeepseekV2Model: MLA as one latent KV head, the routing bias only as
        # exp_probs_b tensors; GlmMoeDsaModel adds the NextN block to block_count and the indexer's keys
        if name == "glm-dsa":
            writer.add_uint32(a + "block_count", layers + 1)
            writer.add_uint32(a + "nextn_predict_layers", 1)
            writer.add_uint32(a + "attention.indexer.head_count", c["index_n_heads"])  # type: ignore[arg-type]
            writer.add_uint32(a + "attention.indexer.key_length", c["index_head_dim"])  # type: ignore[arg-type]
            writer.add_array(a + "attention.indexer.types", [t == "full" for t in c["indexer_types"]])  # type: ignore[attr-defined]
        else:
            writer.add_uint32(a + "block_count", layers)
        writer.add_uint32(a + "feed_forward_length", c["intermediate_size"])  # type: ignore[arg-type]
        writer.add_uint32(a + "attention.head_count_kv", 1)
        rope, lora = int(c["qk_rope_head_dim"]), int(c["kv_lora_rank"])  # type: ignore[call-overload]
        writer.add_uint32(a + "attention.key_length", lora + rope)
        writer.add_uint32(a + "attention.value_length", lora)
        writer.add_uint32(a + "attention.kv_lora_rank", lora)
        writer.add_uint32(a + "attention.q_lora_rank", c["q_lora_rank"])  # type: ignore[arg-type]
        writer.add_uint32(a + "attention.key_length_mla", rope + c["qk_nope_head_dim"])  # type: ignore[operator]
        writer.add_uint32(a + "attention.value_length_mla", c["v_head_dim"])  # type: ignore[arg-type]
        writer.add_uint32(a + "rope.dimension_count", rope)
        _write_experts(writer, a, c)
    elif name == "granitehybrid":  # GraniteHybridModel: head_count_kv 0 in the Mamba layers
        writer.add_uint32(a + "block_count", layers)
        writer.add_uint32(a + "feed_forward_length", c["shared_intermediate_size"])  # type: ignore[arg-type]
        writer.add_array(a + "attention.head_count_kv", [kv if k == "attention" else 0 for k in kinds])  # type: ignore[union-attr]
        keys = ("mamba_d_conv", "mamba_d_state", "mamba_n_groups", "mamba_n_heads")
        _write_ssm(writer, a, [int(c[k]) for k in keys], inner=8 * 32)  # type: ignore[call-overload]
    elif name == "lfm2":  # LFM2Model: head_count_kv 0 in the conv layers
        writer.add_uint32(a + "block_count", layers)
        writer.add_uint32(a + "feed_forward_length", 512 * 2 // 3 // 256 * 256 + 256)  # 2/3 of block_ff_dim, to 256
        writer.add_array(a + "attention.head_count_kv", [kv if k != "conv" else 0 for k in kinds])  # type: ignore[union-attr]
        writer.add_uint32(a + "shortconv.l_cache", c["conv_L_cache"])  # type: ignore[arg-type]
    else:  # Gemma4Model: key_length is the global head size, key_length_swa the sliding one, per-layer KV heads
        writer.add_uint32(a + "block_count", layers)
        writer.add_uint32(a + "feed_forward_length", c["intermediate_size"])  # type: ignore[arg-type]
        swa = [k == "sliding_attention" for k in kinds]  # type: ignore[union-attr]
        writer.add_array(a + "attention.head_count_kv", [kv if s else 1 for s in swa])
        writer.add_uint32(a + "attention.key_length", 128)
        writer.add_uint32(a + "attention.value_length", 128)
        writer.add_uint32(a + "attention.key_length_swa", 64)
        writer.add_uint32(a + "attention.value_length_swa", 64)
        writer.add_uint32(a + "attention.sliding_window", 128)
        writer.add_array(a + "attention.sliding_window_pattern", swa)
        writer.add_uint32(a + "attention.shared_kv_layers", 0)
    writer.add_token_list([f"t{i}" for i in range(1024)])
    _write_zero_tensors(writer, from_hf_config(c), ftype)


@pytest.mark.parametrize("name", sorted(TINY_2026))
def test_a_2026_gguf_header_gives_the_architecture_its_config_gives(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.gguf"
    write_2026_gguf(path, name, FileType.Q8_0)
    header = read_gguf(path)
    from_file, from_config = architecture_from_gguf(header), from_hf_config(TINY_2026[name])
    memory_fields = ("n_layers", "n_heads", "n_kv_heads", "head_dim_k", "swa_head_dim", "ffn_size", "vocab_size",
                     "recurrent_layers", "ssm_conv_kernel", "ssm_inner_size", "ssm_state_size", "ssm_groups",
                     "ssm_heads", "nextn_layers", "swa_layers", "sliding_window", "tied_embeddings", "n_experts",
                     "n_experts_used", "expert_ffn_size", "shared_expert_ffn_size", "moe_layers", "qk_norm",
                     "attention_bias", "kv_lora_rank", "expert_probs_bias", "indexer_head_dim",
                     "indexer_layers")  # fmt: skip
    assert {f: getattr(from_file, f) for f in memory_fields} == {f: getattr(from_config, f) for f in memory_fields}
    weights = weights_from_gguf(from_file, header)
    assert weights.tensor_bytes == weight_bytes(from_config, FileType.Q8_0).tensor_bytes
    assert weights.gpu_bytes == weight_bytes(from_config, FileType.Q8_0).gpu_bytes  # MTP blocks not loaded


@pytest.mark.parametrize(
    ("context", "types", "full"),
    [
        (4096, [True, False, True, False], (True, False, True, False)),  # attention.indexer.types as written
        (202752, None, ()),  # GLM-5 / 5.1 files: no key, every layer full (is_pre_5_2)
        (1048576, None, (True, True, True, False)),  # no key at 1M: GLM_5_2_DEFAULT_INDEXER_TYPES
    ],
)
def test_a_glm_dsa_header_says_which_layers_index_as_llama_cpp_reads_it(
    context: int, types: list[bool] | None, full: tuple[bool, ...]
) -> None:
    """llama_model_glm_dsa::load_arch_hparams (src/models/glm-dsa.cpp at 0c1e57098): the key when present, else every
    layer below a 1,048,576-token n_ctx_train, else GLM-5.2's default pattern (full on 0, 1, then every fourth from
    2)."""
    c = TINY_2026["glm-dsa"]
    a = "glm-dsa."
    metadata: dict[str, object] = {
        "general.architecture": "glm-dsa", a + "block_count": 5, a + "nextn_predict_layers": 1,
        a + "context_length": context, a + "embedding_length": c["hidden_size"], a + "vocab_size": c["vocab_size"],
        a + "attention.head_count": c["num_attention_heads"], a + "attention.head_count_kv": 1,
        a + "attention.kv_lora_rank": c["kv_lora_rank"], a + "attention.q_lora_rank": c["q_lora_rank"],
        a + "attention.key_length_mla": 96, a + "attention.value_length_mla": 96, a + "rope.dimension_count": 32,
        a + "feed_forward_length": 512, a + "expert_count": 8, a + "expert_used_count": 2,
        a + "expert_feed_forward_length": 128, a + "expert_shared_count": 1, a + "leading_dense_block_count": 1,
        a + "attention.indexer.head_count": 4, a + "attention.indexer.key_length": 32,
    }  # fmt: skip
    if types is not None:
        metadata[a + "attention.indexer.types"] = types
    arch = architecture_from_gguf(GgufHeader(metadata=metadata, tensors=(), metadata_bytes=0, file_bytes=0))
    assert (arch.n_layers, arch.nextn_layers, arch.indexer_layers) == (4, 1, full)
