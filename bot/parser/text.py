"""Cleaning a chat message before slots are read from it."""

from __future__ import annotations

import re
import unicodedata

from vramfit.bot.parser.lexicon import HF_ORGS
from vramfit.bot.parser.numbers import normalize_written_numbers, rewrite_numbers

MAX_CHARS = 4000  # a Discord message is at most 4,000 characters; the rest of a longer text is ignored

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SPACES = re.compile(r"\s+")
_INVISIBLE = re.compile(r"[\u200b-\u200f\u2060\ufeff\u00ad]")
_MENTION = re.compile(r"<@[!&]?\d+>|<#\d+>|<a?:\w+:\d+>|<t:\d+(?::\w)?>|@everyone|@here")
_HF_URL = re.compile(r"(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co)/(?:models/)?")
_URL = re.compile(r"https?://\S+")
_HF_ORG = re.compile(r"(?<![a-z0-9])(?:" + "|".join(re.escape(o) for o in HF_ORGS) + r")/")
_COMMAND = re.compile(r"(?:^|(?<=\s))[/!]\s*vram\b")
_GLUED_BRAND = re.compile(r"(?<![a-z0-9])(rtx|gtx|gt|rx|radeon|geforce|tesla|quadro)(?=\d)")  # "rtx3090"
_MARKDOWN = re.compile(r"[*`~|>#\\]+|__+")
# "2x3090", "2 x 3090", "8xh100" → "2x 3090"; "3090x2", "h100 * 8" → "3090 x2".
_COUNT_BEFORE = re.compile(r"(?<![a-z0-9.])(\d{1,2})\s*[x×*]\s*(?=[a-z]|\d{3,4}(?!\d))")
_COUNT_AFTER = re.compile(r"(?<=\d)\s*[x×*]\s*(\d{1,2})(?![a-z0-9.])")
# "16 GB", "16기가", "16g", "16 gigs", "16GiB" → "16gb".
_MEMORY = re.compile(
    r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*(?:gib|gbs?|gigs?|gigabytes?|기가\s?바이트|기가|지비|g(?=[^a-z0-9]|$))(?![a-z0-9])"
)


# "20480MB", "12288 MiB", "8192메가": a card's memory as its spec sheet or nvidia-smi writes it, in binary megabytes,
# read as GB ("20gb"); three to seven digits, so "500m" (a model size) and "4mb" (a file) stay as they are.
_MEMORY_MB = re.compile(r"(?<![a-z0-9.])(\d{3,7})\s*(?:mib|mbs?|megabytes?|메가\s?바이트|메가)(?![a-z0-9])")


# A GPU's number read digit by digit in Hangul, as people say it: "사공칠공" 4070, "삼공팔공" 3080, "칠구공공"
# 7900. Only the shapes of GPU numbers (x0x0, xx00) and only digit syllables, so no word is read as one; a particle
# may follow ("사공칠공에서").
_KO_DIGIT = {"공": "0", "영": "0", "일": "1", "이": "2", "삼": "3", "사": "4", "오": "5", "육": "6", "칠": "7",
             "팔": "8", "구": "9"}  # fmt: skip
_KO_GPU_NUMBER = re.compile(
    r"(?<![가-힣])(?:([일이삼사오육칠팔구])[공영]([일이삼사오육칠팔구공영])[공영]"
    r"|([일이삼사오육칠팔구])([일이삼사오육칠팔구])[공영][공영])(?=[^가-힣]|$|에|으로|로|이|가|은|는|을|를|도|랑|하고|\s)"
)


def _ko_gpu_number(found: re.Match[str]) -> str:
    if found[1]:
        return f"{_KO_DIGIT[found[1]]}0{_KO_DIGIT[found[2]]}0"
    return f"{_KO_DIGIT[found[3]]}{_KO_DIGIT[found[4]]}00"


def _mb_as_gb(found: re.Match[str]) -> str:
    return f"{int(found[1]) / 1024:g}gb"


def prepare(text: str) -> str:
    """NFKC, lowercase and memory sizes spelled one way; used for both questions and catalog names."""
    text = unicodedata.normalize("NFKC", text).lower()
    return _MEMORY.sub(r"\1gb", text)


def clean(text: str) -> str:
    """A message reduced to what the parser reads: no mentions, links, markdown or command prefix; numbers as
    digits ("두 장" → "2 장", "3만 2천" → "32000"); memory sizes as "<n>gb"."""
    text = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text[:MAX_CHARS]))[:MAX_CHARS].lower()
    text = _CONTROL.sub(" ", text)
    # Every run of whitespace becomes one space before any slot pattern runs: the patterns allow `\s*` between
    # words, and on a long run of spaces adjacent `\s*` would backtrack over every split of it (seconds per message).
    text = _SPACES.sub(" ", text)
    text = _MENTION.sub(" ", text)
    text = _HF_URL.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _HF_ORG.sub(" ", text)
    text = _COMMAND.sub(" ", text)
    text = _KO_GPU_NUMBER.sub(_ko_gpu_number, text)
    text = normalize_written_numbers(text)  # before "*" is read as a count or as markdown
    text = _GLUED_BRAND.sub(r"\1 ", text)
    text = _COUNT_BEFORE.sub(r"\1x ", text)
    text = _COUNT_AFTER.sub(r" x\1", text)
    text = _MARKDOWN.sub(" ", text)
    text = rewrite_numbers(text)
    text = _MEMORY_MB.sub(_mb_as_gb, text)
    return _MEMORY.sub(r"\1gb", text)
