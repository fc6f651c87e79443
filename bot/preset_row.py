"""Write a model preset row for ``presets/models.toml`` from a config.json, in one step.

    python -m vramfit.bot.preset_row CONFIG.json --id qwen3.5-4b --name "Qwen3.5 4B" --family Qwen3.5 \
        --org Qwen --hf-repo Qwen/Qwen3.5-4B --source URL --source-note "where the copy came from" \
        --alias "qwen3.5:4b" --alias "큐웬3.5 4b" >> presets/models.toml

The row keeps the text model's keys (:func:`vramfit.calc.hf_config.text_model_config`) except those that do not
change memory (token ids, dtypes, initialisers, the vision tower), so the preset and ``vram --config CONFIG.json``
size the same architecture; the config is checked by the calculator before anything is written. stdlib has no TOML
writer and the rows need only strings, numbers, booleans, lists and inline tables, so the few lines that write them
are here.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vramfit.calc.hf_config import declares_vision_encoder, from_hf_config, text_model_config

# Keys of a config.json that no memory rule reads.
NOT_MEMORY = frozenset({
    "architectures", "auto_map", "bos_token_id", "eos_token_id", "pad_token_id", "dtype", "torch_dtype",
    "initializer_range", "transformers_version", "use_cache", "attention_dropout", "hidden_dropout",
    "output_router_logits", "router_aux_loss_coef", "vision_config", "audio_config", "image_token_id",
    "video_token_id", "vision_start_token_id", "vision_end_token_id", "_name_or_path", "mamba_ssm_dtype",
    "time_step_limit", "time_step_min", "time_step_max", "time_step_floor", "mamba_chunk_size", "init_method",
    # What transformers' PretrainedConfig.to_dict writes for every nested config it serialises (Kimi K2.5's
    # text_config carries them all): generation, task and output switches, no memory rule among them.
    "add_cross_attention", "bad_words_ids", "begin_suppress_tokens", "chunk_size_feed_forward",
    "cross_attention_hidden_size", "decoder_start_token_id", "diversity_penalty", "do_sample", "early_stopping",
    "encoder_no_repeat_ngram_size", "exponential_decay_length_penalty", "finetuning_task", "forced_bos_token_id",
    "forced_eos_token_id", "id2label", "is_decoder", "is_encoder_decoder", "label2id", "length_penalty",
    "max_length", "min_length", "no_repeat_ngram_size", "num_beam_groups", "num_beams", "num_return_sequences",
    "output_attentions", "output_hidden_states", "output_scores", "prefix", "problem_type", "pruned_heads",
    "remove_invalid_values", "repetition_penalty", "return_dict", "return_dict_in_generate", "sep_token_id",
    "suppress_tokens", "task_specific_params", "temperature", "tf_legacy_loss", "tie_encoder_decoder",
    "tokenizer_class", "top_k", "top_p", "torchscript", "typical_p", "use_bfloat16",
})  # fmt: skip


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} has no TOML form")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, Mapping):
        inner = ", ".join(f"{key} = {toml_value(item)}" for key, item in value.items() if item is not None)
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, Sequence):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise ValueError(f"{value!r} has no TOML form")


def preset_row(config: Mapping[str, Any], fields: Mapping[str, Any]) -> str:
    """The ``[[model]]`` row: ``fields`` (id, name, family, org, hf_repo, source, source_note, aliases), whether the
    config describes a vision encoder, and the memory-relevant keys of ``config`` as ``[model.config]``. Raises the
    calculator's error for a config it cannot model."""
    text = {k: v for k, v in text_model_config(config).items() if k not in NOT_MEMORY and v is not None}
    from_hf_config(text)  # refuse a config the calculator cannot size before writing a row for it
    lines = ["[[model]]"]
    lines += [f"{key} = {toml_value(value)}" for key, value in fields.items() if value not in (None, "", [])]
    if declares_vision_encoder(config):  # the vision tower is not in [model.config]; the answers say so
        lines.append("vision_encoder = true")
    lines.append("[model.config]")
    lines += [f"{key} = {toml_value(value)}" for key, value in text.items()]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vramfit.bot.preset_row", description=__doc__.split("\n")[0])
    parser.add_argument("config", type=Path)
    for name in ("id", "name", "family", "org", "hf-repo", "source"):
        parser.add_argument(f"--{name}", required=name in ("id", "name", "source"))
    parser.add_argument("--source-note")
    parser.add_argument("--alias", action="append", default=[])
    args = parser.parse_args(argv)
    config = json.loads(args.config.read_text(encoding="utf-8"))
    fields = {
        "id": args.id,
        "name": args.name,
        "family": args.family,
        "org": args.org,
        "hf_repo": args.hf_repo,
        "source": args.source,
        "source_note": args.source_note,
        "aliases": args.alias,
    }
    sys.stdout.write("\n" + preset_row(config, fields))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
