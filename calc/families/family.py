"""What the calculator asks of one llama.cpp architecture, in one place.

A :class:`Family` stands for one ``general.architecture`` of llama.cpp (``LLM_ARCH_*``): the Hugging Face
``model_type`` values its converter registers, how a config.json of it is read (the converter's defaults, which layers
slide, are recurrent or have experts), its tensor list as the loader creates it, what it allocates besides the KV cache
(recurrent state), how its GGUF header reads back into config.json keys, and the few per-architecture rules of
llama-quantize and of engines that run it. The generic modules (calc/hf_config.py, calc/tensors.py, calc/gguf.py,
calc/llama_quant.py, calc/recurrent.py, calc/ollama.py) ask the family and name no architecture themselves.

Each family module under calc/families/ subclasses this with its attributes and overrides the hooks it needs; the
defaults are what llama.cpp's LLM_ARCH_LLAMA does. calc/families/__init__.py registers every family.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields
from vramfit.calc.errors import UnsupportedArchitectureError
from vramfit.calc.limits import MAX_LAYERS
from vramfit.calc.tensor_specs import TensorList, llama_layers

# How a family reads its own GGUF keys: the value of ``{arch}.{key}``, or the default when the file lacks it.
GgufMeta = Callable[..., Any]


def not_modelled(name: str, *, field: str) -> UnsupportedArchitectureError:
    """The error for a variant of a family the calculator does not model ("gemma4 with shared KV layers"); the reader
    (calc/hf_config.py) adds what it does model."""
    return UnsupportedArchitectureError(
        f"vramfit does not model the architecture {name!r} yet", subject=name[:80], field=field
    )


class Family:
    """One llama.cpp architecture; the defaults are LLM_ARCH_LLAMA's."""

    # Names. ``arch`` is llama.cpp's general.architecture; ``model_types`` the config.json model_type values its
    # converter turns into it (conversion/*.py registrations); ``mirrors`` the llama.cpp files (and revision) the
    # family follows: its docstring.
    arch: ClassVar[str] = ""
    model_types: ClassVar[tuple[str, ...]] = ()
    mirrors: ClassVar[str] = ""

    # Reading config.json.
    converter_defaults: ClassVar[Mapping[str, Any]] = {}  # what the converter writes for a key the config omits
    swa_pattern: ClassVar[int] = 0  # llama_hparams::set_swa_pattern's n_pattern; 0: llama.cpp never slides
    tied_by_default: ClassVar[bool] = False  # transformers' default tie_word_embeddings for this model_type
    attention_bias_always: ClassVar[bool] = False  # the checkpoints carry q/k/v biases whatever the config says
    qk_norm: ClassVar[bool] = False  # per-head (or whole) q/k norms in every attention layer
    vocab_multiple: ClassVar[int] = 1  # the converter pads the vocabulary to a multiple of this
    parallel_hybrid: ClassVar[bool] = False  # attention and a recurrent mixer side by side in every layer (Falcon-H1)
    experts_modelled: ClassVar[bool] = True  # False: a config with experts is refused (a layout not modelled yet)
    expert_width_is_intermediate_size: ClassVar[bool] = False  # intermediate_size is the experts' width
    routing_bias: ClassVar[bool] = False  # the router may carry the noaux_tc bias exp_probs_b (DeepSeek-V3 style)
    noaux_tc_model_types: ClassVar[tuple[str, ...]] = ()  # model_types whose topk_method defaults to noaux_tc

    # The file. ``final_norm``: the tensor after the last block; ``final_norm_bias`` / ``output_bias``: LayerNorm-style
    # biases at the head; ``always_tied``: the converter never writes output.weight (token_embd is the head);
    # ``rope_freqs_always``: a rope_freqs tensor whatever the RoPE scaling; ``loaded_past_layers``: tensors of the MTP
    # blocks an ordinary context still loads.
    final_norm: ClassVar[str] = "output_norm.weight"
    final_norm_bias: ClassVar[bool] = False
    output_bias: ClassVar[bool] = False
    always_tied: ClassVar[bool] = False
    rope_freqs_always: ClassVar[bool] = False
    loaded_past_layers: ClassVar[tuple[str, ...]] = ()
    gguf_reads_swa_pattern: ClassVar[bool] = True  # attention.sliding_window_pattern is read back from the header

    # llama-quantize (src/llama-quant.cpp): SentencePiece vocabulary (no merges in the header); n_gqa taken from the
    # widest layer (Qwen3.5's converters write one head count for every layer); LLM_ARCH_FALCON's own branches.
    sentencepiece_vocab: ClassVar[bool] = False
    gqa_from_widest_layer: ClassVar[bool] = False
    falcon_quant_rules: ClassVar[bool] = False

    # Engines: Ollama runs this architecture with flash attention unless told otherwise (calc/ollama.py). llama.cpp
    # 0c1e57098 can draft with the file's MTP blocks (src/models/<arch>.cpp builds LLM_GRAPH_TYPE_DECODER_MTP), and
    # keeps recurrent-state snapshots for rollback then (llama-arch.cpp llm_arch_supports_rs_rollback).
    ollama_flash_attention: ClassVar[bool] = False
    # Attention with learned per-head sinks: a quantized K cache costs these models quality even with llama.cpp's
    # Hadamard rotation (the KV quality note, bot/render/labels.py, names its sources).
    attention_sinks: ClassVar[bool] = False
    mtp_graph: ClassVar[bool] = False
    rs_rollback: ClassVar[bool] = False

    # The graph llama-server b11434 reserves (calc/server_graph.py): feed-forward blocks and experts with a gate
    # (False: relu², up only); the query-sized tensors live at the KQ product (3 with a query projection that carries
    # the output gate, 2 where the query norm is a new tensor); which recurrent mixer the recurrent layers run
    # ("mamba2", "gated_delta_net", "short_conv"); Gemma 3n's AltUp streams of the hidden state.
    gated_ffn: ClassVar[bool] = True
    query_tensors: ClassVar[int] = 1
    recurrent_mixer: ClassVar[str] = ""
    altup_inputs: ClassVar[int] = 0

    def __init_subclass__(cls, **declared: Any) -> None:
        """A family declares in its header what differs from LLM_ARCH_LLAMA (``class Qwen3(Family, arch="qwen3",
        qk_norm=True)``) and in its docstring which llama.cpp files it mirrors (``mirrors``)."""
        super().__init_subclass__()
        unknown = sorted(name for name in declared if not hasattr(cls, name))
        if unknown:
            raise TypeError(f"{cls.__name__}: a family has no {', '.join(unknown)}")
        for name, value in declared.items():
            setattr(cls, name, value)
        if cls.__doc__:
            cls.mirrors = cls.__doc__

    # --- config.json -----------------------------------------------------------------------------------------------

    def resolve(self, config: Mapping[str, Any]) -> Family:
        """The family a config of one of ``model_types`` converts to (Nemotron-H: the MoE variant when it has
        experts)."""
        return self

    def prepare(self, config: Mapping[str, Any]) -> Mapping[str, Any]:
        """The config with the converter's defaults for the keys it omits."""
        if not self.converter_defaults:
            return config
        return {**self.converter_defaults, **{k: v for k, v in config.items() if v is not None}}

    def kv_heads(self, fields: ConfigFields, n_layers: int, n_kv_heads: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
        """Per-layer KV heads and the sliding layers' head size (0: the same as the others)."""
        return n_kv_heads, 0

    def check(self, fields: ConfigFields) -> None:
        """Refuse a config the loader cannot load, before anything is sized (BadConfigError / unsupported)."""

    def recurrent(self, fields: ConfigFields, n_layers: int) -> dict[str, Any]:
        """Which layers are recurrent and their state sizes (Architecture's recurrent_layers and ssm_* fields)."""
        return {}

    def mtp(self, fields: ConfigFields) -> dict[str, Any]:
        """Multi-token-prediction blocks the converter writes, and checks of the expert numbers."""
        return {}

    def attention_layers(
        self, fields: ConfigFields, n_layers: int, n_heads: tuple[int, ...], n_kv_heads: tuple[int, ...]
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Heads and KV heads with the layers that have no attention set to 0."""
        return n_heads, n_kv_heads

    def key_head_dim(self, fields: ConfigFields, head_k: int) -> int:
        """The key head size llama.cpp's key_length holds."""
        return head_k

    def experts(self, n_experts: int, n_used: int) -> tuple[int, int]:
        """Routed experts and experts used per token, as the converter writes them."""
        return n_experts, n_used

    def expert_width_from_intermediate_size(self, model_type: str) -> bool:
        """Whether ``intermediate_size`` is the experts' width (no dense layers) for a config of ``model_type``."""
        return self.expert_width_is_intermediate_size

    def ffn(
        self, fields: ConfigFields, n_layers: int, dense_ffn: tuple[int, ...], moe_layers: tuple[bool, ...]
    ) -> tuple[tuple[int, ...], tuple[bool, ...]]:
        """Dense feed-forward width per layer and which layers are MoE, where the family decides them itself."""
        return dense_ffn, moe_layers

    def swa_layers(self, fields: ConfigFields, n_layers: int) -> tuple[bool, ...]:
        """Which layers llama.cpp gives a sliding-window cache (empty: every layer caches the whole context)."""
        if not self.swa_pattern:
            return ()  # llama.cpp keeps full-size caches for this architecture whatever config.json says
        layer_types = fields.config.get("layer_types")
        if isinstance(layer_types, Sequence) and not isinstance(layer_types, str) and len(layer_types) == n_layers:
            return tuple(str(t) in ("sliding_attention", "sliding", "local") for t in layer_types)
        pattern = fields.number("sliding_window_pattern", default=0, high=MAX_LAYERS) or self.swa_pattern
        if pattern <= 1:
            return ()
        # llama.cpp llama_hparams::set_swa_pattern: layer il slides when il % pattern < pattern - 1.
        return tuple(il % pattern < pattern - 1 for il in range(n_layers))

    def has_qk_norm(self, config: Mapping[str, Any]) -> bool:
        return self.qk_norm

    def layout(self, fields: ConfigFields, shape: dict[str, Any]) -> dict[str, Any]:
        """The last word on the shape: ``shape`` holds Architecture's fields as read so far; the family returns the
        fields it sets itself (llama4's interleaved experts, DeepSeek V4's compression, the DSA indexers)."""
        return {}

    # --- the file --------------------------------------------------------------------------------------------------

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        """The block tensors, layer by layer, as the loader creates them."""
        llama_layers(tensors, arch)

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        """The config.json keys this family's converter turned into GGUF keys of its own, read back."""
        return {}

    # --- what llama.cpp allocates ---------------------------------------------------------------------------------

    def conv_state_values(self, arch: Architecture) -> int:
        """``llama_hparams::n_embd_r``: the convolution state of one recurrent layer and sequence, in values. Mamba's
        conv_states without the column shifted out: (d_conv − 1) × (d_inner + 2 × n_group × d_state)."""
        return max(arch.ssm_conv_kernel - 1, 0) * (arch.ssm_inner_size + 2 * arch.ssm_groups * arch.ssm_state_size)

    def is_70b(self, arch: Architecture) -> bool:
        """``model.type == LLM_TYPE_70B`` as load_hparams sets it (llama-quantize's attn_v rule)."""
        return False
