"""Text that came from a model file or a remote server (a GGUF's ``general.name``, a file name), made safe to show.

A GGUF header is anyone's bytes: its name may hold ESC and OSC sequences that clear a terminal or set its title,
BEL, bidi overrides that reverse a Discord embed's title, or zero-width characters that make two names look alike.
:func:`inert` is applied where such text enters (the sources, ``vram --gguf``) and again where it is shown (the
terminal renderer, the embeds), so nothing depends on one of the two being remembered.
"""

from __future__ import annotations

import re

# Characters that change how text around them is shown: bidi embeddings, overrides and isolates, the Arabic letter
# mark and zero-width characters (U+200B-U+200F, U+2060-U+2064, U+FEFF); with them, the private-use marks the terminal
# renderer puts around verdicts (bot.render.text.VERDICT_MARKS), so text from a file cannot colour the terminal either.
_LAYOUT = r"\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_LAYOUT_TRICKS = re.compile(f"[{_LAYOUT}]")
_DISPLAY_TRICKS = re.compile(rf"[{_LAYOUT}\ue000-\ue00f]")
_DISPLAY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 (but tab and newline), DEL and C1


def inert(text: str, *, keep_verdict_marks: bool = False) -> str:
    """``text`` with its control characters (ESC, BEL, C1; tab and newline kept) shown as "�" and its bidi
    overrides, isolates and zero-width characters dropped; ``keep_verdict_marks`` for the terminal renderer's own
    text, whose marks the command line turns into colours (text from files has lost them where it entered)."""
    tricks = _LAYOUT_TRICKS if keep_verdict_marks else _DISPLAY_TRICKS
    return _DISPLAY_CONTROL.sub("\ufffd", tricks.sub("", text))
