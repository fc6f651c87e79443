"""The "📈" chart as a PNG: memory against context, stacked, with each asked GPU's level and where the total crosses
it (:mod:`bot.answering.chart_data` computes the series).

Drawn with matplotlib's object API on the Agg canvas (no pyplot: no global figure state in a bot that draws for many
users at once), in the card's language; Korean labels use NanumGothic, which the ``koreanize-matplotlib`` package
installs as a file (its module, which rewrites matplotlib's global settings on import, is never imported). This
module imports matplotlib, about 0.3 s: the CLI and the bot import it only when a chart is asked for.
"""

from __future__ import annotations

import io
from functools import cache
from importlib.util import find_spec
from pathlib import Path

from matplotlib import font_manager
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from vramfit.bot.answering.chart_data import ChartSeries
from vramfit.bot.i18n import Lang, Tr, _, format_tokens_short
from vramfit.calc.gpu import GIB

SIZE_PX = (1000, 560)
DPI = 100
# The plot's box in the figure, as fractions (left, bottom, width, height): fixed, so a context maps to one pixel
# column (the tests find the crossing there; the vertical marks are drawn without antialiasing, in one colour).
AXES_BOX = (0.07, 0.12, 0.6, 0.78)
STACK_COLOURS = ("#4C72B0", "#DD8452", "#8C8C8C")  # weights, KV cache, the rest
GPU_COLOURS = ("#2CA02C", "#9467BD", "#17BECF", "#BCBD22")
CROSSING_COLOUR = "#E00000"
TRAINED_COLOUR = "#555555"
FRAME_COLOUR = "#222222"
DEFAULT_FONT = "DejaVu Sans"  # matplotlib's own, shipped with it


@cache
def _korean_font() -> str:
    """The family name of NanumGothic from koreanize-matplotlib's files, added to matplotlib's font list once; ""
    when the package is missing (then Hangul would draw as boxes: the chart is still drawn)."""
    spec = find_spec("koreanize_matplotlib")
    if spec is None or spec.origin is None:
        return ""
    path = Path(spec.origin).parent / "fonts" / "NanumGothic.ttf"
    if not path.is_file():
        return ""
    for weight in ("", "Bold"):  # the crossing's label is bold
        if (face := path.with_name(f"NanumGothic{weight}.ttf")).is_file():
            font_manager.fontManager.addfont(str(face))
    return str(font_manager.FontProperties(fname=str(path)).get_name())


def render_chart(series: ChartSeries, lang: Lang) -> bytes:
    """The PNG of ``series`` with labels in ``lang``."""
    tr = Tr(lang)
    family = (_korean_font() if lang == "ko" else "") or DEFAULT_FONT
    fig = Figure(figsize=(SIZE_PX[0] / DPI, SIZE_PX[1] / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_axes(AXES_BOX)
    x = list(series.contexts)
    gib = [[v / GIB for v in values] for values in (series.weights, series.kv, series.other)]
    labels = [tr(_("Weights")), tr(_("KV cache")), tr(_("Other"))]
    ax.stackplot(x, *gib, labels=labels, colors=STACK_COLOURS, alpha=0.85, linewidth=0)
    top = max(w + k + o for w, k, o in zip(*gib, strict=True))
    for i, level in enumerate(series.gpus):
        colour = GPU_COLOURS[i % len(GPU_COLOURS)]
        usable = level.usable_bytes / GIB
        top = max(top, usable)
        ax.axhline(usable, color=colour, linewidth=2.2, label=tr(_("{gpu}: {usable} usable"), gpu=level.name,
                                                                   usable=tr.gib(level.usable_bytes)))  # fmt: skip
        if level.crossing is not None and level.crossing < series.x_max:
            ax.plot([level.crossing, level.crossing], [0, usable], color=CROSSING_COLOUR, linewidth=2,
                    linestyle=(0, (4, 2)), antialiased=False)  # fmt: skip
            ax.annotate(
                tr(_("{tokens} tokens"), tokens=tr.num(level.crossing)),
                (level.crossing, usable), xytext=(6, 8), textcoords="offset points", color=CROSSING_COLOUR,
                fontsize=11, fontweight="bold", fontfamily=family,
            )  # fmt: skip
    if series.trained_context and series.trained_context < series.x_max:
        ax.axvline(series.trained_context, color=TRAINED_COLOUR, linewidth=1.5, linestyle=":", antialiased=False)
        ax.annotate(
            tr(_("trained for {tokens}"), tokens=format_tokens_short(series.trained_context)),
            (series.trained_context, top * 1.02), xytext=(4, 0), textcoords="offset points", color=TRAINED_COLOUR,
            fontsize=9, fontfamily=family,
        )  # fmt: skip
    ax.set_xlim(0, series.x_max)
    ax.set_ylim(0, top * 1.12)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v / 1000:g}K" if v else "0"))
    ax.set_xlabel(tr(_("Context (tokens)")), fontfamily=family)
    ax.set_ylabel("GiB")
    title = tr(_("{model} · {quant}: memory by context"), model=series.model, quant=series.quant)
    ax.set_title(title, fontfamily=family)
    for spine in ax.spines.values():
        spine.set_color(FRAME_COLOUR)
    ax.grid(axis="y", color="#DDDDDD", linewidth=0.8)
    ax.set_axisbelow(True)
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    for text in legend.get_texts():
        text.set_fontfamily(family)
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=DPI)
    return out.getvalue()
