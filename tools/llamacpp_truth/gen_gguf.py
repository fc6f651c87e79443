#!/usr/bin/env python3
"""Write an F16 GGUF with the exact architecture of a real model but all-zero weights.

Tensor data is written sparsely (the file is truncated to its final size, so
the zero-filled tensor data occupies no disk blocks). Metadata follows what
llama.cpp's convert_hf_to_gguf.py writes for the architecture; tensor names
come from gguf-py (gguf.TENSOR_NAMES) and are checked against
gguf.MODEL_TENSORS[arch].

Writers (writer_for; each measured row records the one that made its file): the builder of
arch_builders.py for the model's `builder` / `llama_arch` when there is one ("arch_builders.build_<x>"),
else this file's generic writer ("gen_gguf.generic": write_metadata + tensor_list, for qwen2, llama,
gemma2, gemma3, qwen3, qwen3moe and the original phi3).

Tokenizer: a synthetic SentencePiece ("llama") vocab of the model's GGUF vocab
size (<unk>, <s>, </s>, 256 byte tokens, then placeholder tokens).

usage: gen_gguf.py MODEL_NAME OUT.gguf
"""

import sys

import gguf
import numpy as np
from arch_builders import BUILDERS
from archs import model_config
from gguf import MODEL_TENSOR as T

ALIGN = gguf.GGUF_DEFAULT_ALIGNMENT
NP_DTYPES = {"F16": np.float16, "F32": np.float32, "I32": np.int32}


def arch_enum(name):
    for k, v in gguf.MODEL_ARCH_NAMES.items():
        if v == name:
            return k
    raise KeyError(name)


def tensor_list(c):
    """(name, numpy-order shape, dtype) for every tensor llama.cpp expects."""
    a = c["llama_arch"]
    ae = arch_enum(a)
    allowed = set(gguf.MODEL_TENSORS[ae])
    E = c["hidden_size"]
    V = c["gguf_vocab_size"] if "gguf_vocab_size" in c else c["vocab_size"]
    L = c["num_hidden_layers"]
    H = c["num_attention_heads"]
    KV = c["num_key_value_heads"]
    hd = c["head_dim"]
    FF = c["intermediate_size"]
    f16, f32 = np.float16, np.float32
    out = []

    def add(t, shape, dt, bid=None):
        assert t in allowed, f"{t} not in MODEL_TENSORS[{a}]"
        name = gguf.TENSOR_NAMES[t]
        if bid is not None:
            name = name.format(bid=bid)
        out.append((name + ".weight" if not name.endswith((".weight", ".bias")) else name, tuple(shape), dt))

    add(T.TOKEN_EMBD, (V, E), f16)
    add(T.OUTPUT_NORM, (E,), f32)
    if not c["tie_word_embeddings"]:
        add(T.OUTPUT, (V, E), f16)
    rs = c.get("rope_scaling") or {}
    if rs.get("rope_type") == "llama3":
        # convert_hf_to_gguf.py writes the llama3 rope frequency factors as a tensor
        add(T.ROPE_FREQS, (hd // 2,), f32)
    for i in range(L):
        add(T.ATTN_NORM, (E,), f32, i)
        if a == "phi3":
            out.append((f"blk.{i}.attn_qkv.weight", (H * hd + 2 * KV * hd, E), f16))
        else:
            add(T.ATTN_Q, (H * hd, E), f16, i)
            add(T.ATTN_K, (KV * hd, E), f16, i)
            add(T.ATTN_V, (KV * hd, E), f16, i)
        if c.get("attention_bias"):
            out.append((f"blk.{i}.attn_q.bias", (H * hd,), f32))
            out.append((f"blk.{i}.attn_k.bias", (KV * hd,), f32))
            out.append((f"blk.{i}.attn_v.bias", (KV * hd,), f32))
        if a in ("qwen3", "qwen3moe", "gemma3"):
            add(T.ATTN_Q_NORM, (hd,), f32, i)
            add(T.ATTN_K_NORM, (hd,), f32, i)
        add(T.ATTN_OUT, (E, H * hd), f16, i)
        if a in ("gemma2", "gemma3"):
            add(T.ATTN_POST_NORM, (E,), f32, i)
        # gemma2/3 list the same "blk.N.ffn_norm" tensor as FFN_PRE_NORM
        add(T.FFN_PRE_NORM if a in ("gemma2", "gemma3") else T.FFN_NORM, (E,), f32, i)
        if a == "qwen3moe":
            NE = c["num_experts"]
            FE = c["moe_intermediate_size"]
            add(T.FFN_GATE_INP, (NE, E), f32, i)
            add(T.FFN_GATE_EXP, (NE, FE, E), f16, i)
            add(T.FFN_UP_EXP, (NE, FE, E), f16, i)
            add(T.FFN_DOWN_EXP, (NE, E, FE), f16, i)
        elif a == "phi3":
            add(T.FFN_UP, (2 * FF, E), f16, i)
            add(T.FFN_DOWN, (E, FF), f16, i)
        else:
            add(T.FFN_GATE, (FF, E), f16, i)
            add(T.FFN_UP, (FF, E), f16, i)
            add(T.FFN_DOWN, (E, FF), f16, i)
        if a in ("gemma2", "gemma3"):
            add(T.FFN_POST_NORM, (E,), f32, i)
    # fix names (TENSOR_NAMES entries have no .weight suffix)
    fixed = []
    for n, s, d in out:
        if not (n.endswith(".weight") or n.endswith(".bias")):
            n = n + ".weight"
        fixed.append((n, s, d))
    return fixed


# The hyper-parameters the generic writer takes straight from config.json: (GGUFWriter.add_<key>, config key).
GENERIC_KEYS = (
    ("context_length", "max_position_embeddings"),
    ("embedding_length", "hidden_size"),
    ("block_count", "num_hidden_layers"),
    ("feed_forward_length", "intermediate_size"),
    ("head_count", "num_attention_heads"),
    ("head_count_kv", "num_key_value_heads"),
    ("layer_norm_rms_eps", "rms_norm_eps"),
    ("rope_freq_base", "rope_theta"),
)


def write_metadata(w, c, model_name):
    a = c["llama_arch"]
    E = c["hidden_size"]
    hd = c["head_dim"]
    V = c["gguf_vocab_size"] if "gguf_vocab_size" in c else c["vocab_size"]
    w.add_name(model_name + " (synthetic zero weights, real shapes)")
    for key, config_key in GENERIC_KEYS:  # {arch}.<key> from the config, in this order
        getattr(w, f"add_{key}")(c[config_key])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_vocab_size(V)
    if a in ("llama", "qwen3", "qwen3moe", "gemma2", "gemma3") or hd != E // c["num_attention_heads"]:
        w.add_key_length(hd)
        w.add_value_length(hd)
    if a in ("llama", "phi3"):
        w.add_rope_dimension_count(hd)
    rs = c.get("rope_scaling") or {}
    if rs.get("rope_type") == "linear":
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(rs["factor"])
    if a == "gemma2":
        w.add_attn_logit_softcapping(c["attn_logit_softcapping"])
        w.add_final_logit_softcapping(c["final_logit_softcapping"])
        w.add_sliding_window(c["sliding_window"])
    if a == "gemma3":
        w.add_sliding_window(c["sliding_window"])
    if a == "phi3" and c.get("sliding_window"):
        w.add_sliding_window(c["sliding_window"])
    if a == "qwen3moe":
        w.add_expert_count(c["num_experts"])
        w.add_expert_used_count(c["num_experts_per_tok"])
        w.add_expert_feed_forward_length(c["moe_intermediate_size"])

    write_tokenizer(w, V)


def write_tokenizer(w, V):
    # synthetic SentencePiece vocab of the right size
    # ("<|endoftext|>" is required by llama.cpp's vocab loader when general.name contains "phi-3")
    toks = ["<unk>", "<s>", "</s>", "<|endoftext|>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL] + [
        gguf.TokenType.BYTE
    ] * 256
    n_rest = V - len(toks)
    toks += [f"\u2581t{i}" for i in range(n_rest)]
    types += [gguf.TokenType.NORMAL] * n_rest
    scores = [0.0] * 4 + [0.0] * 256 + [-float(i) for i in range(n_rest)]
    w.add_tokenizer_model("llama")
    w.add_token_list(toks)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)


GENERIC = "gen_gguf.generic"

# Gemma3Model.set_gguf_parameters (conversion/gemma.py) falls back to these when a config omits them (the official
# multimodal gemma-3 config.json files name few text_config keys); without vocab_size, _create_vocab_sentencepiece
# takes the tokenizer's own 262,144 pieces and modify_tensors cuts token_embd to them.
GEMMA3_CONVERTER_DEFAULTS = {
    "max_position_embeddings": 131072,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0,
    "tie_word_embeddings": True,
    "gguf_vocab_size": 262144,
}


def writer_for(c):
    """(writer name, function) for a model config: arch_builders.build_* when the config's builder (default: its
    llama_arch) has one, else this file's generic writer (write_metadata + tensor_list)."""
    builder = c.get("builder", c["llama_arch"])
    if builder in BUILDERS:
        fn = BUILDERS[builder]
        return f"arch_builders.{fn.__name__}", fn
    return GENERIC, None


def generic_config(c):
    """the flat config the generic writer reads (converter defaults filled in where the config omits a key)"""
    if c["llama_arch"] == "gemma3":
        d = dict(GEMMA3_CONVERTER_DEFAULTS)
        if "vocab_size" in c:
            d.pop("gguf_vocab_size")  # with vocab_size the converter pads the vocabulary to it
        d.update(c)
        c = d
    return c


def build(model_name, out_path, c=None):
    """a GGUFWriter with the model's metadata and its tensor list [(name, numpy-order shape, numpy dtype)]"""
    c = model_config(model_name) if c is None else c
    wname, fn = writer_for(c)
    w = gguf.GGUFWriter(out_path, c["llama_arch"])
    if fn is not None:
        # new-style architectures (arch_builders.py): builder writes {arch}.* metadata, returns tensors
        w.add_name(model_name + " (synthetic zero weights, real shapes)")
        w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
        items = fn(w, c)
        V = next(ne[1] for n, ne, d in items if n == "token_embd.weight")
        write_tokenizer(w, V)
        tl = [(n, tuple(reversed(ne)), NP_DTYPES[d]) for n, ne, d in items]
    else:
        c = generic_config(c)
        write_metadata(w, c, model_name)
        tl = tensor_list(c)
    names = [n for n, _, _ in tl]
    assert len(names) == len(set(names)), "duplicate tensor names"
    return w, tl, wname


def write_gguf(model_name, out_path, c=None):
    """write the F16 GGUF (zero tensor data, sparse) and return its facts; c: a config instead of ARCHS[model_name]"""
    w, tl, wname = build(model_name, out_path, c)
    n_params = 0
    data_bytes = 0
    for name, shape, dt in tl:
        nb = int(np.prod(shape)) * np.dtype(dt).itemsize
        n_params += int(np.prod(shape))
        w.add_tensor_info(name, shape, np.dtype(dt), nb)
        data_bytes += gguf.GGUFWriter.ggml_pad(nb, ALIGN)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    f = w.fout[0]
    pos = f.tell()
    start = gguf.GGUFWriter.ggml_pad(pos, ALIGN)
    f.write(b"\0" * (start - pos))
    f.flush()
    # zero tensor data without writing it: extend the file sparsely
    f.truncate(start + data_bytes)
    f.close()
    print(
        f"{model_name}: {len(tl)} tensors, {n_params} params, tensor data {data_bytes} bytes, header {start} bytes "
        f"(writer {wname})"
    )
    return {
        "n_tensors": len(tl),
        "n_params": n_params,
        "data_bytes": data_bytes,
        "header_bytes": start,
        "metadata_bytes": pos,
        "writer": wname,
    }


def main(model_name, out_path):
    return write_gguf(model_name, out_path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
