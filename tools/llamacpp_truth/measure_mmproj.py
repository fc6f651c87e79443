"""Measure a vision projector's warmup compute buffer with llama.cpp's own mtmd (libmtmd of llama-cpp-python).

Writes an all-zero mmproj GGUF with the tensors and keys llama.cpp's converter writes for the projector
(conversion/base.py MmprojModel.set_gguf_parameters, conversion/gemma.py Gemma3VisionModel at 0c1e57098), writes
the text model it pairs with (gen_gguf.write_gguf), loads both with mtmd_init_from_file on the CPU (warmup on, as
llama-server and llama-mtmd-cli load a projector), and prints llama.cpp's own log lines: the projector's model size,
the warmup image size and ``alloc_compute_meta: CPU compute buffer size``. Nothing is computed here.

    ../../.truth-venv/bin/python measure_mmproj.py gemma3 Gemma-3-4B-it [--flash-attn auto|on|off]

Projectors: ``gemma3`` (SigLIP so400m, 896 × 896 images, 27 blocks, pooled to 256 tokens; Gemma 3 4B/12B/27B),
``qwen35-small`` and ``qwen35-large`` (Qwen3.5's two ViTs with the Qwen3-VL merger: 0.8B–4B, and 9B and the MoE
models), ``pixtral`` (Mistral Small 3.1/3.2, Magistral, Devstral Small 2), ``gemma4v`` (Gemma 4 31B and 26B-A4B),
``llama4`` (Llama 4 Scout and Maverick), ``gemma4e`` (Gemma 4 E2B and E4B: a vision tower and an audio conformer in
one file, which mtmd loads as two clip contexts, each with its own warmup and compute buffer; both are printed).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from llama_log import LINES as LOG  # noqa: E402
from llama_log import capture  # noqa: E402

# Gemma 3's vision tower (SiglipVisionConfig in google/gemma-3-4b-it's config.json, as in tests/data/configs/
# gemma-3-4b-it.json: hidden_size 1152, intermediate_size 4304, 27 layers, 16 heads, image_size 896, patch_size 14)
# and its preprocessor (image_mean and image_std 0.5). Qwen3.5's two towers (vision_config in tests/data/configs/
# Qwen3.5-4B.json and Qwen3.5-9B.json: depth 24, hidden 1024, intermediate 4096 for 0.8B–4B; depth 27, hidden 1152,
# intermediate 4304 for 9B and the MoE models; 16 heads, patch 16, 2304 position embeddings, spatial merge 2, no
# deepstack layers); Qwen3VLVisionModel derives image_size from the position count, sqrt(2304) × 16 = 768. Mistral's
# Pixtral tower of Mistral Small 3.1/3.2, Magistral Small, Devstral Small 2 and Ministral 3 (vision_config of
# Mistral3ForConditionalGeneration: hidden_size 1024, intermediate_size 4096, 24 layers, 16 heads of 64, image_size
# 1540, patch_size 14, silu; spatial_merge_size 2; LlavaVisionModel's layer_norm_eps 1e-5), as transformers' and
# vLLM's test copies of Mistral-Small-3.1-24B's config.json print it. Gemma 4 31B's and 26B-A4B's tower (vision_config
# in configs-2026's google--gemma-4-31B-it.json, transformers' _LARGE_MODEL_VISION_CONFIG: hidden 1152, intermediate
# 4304, 27 layers, 16 heads of 72, patch 16, position_embedding_size 10240, standardize; Gemma4VisionAudioModel
# writes image_size 224, "unused"). Llama 4 Scout's and Maverick's tower (vision_config in configs-2026's
# meta-llama--Llama-4-Scout-17B-16E-Instruct.json: hidden 1408, intermediate 5632, 34 layers, 16 heads, image 336,
# patch 14, pixel_shuffle_ratio 0.5, projector_input_dim and projector_output_dim 4096, norm_eps 1e-5).
# Gemma 4 E2B's and E4B's towers (vision_config and audio_config in configs-2026's google--gemma-4-E4B-it.json:
# vision hidden 768, intermediate 3072, 16 layers, 12 heads of 64, patch 16, position_embedding_size 10240,
# standardize false, use_clipped_linears true; audio hidden 1024, 12 layers, 8 heads, conv_kernel_size 5,
# subsampling_conv_channels [128, 32], output_proj_dims 1536, use_clipped_linears true; Gemma4VisionAudioModel
# writes the audio feed_forward_length as 4 × hidden and 128 mel bins, input_feat_size's default).
_PREPROCESSOR = {"layer_norm_eps": 1e-6, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
_QWEN35 = {"projector_type": "qwen3vl_merger", "image_size": 768, "patch_size": 16, "num_attention_heads": 16,
           "spatial_merge_size": 2, "num_position_embeddings": 2304, **_PREPROCESSOR}  # fmt: skip
PROJECTORS = {
    "gemma3": {"projector_type": "gemma3", "image_size": 896, "patch_size": 14, "hidden_size": 1152,
               "intermediate_size": 4304, "num_hidden_layers": 27, "num_attention_heads": 16, **_PREPROCESSOR},
    "qwen35-small": {**_QWEN35, "hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24},
    "qwen35-large": {**_QWEN35, "hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27},
    "pixtral": {"projector_type": "pixtral", "image_size": 1540, "patch_size": 14, "hidden_size": 1024,
                "intermediate_size": 4096, "num_hidden_layers": 24, "num_attention_heads": 16, "spatial_merge_size": 2,
                **_PREPROCESSOR, "layer_norm_eps": 1e-5},
    # Ministral 3's files keep the patch convolution in F32: 1.15 MiB more than Mistral Small 3.2's, at either width
    "pixtral-f32-patch": {"projector_type": "pixtral", "image_size": 1540, "patch_size": 14, "hidden_size": 1024,
                          "intermediate_size": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
                          "spatial_merge_size": 2, **_PREPROCESSOR, "layer_norm_eps": 1e-5, "patch_dtype": "f32"},
    "gemma4v": {"projector_type": "gemma4v", "image_size": 224, "patch_size": 16, "hidden_size": 1152,
                "intermediate_size": 4304, "num_hidden_layers": 27, "num_attention_heads": 16, "head_dim": 72,
                "position_embedding_size": 10240, **_PREPROCESSOR},
    "gemma4e": {"projector_type": "gemma4v", "image_size": 224, "patch_size": 16, "hidden_size": 768,
                "intermediate_size": 3072, "num_hidden_layers": 16, "num_attention_heads": 12, "head_dim": 64,
                "position_embedding_size": 10240, "standardize": False, "clipped_linears": True, **_PREPROCESSOR,
                "audio": {"projector_type": "gemma4a", "hidden_size": 1024, "intermediate_size": 4096,
                          "num_hidden_layers": 12, "num_attention_heads": 8, "num_mel_bins": 128, "conv_kernel_size": 5,
                          "subsampling_conv_channels": [128, 32], "output_proj_dims": 1536, "layer_norm_eps": 1e-6}},
    "llama4": {"projector_type": "llama4", "image_size": 336, "patch_size": 14, "hidden_size": 1408,
               "intermediate_size": 5632, "num_hidden_layers": 34, "num_attention_heads": 16, "scale_factor": 2,
               "projector_input_dim": 4096, "projector_output_dim": 4096, **_PREPROCESSOR, "layer_norm_eps": 1e-5},
}  # fmt: skip


def write_mmproj(path: str, kind: str, n_embd_text: int, gguf) -> None:  # type: ignore[no-untyped-def]
    """The projector file: keys as MmprojModel and the projector's converter write them (Gemma3VisionModel,
    Qwen3VLVisionModel), tensors as clip.cpp loads them (tools/mtmd/clip.cpp load_tensors; F16 matrices, F32 norms,
    biases and the position table, the converters' tensor_force_quant), all zero."""
    v = PROJECTORS[kind]
    w = gguf.GGUFWriter(path, arch="clip")
    w.add_type(gguf.GGUFType.MMPROJ)
    # MmprojModel.set_gguf_parameters, then the projector's, in their order
    keys = [
        ("add_file_type", gguf.LlamaFileType.MOSTLY_F16), ("add_clip_has_vision_encoder", True),
        ("add_vision_projection_dim", n_embd_text), ("add_vision_image_size", v["image_size"]),
        ("add_vision_patch_size", v["patch_size"]), ("add_vision_embedding_length", v["hidden_size"]),
        ("add_vision_feed_forward_length", v["intermediate_size"]), ("add_vision_block_count", v["num_hidden_layers"]),
        ("add_vision_head_count", v["num_attention_heads"]), ("add_vision_image_mean", v["image_mean"]),
        ("add_vision_image_std", v["image_std"]), ("add_clip_projector_type", v["projector_type"]),
    ]  # fmt: skip
    if v["projector_type"] == "gemma3":
        keys += [("add_vision_attention_layernorm_eps", v["layer_norm_eps"]), ("add_vision_use_gelu", True)]
    elif v["projector_type"] == "gemma4v":  # Gemma4VisionAudioModel (an audio tower only in the E models' files)
        keys = [k for k in keys if k[0] != "add_clip_projector_type"]
        if "audio" in v:  # MmprojModel's audio keys, after the vision ones
            a = v["audio"]
            keys += [("add_clip_has_audio_encoder", True), ("add_audio_projection_dim", n_embd_text),
                     ("add_audio_embedding_length", a["hidden_size"]),
                     ("add_audio_feed_forward_length", a["intermediate_size"]),
                     ("add_audio_block_count", a["num_hidden_layers"]),
                     ("add_audio_head_count", a["num_attention_heads"])]  # fmt: skip
        keys += [("add_clip_vision_projector_type", "gemma4v"),
                 ("add_vision_attention_layernorm_eps", v["layer_norm_eps"])]  # fmt: skip
        if "audio" in v:
            keys += [("add_clip_audio_projector_type", "gemma4a"),
                     ("add_audio_num_mel_bins", v["audio"]["num_mel_bins"]),
                     ("add_audio_attention_layernorm_eps", v["audio"]["layer_norm_eps"])]  # fmt: skip
    elif v["projector_type"] == "llama4":  # Llama4VisionModel
        keys += [("add_vision_attention_layernorm_eps", v["layer_norm_eps"]),
                 ("add_vision_projector_scale_factor", v["scale_factor"]), ("add_vision_use_gelu", True)]  # fmt: skip
    elif v["projector_type"] == "pixtral":  # LlavaVisionModel: eps, silu, the merge size (Mistral Small 3.1 on)
        keys += [("add_vision_attention_layernorm_eps", v["layer_norm_eps"]), ("add_vision_use_silu", True),
                 ("add_vision_spatial_merge_size", v["spatial_merge_size"])]  # fmt: skip
    else:  # Qwen3VLVisionModel: gelu, the merge size, the text model's eps, the deepstack flags (none set)
        keys += [("add_vision_use_gelu", True), ("add_vision_spatial_merge_size", v["spatial_merge_size"]),
                 ("add_vision_attention_layernorm_eps", v["layer_norm_eps"]),
                 ("add_vision_is_deepstack_layers", [False] * v["num_hidden_layers"])]  # fmt: skip
    for method, value in keys:
        getattr(w, method)(value)
    for name, shape, dtype in _tensors(v, n_embd_text):
        w.add_tensor(name, np.zeros(shape, dtype=dtype))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _tensors(v: dict, n_embd_text: int) -> list[tuple[str, tuple[int, ...], type]]:  # type: ignore[type-arg]
    """Name, numpy shape (the reverse of ggml's ne) and type of every tensor, in the converter's order."""
    e, ff, p = v["hidden_size"], v["intermediate_size"], v["patch_size"]
    f16, f32 = np.float16, np.float32
    if v["projector_type"] == "pixtral":
        return _pixtral_tensors(v, n_embd_text)
    if v["projector_type"] == "gemma4v" and "audio" in v:
        return _gemma4v_tensors(v, n_embd_text) + _gemma4a_tensors(v["audio"], n_embd_text)
    if v["projector_type"] == "gemma4v":
        return _gemma4v_tensors(v, n_embd_text)
    if v["projector_type"] == "llama4":
        return _llama4_tensors(v, n_embd_text)
    gemma = v["projector_type"] == "gemma3"
    n_pos = (v["image_size"] // p) ** 2 if gemma else v["num_position_embeddings"]
    out: list[tuple[str, tuple[int, ...], type]] = [("v.patch_embd.weight", (e, 3, p, p), f16)]
    if not gemma:  # the Conv3D's two temporal slices (Qwen3VLVisionModel.modify_tensors)
        out.append(("v.patch_embd.weight.1", (e, 3, p, p), f16))
    out += [("v.patch_embd.bias", (e,), f32), ("v.position_embd.weight", (n_pos, e), f32)]
    for il in range(v["num_hidden_layers"]):
        if gemma:
            for name in ("attn_q", "attn_k", "attn_v"):
                out += [(f"v.blk.{il}.{name}.weight", (e, e), f16), (f"v.blk.{il}.{name}.bias", (e,), f32)]
        else:  # one fused projection (qwen3vl.cpp views Q, K and V in it)
            out += [(f"v.blk.{il}.attn_qkv.weight", (3 * e, e), f16), (f"v.blk.{il}.attn_qkv.bias", (3 * e,), f32)]
        out += [
            (f"v.blk.{il}.attn_out.weight", (e, e), f16), (f"v.blk.{il}.attn_out.bias", (e,), f32),
            (f"v.blk.{il}.ln1.weight", (e,), f32), (f"v.blk.{il}.ln1.bias", (e,), f32),
            (f"v.blk.{il}.ln2.weight", (e,), f32), (f"v.blk.{il}.ln2.bias", (e,), f32),
            (f"v.blk.{il}.ffn_up.weight", (ff, e), f16), (f"v.blk.{il}.ffn_up.bias", (ff,), f32),
            (f"v.blk.{il}.ffn_down.weight", (e, ff), f16), (f"v.blk.{il}.ffn_down.bias", (e,), f32),
        ]  # fmt: skip
    out += [("v.post_ln.weight", (e,), f32), ("v.post_ln.bias", (e,), f32)]
    if gemma:
        # ggml ne {n_embd_text, n_embd}: siglip.cpp multiplies by its transpose
        out += [("mm.input_projection.weight", (e, n_embd_text), f16), ("mm.soft_emb_norm.weight", (e,), f32)]
    else:  # the merger: 2 × 2 patches (4e) through fc1 (4e) and fc2 to the text width (mm.0, mm.2)
        out += [("mm.0.weight", (4 * e, 4 * e), f16), ("mm.0.bias", (4 * e,), f32),
                ("mm.2.weight", (n_embd_text, 4 * e), f16), ("mm.2.bias", (n_embd_text,), f32)]  # fmt: skip
    return out


def _gemma4v_tensors(v: dict, n_embd_text: int) -> list[tuple[str, tuple[int, ...], type]]:  # type: ignore[type-arg]
    """Gemma 4's tower as tensor_mapping.py names it: the patch projection (no bias), the x and y position tables (F32),
    per block q, k, v and out (no bias), q and k norms of the head size, four RMS norms (input, post-attention,
    pre- and post-feed-forward), a gated MLP and, in the large models, the layer scalar; the standardizer's bias and
    scale where the config standardizes; the projection to the text width (clip.cpp's GEMMA4V case,
    models/gemma4v.cpp). The E models' tower clips every linear (four bounds beside each of q, k, v, out, gate, up and
    down), has no layer scalar and does not standardize; clip.cpp loads the scalar and the standardizer as optional."""
    e, ff, p, hd = v["hidden_size"], v["intermediate_size"], v["patch_size"], v["head_dim"]
    clipped = v.get("clipped_linears", False)
    f16, f32 = np.float16, np.float32
    out: list[tuple[str, tuple[int, ...], type]] = [
        ("v.patch_embd.weight", (e, 3, p, p), f16),
        ("v.position_embd.weight", (2, v["position_embedding_size"], e), f32),
    ]
    for il in range(v["num_hidden_layers"]):
        b = f"v.blk.{il}."
        shapes = {"attn_q": (e, e), "attn_k": (e, e), "attn_v": (e, e), "attn_out": (e, e), "ffn_gate": (ff, e),
                  "ffn_up": (ff, e), "ffn_down": (e, ff)}  # fmt: skip
        for name, shape in shapes.items():
            out.append((f"{b}{name}.weight", shape, f16))
            out += _clip_scalars(f"{b}{name}.weight") if clipped else []
        out += [(f"{b}{name}.weight", (hd,), f32) for name in ("attn_q_norm", "attn_k_norm")]
        out += [(f"{b}{name}.weight", (e,), f32) for name in ("ln1", "ln2", "attn_post_norm", "ffn_post_norm")]
        out += [] if clipped else [(f"{b}out_scale.weight", (1,), f32)]
    if v.get("standardize", True):
        out += [("v.std_bias", (e,), f32), ("v.std_scale", (e,), f32)]
    out.append(("mm.input_projection.weight", (n_embd_text, e), f16))
    return out


def _clip_scalars(weight: str) -> list[tuple[str, tuple[int, ...], type]]:
    """A Gemma4ClippableLinear's four bounds beside its weight: 0-D in the checkpoint, written 1-D and so F32
    (Gemma4VisionAudioModel.modify_tensors; clip.cpp reads them with get_scalar into clamp_info_map)."""
    stem = weight.removesuffix(".weight")
    return [(f"{stem}.{bound}", (1,), np.float32) for bound in ("input_min", "input_max", "output_min", "output_max")]


def _gemma4a_tensors(a: dict, n_embd_text: int) -> list[tuple[str, tuple[int, ...], type]]:  # type: ignore[type-arg]
    """Gemma 4's audio conformer as Gemma4VisionAudioModel and tensor_mapping.py name it and clip.cpp's GEMMA4A case
    loads it (models/gemma4a.cpp): two subsampling convolutions (3 × 3, stride 2, 128 then 32 channels) with their
    norms and the input projection (32 channels × 128 / 4 mel bins → hidden), all F32 (tensor_force_quant's "_conv"
    rule, applied to the checkpoint's names); per block a macaron half-step FFN (norm, up, down, post-norm), attention
    (pre-norm, q, k, v, out, the relative-position key projection, the per-dimension scale of the head size, post-norm),
    the light convolution (norm, pointwise 1 to 2 × hidden for the GLU, depthwise of the kernel size in F32, norm,
    pointwise 2), the second FFN half-step and the block's output norm, every linear but the relative one clipped; the
    output projection (hidden → output_proj_dims, with bias) and mm.a's projection to the text width."""
    h, ff, k, out_dims = a["hidden_size"], a["intermediate_size"], a["conv_kernel_size"], a["output_proj_dims"]
    c0, c1 = a["subsampling_conv_channels"]
    mel_after = a["num_mel_bins"] // 4
    head = h // a["num_attention_heads"]
    f16, f32 = np.float16, np.float32
    out: list[tuple[str, tuple[int, ...], type]] = [
        ("a.conv1d.0.weight", (c0, 1, 3, 3), f32), ("a.conv1d.0.norm.weight", (c0,), f32),
        ("a.conv1d.1.weight", (c1, c0, 3, 3), f32), ("a.conv1d.1.norm.weight", (c1,), f32),
        ("a.input_projection.weight", (h, c1 * mel_after), f32),
        ("a.pre_encode.out.weight", (out_dims, h), f16), ("a.pre_encode.out.bias", (out_dims,), f32),
        ("mm.a.input_projection.weight", (n_embd_text, out_dims), f16),
    ]  # fmt: skip

    def clipped(name: str, shape: tuple[int, ...]) -> list[tuple[str, tuple[int, ...], type]]:
        return [(name, shape, f16), *_clip_scalars(name)]

    for il in range(a["num_hidden_layers"]):
        b = f"a.blk.{il}."
        out += [(b + "ffn_norm.weight", (h,), f32), *clipped(b + "ffn_up.weight", (ff, h))]
        out += [*clipped(b + "ffn_down.weight", (h, ff)), (b + "ffn_post_norm.weight", (h,), f32)]
        out.append((b + "attn_pre_norm.weight", (h,), f32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_out"):
            out += clipped(b + name + ".weight", (h, h))
        out += [
            (b + "attn_k_rel.weight", (h, h), f16), (b + "per_dim_scale.weight", (head,), f32),
            (b + "attn_post_norm.weight", (h,), f32), (b + "conv_norm.weight", (h,), f32),
            *clipped(b + "conv_pw1.weight", (2 * h, h)), (b + "conv_dw.weight", (h, k), f32),
            (b + "norm_conv.weight", (h,), f32), *clipped(b + "conv_pw2.weight", (h, h)),
            (b + "ffn_norm_1.weight", (h,), f32), *clipped(b + "ffn_up_1.weight", (ff, h)),
            *clipped(b + "ffn_down_1.weight", (h, ff)), (b + "ffn_post_norm_1.weight", (h,), f32),
            (b + "ln2.weight", (h,), f32),
        ]  # fmt: skip
    return out


def _llama4_tensors(v: dict, n_embd_text: int) -> list[tuple[str, tuple[int, ...], type]]:  # type: ignore[type-arg]
    """Llama 4's tower: the unfold convolution as one matrix (3 × 14 × 14 → e), the class embedding and the position
    table of the patches and the class token, the pre- and post-norms, 34 blocks with biased q, k, v, out, two
    LayerNorms and a GELU MLP; the pixel-shuffle MLP (4e → 4096 → 4096, no bias) and the projection to the text
    width (clip.cpp's LLAMA4 case, models/llama4.cpp; Llama4VisionModel writes multi_modal_projector.linear_1 as
    mm.model.fc)."""
    e, ff, p, t = v["hidden_size"], v["intermediate_size"], v["patch_size"], n_embd_text
    f16, f32 = np.float16, np.float32
    n_pos = (v["image_size"] // p) ** 2 + 1
    shuffled = e * v["scale_factor"] ** 2
    out: list[tuple[str, tuple[int, ...], type]] = [
        ("v.patch_embd.weight", (e, 3 * p * p), f16), ("v.class_embd", (e,), f32),
        ("v.position_embd.weight", (n_pos, e), f32),
        ("v.pre_ln.weight", (e,), f32), ("v.pre_ln.bias", (e,), f32),
    ]  # fmt: skip
    for il in range(v["num_hidden_layers"]):
        for name in ("attn_q", "attn_k", "attn_v", "attn_out"):
            out += [(f"v.blk.{il}.{name}.weight", (e, e), f16), (f"v.blk.{il}.{name}.bias", (e,), f32)]
        out += [
            (f"v.blk.{il}.ln1.weight", (e,), f32), (f"v.blk.{il}.ln1.bias", (e,), f32),
            (f"v.blk.{il}.ln2.weight", (e,), f32), (f"v.blk.{il}.ln2.bias", (e,), f32),
            (f"v.blk.{il}.ffn_up.weight", (ff, e), f16), (f"v.blk.{il}.ffn_up.bias", (ff,), f32),
            (f"v.blk.{il}.ffn_down.weight", (e, ff), f16), (f"v.blk.{il}.ffn_down.bias", (e,), f32),
        ]  # fmt: skip
    out += [
        ("v.post_ln.weight", (e,), f32), ("v.post_ln.bias", (e,), f32),
        ("mm.model.mlp.1.weight", (v["projector_input_dim"], shuffled), f16),
        ("mm.model.mlp.2.weight", (v["projector_output_dim"], v["projector_input_dim"]), f16),
        ("mm.model.fc.weight", (t, v["projector_output_dim"]), f16),
    ]  # fmt: skip
    return out


def _pixtral_tensors(v: dict, n_embd_text: int) -> list[tuple[str, tuple[int, ...], type]]:  # type: ignore[type-arg]
    """Pixtral: a patch convolution without bias, RMS norms without bias, a gated MLP, no biases in the tower; then
    the patch merger's norm and 2 × 2 merge (4e → e), the two projector layers (e → text width → text width) and the
    [IMG_BREAK] embedding of the text width (clip.cpp's PIXTRAL case; Mistral 3's projector has no bias)."""
    e, ff, p, t = v["hidden_size"], v["intermediate_size"], v["patch_size"], n_embd_text
    f16, f32 = np.float16, np.float32
    patch = f32 if v.get("patch_dtype") == "f32" else f16
    out: list[tuple[str, tuple[int, ...], type]] = [
        ("v.patch_embd.weight", (e, 3, p, p), patch),
        ("v.pre_ln.weight", (e,), f32),
    ]
    for il in range(v["num_hidden_layers"]):
        out += [(f"v.blk.{il}.{name}.weight", (e, e), f16) for name in ("attn_q", "attn_k", "attn_v", "attn_out")]
        out += [
            (f"v.blk.{il}.ln1.weight", (e,), f32), (f"v.blk.{il}.ln2.weight", (e,), f32),
            (f"v.blk.{il}.ffn_gate.weight", (ff, e), f16), (f"v.blk.{il}.ffn_up.weight", (ff, e), f16),
            (f"v.blk.{il}.ffn_down.weight", (e, ff), f16),
        ]  # fmt: skip
    merge = v["spatial_merge_size"] ** 2
    out += [
        ("mm.input_norm.weight", (e,), f32), ("mm.patch_merger.weight", (e, merge * e), f16),
        ("mm.1.weight", (t, e), f16), ("mm.2.weight", (t, t), f16), ("v.token_embd.img_break", (t,), f32),
    ]  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("projector", choices=sorted(PROJECTORS))
    ap.add_argument("text_model", help="an archs.py name, written with gen_gguf.write_gguf")
    ap.add_argument("--flash-attn", choices=["auto", "on", "off"], default="auto")
    ap.add_argument("--gguf-py", default=None)
    ap.add_argument("--workdir", default=tempfile.gettempdir())
    ap.add_argument("--out", default=None, help="append a JSON row (llamacpp_mmproj.jsonl) here")
    a = ap.parse_args()
    if a.gguf_py:
        sys.path.insert(0, a.gguf_py)
    import archs  # type: ignore[import-not-found]
    import gen_gguf  # type: ignore[import-not-found]
    import gguf  # type: ignore[import-not-found]
    import llama_cpp as L  # type: ignore[import-not-found]
    from llama_cpp import mtmd_cpp as M  # type: ignore[import-not-found]

    text_path = os.path.join(a.workdir, f"{a.text_model}-F16.gguf")
    mmproj_path = os.path.join(a.workdir, f"mmproj-{a.projector}-{a.text_model}-F16.gguf")
    if not os.path.exists(text_path):
        gen_gguf.write_gguf(a.text_model, text_path)
    entry = archs.ARCHS[a.text_model]
    n_embd_text = int(entry.get("hidden_size") or entry["hf_config"]["text_config"]["hidden_size"])
    write_mmproj(mmproj_path, a.projector, n_embd_text, gguf)

    L.llama_log_set(capture, ctypes.c_void_p(0))
    M.mtmd_log_set(capture, ctypes.c_void_p(0))  # clip's own log (the projector's buffers, the warmup)
    L.llama_backend_init()
    mparams = L.llama_model_default_params()
    mparams.n_gpu_layers = 0
    model = L.llama_model_load_from_file(text_path.encode(), mparams)
    assert model, "text model did not load"
    params = M.mtmd_context_params_default()
    params.use_gpu = False
    params.warmup = True
    params.flash_attn_type = {"auto": -1, "off": 0, "on": 1}[a.flash_attn]
    ctx = M.mtmd_init_from_file(mmproj_path.encode(), model, params)
    for line in LOG:
        if any(k in line for k in ("model size", "warmup", "compute buffer", "flash attention", "n_patches",
                                   "projector", "image size", "error", "failed")):  # fmt: skip
            print(line.rstrip())
    print("mtmd context:", "created" if ctx else "FAILED")
    if a.out and ctx:
        text = "".join(LOG)

        # a file with an audio tower too loads it as a second clip context after the vision one: its own model
        # size, warmup and compute buffer lines (clip_init: ctx_vision, then ctx_audio)
        sizes = [float(x) for x in re.findall(r"model size:\s+([0-9.]+) MiB", text)]
        buffers = [float(x) for x in re.findall(r"CPU compute buffer size =\s+([0-9.]+) MiB", text)]
        row = {
            "projector": a.projector,
            "text_model": a.text_model,
            "n_embd_text": n_embd_text,
            "vision_config": PROJECTORS[a.projector],
            "flash_attn": a.flash_attn,
            "model_size_mib": sizes[0] if sizes else None,
            "warmup_image_size": re.findall(r"warmup with image size = ([0-9]+ x [0-9]+)", text)[-1],
            "compute_buffer_mib": buffers[0] if buffers else None,
            "log_excerpt": [line.rstrip() for line in LOG if any(k in line for k in (
                "model size", "warmup", "compute buffer", "flash attention", "projection_dim", "loaded"))],
            "backend": "CPU (llama-cpp-python CPU build, libmtmd, use_gpu false)",
            "llama_cpp_python_version": L.__version__,
            "llama_cpp_commit": "0c1e57098",
        }  # fmt: skip
        if "audio" in PROJECTORS[a.projector]:
            row |= {
                "audio_model_size_mib": sizes[1] if len(sizes) > 1 else None,
                "warmup_audio_size": int(re.findall(r"warmup with audio size = ([0-9]+)", text)[-1]),
                "audio_compute_buffer_mib": buffers[1] if len(buffers) > 1 else None,
            }
        with open(a.out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
    if ctx:
        M.mtmd_free(ctx)
    L.llama_model_free(model)
    os.remove(mmproj_path)


if __name__ == "__main__":
    main()
