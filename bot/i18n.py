"""Korean and English for the bot: gettext catalogs, number formatting, and the app-command translator.

Source strings are English and are the msgids (discord.py's ``locale_str`` requires the default text to be the
message). Mark them with :func:`_` (replies) or ``locale_str as _`` (command strings) so ``pybabel extract`` finds
them; translate at the point of use with :class:`Tr`.

Catalogs are the ``.po`` files under ``locales/`` (the ``.mo`` files are gitignored): they are read with Babel and
compiled in memory once per process, so a git checkout needs no build step, and a missing Korean catalog fails
loudly at startup instead of silently showing English.
"""

from __future__ import annotations

import io
import re
from functools import lru_cache
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # Babel is imported where it is used: an English JSON answer needs none of it at start-up
    from babel.core import Locale
    from babel.numbers import NumberPattern
    from babel.support import Translations


Lang = Literal["ko", "en"]
LANGS: tuple[Lang, ...] = ("ko", "en")
BABEL_LOCALE: dict[Lang, str] = {"ko": "ko_KR", "en": "en_US"}
GIB = 1 << 30

# The catalogs, next to their package (importlib.resources would import tempfile and friends at start-up).
LOCALES_DIR = Path(import_module("vramfit.locales").__file__ or "").parent

_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")


def _(message: str) -> str:
    """Mark ``message`` for extraction; it is translated later, where the language is known."""
    return message


def lang_for_locale(locale: object) -> Lang:
    """Map a Discord locale to the bot's language: Korean for ``ko``, English for everything else."""
    # A discord.Locale (its .value is "ko", "en-US", ...) or a plain string; no discord import here, so the
    # calculator's CLI works without the bot extra installed.
    value = str(getattr(locale, "value", locale) or "")
    return "ko" if value.lower().startswith("ko") else "en"


def lang_of_text(text: str, default: Lang = "en") -> Lang:
    """Guess the language of a question: Korean when it has any Hangul, else ``default``."""
    return "ko" if _HANGUL.search(text) else default


class CatalogError(RuntimeError):
    """A shipped catalog is missing or unreadable."""


@lru_cache(maxsize=len(LANGS))
def translations(lang: Lang) -> Translations:
    """The compiled catalog for ``lang`` (read from ``locales/<lang>/LC_MESSAGES/messages.po`` once)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    from babel.support import Translations

    po_file = LOCALES_DIR / lang / "LC_MESSAGES" / "messages.po"
    try:
        with po_file.open("rb") as fp:
            catalog = read_po(fp, locale=lang)
    except (FileNotFoundError, OSError) as exc:
        raise CatalogError(f"missing catalog for {lang}: {po_file}") from exc
    buffer = io.BytesIO()
    write_mo(buffer, catalog)  # fuzzy entries are left out, as ``pybabel compile`` does
    buffer.seek(0)
    return Translations(fp=buffer)


def translate(message: str, lang: Lang, /, **fields: Any) -> str:
    """Translate a marked ``message`` into ``lang`` and fill its ``{placeholders}``."""
    text = translations(lang).gettext(message) if lang != "en" else message
    return text.format(**fields) if fields else text


@lru_cache(maxsize=16)
def _number_format(lang: Lang, digits: int) -> tuple[NumberPattern, Locale]:
    from babel.core import Locale
    from babel.numbers import parse_pattern

    pattern = "#,##0" + ("." + "0" * digits if digits else "")
    return parse_pattern(pattern), Locale.parse(BABEL_LOCALE[lang])


def format_number(value: float, lang: Lang, *, digits: int = 0) -> str:
    """Format a number with the locale's grouping (``1,234.5``) and exactly ``digits`` decimals (Babel's
    ``format_decimal`` with the pattern and locale parsed once)."""
    pattern, locale = _number_format(lang, digits)
    return str(pattern.apply(value, locale))


@lru_cache(maxsize=8192)
def _gib(tenths: int, lang: Lang) -> str:
    number = format_number(tenths / 10, lang, digits=1)
    return f"{number}GiB" if lang == "ko" else f"{number} GiB"


def format_gib(num_bytes: float, lang: Lang) -> str:
    """Bytes as GiB with one decimal: ``9.2 GiB`` in English, ``9.2GiB`` in Korean (CLDR writes no space)."""
    return _gib(round(num_bytes * 10 / GIB), lang)


def format_gb(num_bytes: float, lang: Lang) -> str:
    """Bytes as decimal gigabytes with two decimals, as the Hugging Face Hub shows file sizes (``4.92 GB``)."""
    number = format_number(round(num_bytes / 1e9, 2), lang, digits=2)
    return f"{number}GB" if lang == "ko" else f"{number} GB"


def format_small_size(num_bytes: float, lang: Lang) -> str:
    """Bytes under 1 GiB as whole MiB (``50 MiB``, Korean ``50MiB``), larger ones as :func:`format_gib`: for parts
    such as a recurrent state that one decimal of GiB would show as 0.0."""
    if num_bytes >= GIB:
        return format_gib(num_bytes, lang)
    number = format_number(max(1, round(num_bytes / (1 << 20))), lang)
    return f"{number}MiB" if lang == "ko" else f"{number} MiB"


def format_tokens_short(tokens: int) -> str:
    """A context length as people say it: ``4K``, ``32K``, ``128K``, ``1M``; other values in full."""
    if tokens >= 1 << 20 and tokens % (1 << 20) == 0:
        return f"{tokens >> 20}M"
    if tokens >= 1024 and tokens % 1024 == 0:
        return f"{tokens >> 10}K"
    return f"{tokens:,}"


class Tr:
    """Translation bound to one language: ``tr(_("..."), n=3)``, ``tr.ngettext("{n} user", "{n} users", n)``."""

    __slots__ = ("lang",)

    def __init__(self, lang: Lang) -> None:
        self.lang: Lang = lang

    def __call__(self, message: str, /, **fields: Any) -> str:
        return translate(message, self.lang, **fields)

    def ngettext(self, singular: str, plural: str, n: int, /, **fields: Any) -> str:
        """Plural-aware translation; ``{n}`` is filled with ``n`` formatted for the locale."""
        if self.lang == "en":
            text = singular if n == 1 else plural
        else:
            text = translations(self.lang).ngettext(singular, plural, n)
        return text.format(n=format_number(n, self.lang), **fields)

    def gib(self, num_bytes: float) -> str:
        return format_gib(num_bytes, self.lang)

    def gb(self, num_bytes: float) -> str:
        return format_gb(num_bytes, self.lang)

    def small_size(self, num_bytes: float) -> str:
        return format_small_size(num_bytes, self.lang)

    def num(self, value: float, digits: int = 0) -> str:
        return format_number(value, self.lang, digits=digits)
