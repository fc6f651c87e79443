"""Keep the gettext catalogs in ``locales/`` in step with the source: ``python -m vramfit.bot.catalogs [update|check]``.

``update`` runs ``pybabel extract`` (config: ``babel.cfg``) into ``locales/messages.pot`` and merges it into every
``locales/<lang>/LC_MESSAGES/messages.po`` (``pybabel update``); then translate the new ``msgstr`` entries of
``ko``. ``check`` changes nothing and exits 1 when the template or a catalog is stale, or when a Korean entry is
missing, fuzzy, or has placeholders that differ from its msgid (CI and ``tests/bot/test_bot_i18n.py`` use it).
No ``.mo`` files are needed: :mod:`bot.i18n` compiles the ``.po`` files in memory at start-up.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.frontend import CommandLineInterface
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "locales"
TEMPLATE = LOCALES / "messages.pot"
BABEL_CFG = ROOT / "babel.cfg"
LANGS = ("ko", "en")
REQUIRED = ("ko",)  # every msgid needs a translation here; English is the source text
_PLACEHOLDER = re.compile(r"(?<!\{)\{([a-zA-Z_][a-zA-Z0-9_]*)(?:[!:][^{}]*)?\}(?!\})")


def _pybabel(*args: str) -> None:
    CommandLineInterface().run(["pybabel", "-q", *args])  # type: ignore[no-untyped-call]


def extract(output: Path) -> None:
    """``pybabel extract`` with the project's options (no locations, sorted: stable diffs)."""
    _pybabel(
        "extract", "-F", str(BABEL_CFG), "-c", "TRANSLATORS:", "--no-location", "--sort-output",
        "--project", "vramfit", "--msgid-bugs-address", "", "-o", str(output), str(ROOT),
    )  # fmt: skip


def po_path(lang: str) -> Path:
    return LOCALES / lang / "LC_MESSAGES" / "messages.po"


def load(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as fp:
        return read_po(fp, locale=locale)


def _key(message: Message) -> tuple[object, str | None]:
    return (message.id, message.context)


def _ids(catalog: Catalog) -> set[tuple[object, str | None]]:
    return {_key(m) for m in catalog if m.id}


def placeholders(text: str) -> set[str]:
    """The ``{name}`` fields of a brace-format string."""
    return set(_PLACEHOLDER.findall(text))


def problems() -> list[str]:
    """Everything ``check`` would complain about (empty: the catalogs are current and complete)."""
    out: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        fresh_path = Path(tmp) / "messages.pot"
        extract(fresh_path)
        fresh = load(fresh_path)
    wanted = _ids(fresh)
    if not TEMPLATE.exists():
        return [f"{TEMPLATE} is missing: run python -m vramfit.bot.catalogs update"]
    template = _ids(load(TEMPLATE))
    for msgid in sorted(map(str, wanted - template)):
        out.append(f"messages.pot lacks {msgid}")
    for msgid in sorted(map(str, template - wanted)):
        out.append(f"messages.pot has a stale {msgid}")
    for lang in LANGS:
        path = po_path(lang)
        if not path.exists():
            out.append(f"{path} is missing")
            continue
        catalog = load(path, lang)
        have = _ids(catalog)
        for msgid in sorted(map(str, wanted - have)):
            out.append(f"{lang}: lacks {msgid}")
        for msgid in sorted(map(str, have - wanted)):
            out.append(f"{lang}: has a stale {msgid}")
        if lang in REQUIRED:
            out.extend(f"{lang}: {p}" for p in translation_problems(catalog))
    return out


def translation_problems(catalog: Catalog) -> list[str]:
    """Untranslated or fuzzy entries, and placeholders that differ between msgid and msgstr."""
    out: list[str] = []
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple | list) else (message.id,)
        strs = message.string if isinstance(message.string, tuple | list) else (message.string,)
        label = repr(ids[0])
        if message.fuzzy:
            out.append(f"fuzzy {label}")
        if not all(strs):
            out.append(f"untranslated {label}")
            continue
        expected = set().union(*(placeholders(i) for i in ids))
        for s in strs:
            got = placeholders(s or "")
            if got - expected:
                out.append(f"unknown placeholder {sorted(got - expected)} in the translation of {label}")
            if len(ids) == 1 and expected - got:
                out.append(f"placeholder {sorted(expected - got)} dropped in the translation of {label}")
    return out


def update() -> None:
    """Re-extract the template and merge it into every catalog (new entries empty, stale ones dropped)."""
    LOCALES.mkdir(exist_ok=True)
    extract(TEMPLATE)
    for lang in LANGS:
        if po_path(lang).exists():
            _pybabel(
                "update", "-i", str(TEMPLATE), "-d", str(LOCALES), "-l", lang, "--no-fuzzy-matching",
                "--ignore-obsolete", "--ignore-pot-creation-date",
            )  # fmt: skip
        else:
            _pybabel("init", "-i", str(TEMPLATE), "-d", str(LOCALES), "-l", lang)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vramfit.bot.catalogs", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["update", "check"], nargs="?", default="check")
    args = parser.parse_args(argv)
    if args.action == "update":
        update()
    found = problems()
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} catalog problem(s); run: python -m vramfit.bot.catalogs update, then translate locales/ko")
        return 1
    print("catalogs are current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
