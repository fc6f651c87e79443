"""Reading numbers the way people write them in Korean and English chat (style-ecosystem.md, section E.1).

Conventions:

* **"N k" and "N M" (context sizes).** Context lengths are powers of two by convention, so when N is a power of
  two, "N k" is N × 1024 and "N M" is N × 1024²: "32k" = 32,768, "128K" = 131,072, "1M" = 1,048,576, "1k" = 1,024.
  Any other N is decimal: "20k" = 20,000, "100k" = 100,000, "1.5k" = 1,500, "200k" = 200,000. Counts of people
  ("1k users") are always decimal.
* **A written number is taken as written**: "20000 tokens", "4096토큰", "8천" = 8,000, "3만 2천" = 32,000,
  "12만 8천" = 128,000, "삼만이천" = 32,000, "1.5만" = 15,000.
* **Sino-Korean digits** (일 이 삼 사 …) collide with ordinary syllables (이 "this", 사 "buy"), so a span made only of
  them is read as a number only when it holds a unit (십 백 천 만 억 조) and is followed by a counting word
  (토큰, 컨텍스트, 명, 장, …). Spans with Arabic digits ("3만 2천") need only the unit.
* **Native counting words** (한/하나, 두/둘, 세/셋, 네/넷, 다섯 … 열, 열두, 스무) are counts and are read only before
  a counter ("두 장", "사용자 열 명", "한 대"); the noun forms 하나/둘/셋/넷 also stand alone ("4090 둘").

Numbers too large to mean anything raise :class:`calc.errors.BadNumberError`, never ``OverflowError``.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from vramfit.bot.parser.lexicon import ENGLISH_NUMBERS, MULTIPLIER_WORDS, NATIVE_NUMBERS
from vramfit.calc.errors import BadNumberError

MAX_DIGITS = 15  # longer digit strings are not quantities anyone means
# The longest Korean number anyone writes ("구천구백구십구만 구천구백구십구", "12억 3456만 7890") is under 24
# characters; a scan stops there, so a message of 4,000 "만" reads in linear time instead of rescanning the rest of
# the message from every start position.
MAX_KOREAN_NUMBER_CHARS = 32
_ARABIC = re.compile(r"\d+(?:\.\d+)?")

SINO_DIGITS: dict[str, int] = {
    "영": 0,
    "공": 0,
    "일": 1,
    "이": 2,
    "삼": 3,
    "사": 4,
    "오": 5,
    "육": 6,
    "륙": 6,
    "칠": 7,
    "팔": 8,
    "구": 9,
}
SMALL_UNITS: dict[str, int] = {"십": 10, "백": 100, "천": 1000}
BIG_UNITS: dict[str, int] = {"만": 10**4, "억": 10**8, "조": 10**12}
_KO_NUMBER_CHARS = frozenset(SINO_DIGITS) | frozenset(SMALL_UNITS) | frozenset(BIG_UNITS)

# What may follow a span of Sino-Korean digits for it to be read as a number.
_KO_NUMBER_FOLLOWERS = re.compile(r"\s*(?:토큰|컨텍스트|문맥|명|장|개|대|비트|기가|사람|k\b|tokens?\b|ctx\b)")

_NUMBER_WITH_SUFFIX = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([km]?)\s*$", re.IGNORECASE)


def _decimal(text: str) -> Decimal:
    digits = text.replace(".", "")
    if len(digits) > MAX_DIGITS:
        raise BadNumberError(f"number too large: {text}", number=text)
    try:
        return Decimal(text)
    except InvalidOperation as exc:
        raise BadNumberError(f"not a number: {text}", number=text) from exc


def _is_power_of_two(value: Decimal) -> bool:
    if value != value.to_integral_value() or value <= 0:
        return False
    n = int(value)
    return n & (n - 1) == 0


def tokens_from_suffix(number: str, suffix: str) -> int:
    """A context size written as ``number`` + "k"/"m" (see the module docstring for the power-of-two rule)."""
    value = _decimal(number)
    unit = suffix.lower()
    if unit == "k":
        scaled = value * (1024 if _is_power_of_two(value) else 1000)
    elif unit == "m":
        scaled = value * (1 << 20 if _is_power_of_two(value) else 1_000_000)
    elif unit == "":
        scaled = value
    else:
        raise BadNumberError(f"unknown unit {suffix!r}", number=number + suffix)
    return int(scaled.to_integral_value())


def count_from_suffix(number: str, suffix: str) -> int:
    """A count ("8", "1k"): "k" is always 1,000 here."""
    value = _decimal(number)
    unit = suffix.lower()
    factor = {"": 1, "k": 1000, "m": 1_000_000}.get(unit)
    if factor is None:
        raise BadNumberError(f"unknown unit {suffix!r}", number=number + suffix)
    scaled = value * factor
    if scaled != scaled.to_integral_value():
        raise BadNumberError(f"not a whole count: {number}{suffix}", number=number + suffix)  # "1.5 users"
    return int(scaled)


def _evaluate(pieces: list[tuple[str, Decimal]]) -> Decimal:
    total = Decimal(0)
    section = Decimal(0)
    current: Decimal | None = None
    for kind, value in pieces:
        if kind == "num":
            current = value
        elif kind == "small":
            section += (current if current is not None else Decimal(1)) * value
            current = None
        else:  # big unit
            section += current if current is not None else Decimal(0)
            total += (section if section else Decimal(1)) * value
            section = Decimal(0)
            current = None
    return total + section + (current if current is not None else Decimal(0))


def _scan_korean(text: str, start: int) -> tuple[int, Decimal, bool] | None:
    """Read a Korean number at ``start``: (end, value, has_arabic_digits), or None when there is none."""
    pieces: list[tuple[str, Decimal]] = []
    has_arabic = False
    has_unit = False
    i = start
    n = min(len(text), start + MAX_KOREAN_NUMBER_CHARS)
    # Positions after which the number may end: after each unit and after each Arabic number.
    commit: tuple[int, int] | None = None  # (end position, number of pieces)
    while i < n:
        ch = text[i]
        if ch.isascii() and ch.isdigit():
            if pieces and pieces[-1][0] == "num":
                break
            m = _ARABIC.match(text, i)
            assert m is not None
            pieces.append(("num", _decimal(m.group())))
            has_arabic = True
            i = m.end()
            if has_unit:
                commit = (i, len(pieces))
            continue
        if ch in SINO_DIGITS:
            if pieces and pieces[-1][0] == "num":
                break
            pieces.append(("num", Decimal(SINO_DIGITS[ch])))
            i += 1
            continue
        if ch in SMALL_UNITS or ch in BIG_UNITS:
            kind = "small" if ch in SMALL_UNITS else "big"
            pieces.append((kind, Decimal(SMALL_UNITS.get(ch) or BIG_UNITS[ch])))
            has_unit = True
            i += 1
            commit = (i, len(pieces))
            # "3만 2천": one space may separate a unit from the next group.
            if i + 1 < n and text[i] == " " and (text[i + 1].isdigit() or text[i + 1] in _KO_NUMBER_CHARS):
                i += 1
            continue
        break
    if not has_unit or not any(kind == "num" for kind, _ in pieces):
        return None
    end = i
    if has_arabic:
        # A Sino-Korean syllable after the last unit of "8천이면" is a particle, not a digit.
        assert commit is not None
        end, kept = commit
        pieces = pieces[:kept]
    else:
        if text[end - 1] == " ":
            end -= 1
        if not _KO_NUMBER_FOLLOWERS.match(text, end):
            return None
    if not any(kind == "num" for kind, _ in pieces):
        return None
    if text[end - 1] == " ":
        end -= 1
    return end, _evaluate(pieces), has_arabic


# --- numbers written the way a calculator or a terminal prints them --------------------------------------------

# "32,768", "131,072", "1,000명": groups of three after the first; "3060,4090" and "8,1" are not.
_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?!\d|,\d)")
# "1e5", "1e309k", "10**6", "2^20": a number with an exponent (the size suffix may follow).
_EXPONENT = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)(?:e([+-]?\d+)|\s?(?:\*\*|\^)\s?(\d+))(?=[km]?(?![a-z0-9.]))")
_COUNTED = r"(?:tokens?|toks?|ctx|context|users?|people|requests?|seqs?|명|토큰|컨텍스트|사용자|유저)"
_SLOT_WORD = r"(?:context|ctx|users?|-c|-np|--parallel|컨텍스트|사용자|유저)"
# "-5 users", "-32k", "context -8192": a negative size or count (llama.cpp's "-c 8192" is a flag, not a sign).
_NEGATIVE = re.compile(
    rf"(?:(?:^|(?<=\s))[-−](\d+(?:\.\d+)?)(?:\s?[km](?![a-z0-9])|(?=\s?{_COUNTED}))"
    rf"|(?<![a-z0-9]){_SLOT_WORD}\s?[:=]?\s?[-−](\d+(?:\.\d+)?[km]?))"
)
# "inf k", "nan users", "context: infinity", "∞ tokens": not numbers.
_NON_FINITE = re.compile(
    rf"(?<![a-z0-9])(inf(?:inity)?|nan|∞)\s?(?:[km](?![a-z0-9])|(?={_COUNTED}))"
    rf"|(?<![a-z0-9]){_SLOT_WORD}\s?[:=]?\s?(inf(?:inity)?|nan|∞)(?![a-z0-9])"
)
MAX_EXPONENT = 15


def _with_exponent(m: re.Match[str]) -> str:
    token = m.group(0) + (m.string[m.end()] if m.end() < len(m.string) and m.string[m.end()] in "km" else "")
    base = _decimal(m.group(1))
    exponent_text = m.group(2) or m.group(3)
    if len(exponent_text.lstrip("+-")) > 3 or abs(int(exponent_text)) > MAX_EXPONENT:
        raise BadNumberError(f"number too large: {token}", number=token)
    exponent = int(exponent_text)
    value = base * Decimal(10) ** exponent if m.group(2) is not None else base**exponent
    if value != value.to_integral_value() or len(str(int(value))) > MAX_DIGITS:
        raise BadNumberError(f"not a whole number: {token}", number=token)
    return str(int(value))


def normalize_written_numbers(text: str) -> str:
    """Read numbers as the project itself prints them, or refuse them by name; never drop one silently.

    "32,768" → "32768" and "1,000명" → "1000명" (thousands separators, as both languages write them);
    "10**6", "2^20", "1e5" → their digits; "-5 users", "-32k", "inf k", "nan users", "1e309k" raise
    :class:`BadNumberError` naming the token. Runs on lowercased text with whitespace already collapsed.
    """
    for rx in (_NEGATIVE, _NON_FINITE):
        if (m := rx.search(text)) is not None:
            raise BadNumberError(f"not a size or count: {m.group(0).strip()}", number=m.group(0).strip())
    text = _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)
    return _EXPONENT.sub(_with_exponent, text)


def parse_korean_number(text: str) -> int:
    """Strictly read one number: "3만 2천" → 32000, "삼만이천" → 32000, "8천" → 8000, "4096" → 4096."""
    s = text.strip().replace(",", "")
    if re.fullmatch(r"\d+(?:\.\d+)?", s):
        return int(_decimal(s).to_integral_value())
    found = _scan_korean(s + " 토큰", 0)
    if found is None or found[0] != len(s):
        raise BadNumberError(f"not a number: {text}", number=text)
    return int(found[1].to_integral_value())


MAX_FLAG_CHARS = 64  # "3만 2천 토큰" is 8; a longer flag value is not a number, and is refused before any pattern runs
_CONTEXT_WORD_AT_END = re.compile(r" ?(?:tokens?|toks?|토큰|ctx|context|컨텍스트)$")


def _flag_text(text: str) -> str:
    """A flag value with its whitespace collapsed (so no pattern backtracks over a run of spaces), or refused."""
    if len(text) > MAX_FLAG_CHARS:
        shown = " ".join(text.split())[:24] + "…"
        raise BadNumberError(f"not a number: {shown}", number=shown)
    return " ".join(text.split()).lower()


def parse_context(text: str) -> int:
    """A context size as a person writes it: "32k", "128K", "1M", "8192", "4096토큰", "8천 토큰", "3만 2천".

    Raises BadNumberError when the text is not a context size; the range is the caller's to check.
    """
    s = _flag_text(text).replace(",", "")
    s = _CONTEXT_WORD_AT_END.sub("", s)
    m = _NUMBER_WITH_SUFFIX.match(s)
    if m:
        return tokens_from_suffix(m.group(1), m.group(2))
    return parse_korean_number(s)


def parse_quantity(text: str) -> int | None:
    """A number given as a flag value ("--context 32k", "--users 8", "8천", "3만 2천"), or None if it is not one.

    Context rules apply ("32k" = 32,768). Absurdly long numbers raise BadNumberError."""
    s = _flag_text(text).replace(",", "").replace("_", "")
    if not s:
        return None
    try:
        return parse_context(s)
    except BadNumberError as exc:
        if str(exc).startswith("number too large"):
            raise
    try:
        return parse_count(s)
    except BadNumberError:
        return None


def parse_count(text: str) -> int:
    """A small count: "2", "두", "열", "two", "dual"."""
    s = text.strip().lower()
    if re.fullmatch(r"\d+", s):
        return int(_decimal(s))
    for table in (NATIVE_NUMBERS, ENGLISH_NUMBERS, MULTIPLIER_WORDS):
        if s in table:
            return table[s]
    raise BadNumberError(f"not a count: {text}", number=text)


_NATIVE_BEFORE_COUNTER = re.compile(
    r"(?<![\uac00-\ud7a3])(?!세\s*대)("
    + "|".join(sorted(NATIVE_NUMBERS, key=len, reverse=True))
    + r")\s*(?=명|장|개|대|사람|분|카드|그래픽|gpu)"
)
_NATIVE_NOUN = re.compile(r"(?<![\uac00-\ud7a3])(하나|둘|셋|넷)(?=으로|로|이면|면|가|이|만|씩|도|[^\uac00-\ud7a3]|$)")
_ENGLISH_NUMBER = re.compile(r"\b(" + "|".join(sorted(ENGLISH_NUMBERS, key=len, reverse=True)) + r")\b")
_MULTIPLIER = re.compile(r"\b(" + "|".join(MULTIPLIER_WORDS) + r")\b|\ba\s+pair\s+of\b")


# A run of units and spaces ("만만 만만 …") that no digit follows can hold no number from any start inside it.
_UNITS_ONLY = re.compile(r"[십백천만억조](?:[십백천만억조]| (?=[십백천만억조]))*")
_DIGIT = re.compile(r" ?[0-9영공일이삼사오육륙칠팔구]")


def _rewrite_korean_numbers(text: str) -> str:
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        prev = text[i - 1] if i else " "
        starts_arabic = ch.isascii() and ch.isdigit() and not (prev.isascii() and (prev.isalnum() or prev == "."))
        starts_sino = ch in _KO_NUMBER_CHARS and not (
            "\uac00" <= prev <= "\ud7a3" or (prev.isascii() and prev.isalnum())
        )
        if starts_sino and ch not in SINO_DIGITS:
            run = _UNITS_ONLY.match(text, i)
            if run is not None and not _DIGIT.match(text, run.end()):
                out.append(run.group())
                i = run.end()
                continue
        if starts_arabic or starts_sino:
            found = _scan_korean(text, i)
            if found is not None:
                end, value, _ = found
                out.append(str(int(value.to_integral_value())))
                i = end
                continue
            if starts_arabic:
                m = _ARABIC.match(text, i)
                assert m is not None
                out.append(m.group())
                i = m.end()
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def rewrite_numbers(text: str) -> str:
    """Rewrite the numbers of lowercased text as Arabic digits, leaving everything else in place.

    "3만 2천" → "32000", "두 장" → "2 장", "사용자 열 명" → "사용자 10 명", "two 3090s" → "2 3090s",
    "dual 4090" → "2x 4090". Raises BadNumberError for absurdly long numbers.
    """
    if any("\uac00" <= ch <= "\ud7a3" for ch in text):
        text = _rewrite_korean_numbers(text)
        text = _NATIVE_BEFORE_COUNTER.sub(lambda m: f"{NATIVE_NUMBERS[m.group(1)]} ", text)
        text = _NATIVE_NOUN.sub(lambda m: f"{NATIVE_NUMBERS[m.group(1)]}개", text)
    text = _MULTIPLIER.sub(lambda m: f"{MULTIPLIER_WORDS.get(m.group(1) or '', 2)}x ", text)
    return _ENGLISH_NUMBER.sub(lambda m: str(ENGLISH_NUMBERS[m.group(1)]), text)
