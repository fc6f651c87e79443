"""Words every renderer shares (the embed, the terminal, the JSON's messages), so a verdict reads the same in each."""

from __future__ import annotations

from vramfit.bot.i18n import _

# A verdict as a person reads it; "partial" means N of M layers run on the GPU and the rest on the CPU.
VERDICT_LABELS: dict[str, str] = {
    "fits": _("fits"),
    "tight": _("tight fit"),
    "partial": _("partly on the GPU"),
    "no": _("doesn't fit"),
}
