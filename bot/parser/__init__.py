"""Natural-language questions ("라마3 8B 32k 3060에서 돌아가?", "will llama 3 8b run on my 3060?") → calc requests.

Pure Python (no Discord import): the ``vram`` CLI and the bot both call :func:`parse`.
"""

from vramfit.bot.parser.numbers import parse_context, parse_count, parse_korean_number, parse_quantity
from vramfit.bot.parser.parse import (
    ASSUMED_KEYS,
    EXAMPLES,
    Intent,
    ParsedQuery,
    draft_model_ref,
    no_model_error,
    parse,
    parse_gpu_spec,
)
from vramfit.bot.parser.slots import canonical_quant

__all__ = [
    "ASSUMED_KEYS",
    "EXAMPLES",
    "Intent",
    "ParsedQuery",
    "canonical_quant",
    "draft_model_ref",
    "no_model_error",
    "parse",
    "parse_context",
    "parse_count",
    "parse_gpu_spec",
    "parse_korean_number",
    "parse_quantity",
]
