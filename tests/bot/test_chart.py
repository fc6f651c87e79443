"""The "📈" chart (issue 25): memory against context, stacked, each GPU's usable level, the crossing marked with its
token count where the text answer says the largest context is, the trained limit marked; `vram --chart FILE.png`
and the card's button.

The pixel checks find the plot's frame and the marks in the PNG itself (Pillow), then hold the crossing's column
against the context the JSON answer gives (``fits[].max_context``, the card's "memory would allow").
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from tests.bot.cli_json import run_json
from tests.fake_discord import EPHEMERAL
from tests.fake_discord import payloads as p
from tests.fake_discord.harness import World, make_settings, run
from tests.fake_discord.sent import button
from vramfit.bot.answering.chart_data import axis_end, chart_series
from vramfit.bot.answering.service import CalcBackend
from vramfit.bot.cli import run as vram_run
from vramfit.bot.parser import parse
from vramfit.calc import answer

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
RED = (0xE0, 0x00, 0x00)  # the crossing's dashed line
GREY = (0x55, 0x55, 0x55)  # the trained limit's dotted line
FRAME = (0x22, 0x22, 0x22)


def _columns_of(image: Image.Image, colour: tuple[int, int, int], tolerance: int = 40) -> dict[int, int]:
    """How many pixels of about ``colour`` each column holds."""
    rgb = image.convert("RGB")
    width, height = rgb.size
    found: dict[int, int] = {}
    pixels = rgb.load()
    assert pixels is not None
    for x in range(width):
        for y in range(height):
            r, g, b = pixels[x, y]  # type: ignore[misc]
            if abs(r - colour[0]) + abs(g - colour[1]) + abs(b - colour[2]) <= tolerance:
                found[x] = found.get(x, 0) + 1
    return found


def _plot_box(image: Image.Image) -> tuple[int, int]:
    """The left and right frame lines of the plot: the outermost columns of dark pixels as tall as half the image."""
    columns = _columns_of(image, FRAME, tolerance=60)
    frame = _line_columns(columns, minimum=image.size[1] // 2)
    return min(frame), max(frame)


def _line_columns(columns: dict[int, int], minimum: int) -> list[int]:
    """Groups of neighbouring columns holding a vertical line (at least ``minimum`` pixels), each as its middle."""
    xs = sorted(x for x, n in columns.items() if n >= minimum)
    groups: list[list[int]] = []
    for x in xs:
        if groups and x - groups[-1][-1] <= 2:
            groups[-1].append(x)
        else:
            groups.append([x])
    return [round(sum(g) / len(g)) for g in groups]


def test_the_crossing_is_where_the_answer_says_the_largest_context_is(tmp_path: Path) -> None:
    question = "llama3 8b 32k on a 3060 and a 4090"
    data = run_json(question)
    crossings = [f["max_context"] for f in data["fits"]]
    assert crossings[0] == 57_856  # the card: "the model's limit; memory would allow 57,856"
    png = tmp_path / "chart.png"
    assert vram_run([question, "--chart", str(png)], io.StringIO()) == 0
    image = Image.open(png)
    assert image.size == (1000, 560)
    left, right = _plot_box(image)
    end = axis_end(data["request"]["context"], 8192, crossings)  # Llama 3 8B: trained for 8,192 tokens
    red = _line_columns(_columns_of(image, RED), minimum=40)
    expected = [left + (right - left) * c / end for c in crossings]
    assert len(red) == 2 and all(abs(x - e) <= 3 for x, e in zip(red, expected, strict=True)), (red, expected)
    grey = _line_columns(_columns_of(image, GREY, tolerance=30), minimum=60)
    assert any(abs(x - (left + (right - left) * 8192 / end)) <= 3 for x in grey), grey


def test_the_stack_adds_up_to_the_answer_and_crosses_the_level_once() -> None:
    calculated = answer(parse("qwen3.5 9b 64k on a 3060").to_request())
    series = chart_series(calculated)
    level = series.gpus[0]
    assert level.crossing == calculated.fits[0].max_context
    totals = [w + k + o for w, k, o in zip(series.weights, series.kv, series.other, strict=True)]
    assert totals == sorted(totals)  # more context never needs less
    at_asked = series.contexts.index(65536) if 65536 in series.contexts else None
    if at_asked is not None:
        assert totals[at_asked] == calculated.estimate.total_bytes
    assert level.crossing is not None
    assert all(t <= level.usable_bytes for c, t in zip(series.contexts, totals, strict=True) if c <= level.crossing)
    past = [t for c, t in zip(series.contexts, totals, strict=True) if c > level.crossing + 1024]
    assert past and all(t > level.usable_bytes for t in past)


def test_no_crossing_is_drawn_where_not_even_a_short_context_fits(tmp_path: Path) -> None:
    series = chart_series(answer(parse("llama 3.3 70b on a 3060").to_request()))
    assert series.gpus[0].crossing is None
    png = tmp_path / "chart.png"
    assert vram_run(["llama 3.3 70b on a 3060", "--chart", str(png)], io.StringIO()) == 0
    assert _line_columns(_columns_of(Image.open(png), RED), minimum=40) == []


def test_the_cli_says_where_it_wrote_and_refuses_what_it_cannot_draw(tmp_path: Path) -> None:
    png = tmp_path / "c.png"
    out = io.StringIO()
    assert vram_run(["라마3 8b 32k 3060", "--chart", str(png)], out) == 0
    assert png.read_bytes().startswith(PNG_MAGIC) and f"📈 차트를 저장했어요: {png}" in out.getvalue()
    data = run_json("llama3 8b 32k 3060", "--chart", str(tmp_path / "d.png"))
    assert data["chart"] == str(tmp_path / "d.png") and (tmp_path / "d.png").is_file()
    error = run_json("what fits on a 3060", "--chart", str(tmp_path / "e.png"), status=2)["error"]
    assert error["code"] == "chart_one_model" and not (tmp_path / "e.png").exists()
    error = run_json("llama3 8b 3060", "--chart", str(tmp_path / "missing" / "f.png"), status=2)["error"]
    assert error["code"] == "chart_not_written"


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_button_sends_the_chart_to_the_asker_publicly_and_to_others_privately(lang: str) -> None:
    async def scenario() -> None:
        settings = make_settings(defer_after_seconds=2.9)
        async with World.start(backend=CalcBackend().backend(), settings=settings) as world:
            locale = "ko" if lang == "ko" else "en-US"
            interaction = await world.slash("llama3 8b 32k 3060", locale=locale)
            card = (await world.callback(interaction)).json["data"]
            message = world.message_for(interaction)
            chart_id = button(card, "vf:chart:")
            for user, private in ((None, False), (p.user(700_000_000_000_000_009, "someone-else"), True)):
                press = await world.press(message, chart_id, locale=locale, user=user)
                sent = (await world.callback(press)).json
                assert sent["type"] == 4
                assert bool((sent["data"].get("flags") or 0) & EPHEMERAL) is private
                ((name, picture),) = sent["_files"]  # the multipart upload beside payload_json
                assert name == "vramfit-chart.png" and picture.startswith(PNG_MAGIC)
                assert Image.open(io.BytesIO(picture)).size == (1000, 560)

    run(scenario())


def test_the_korean_labels_draw_in_a_hangul_font() -> None:
    from vramfit.bot.render.chart import _korean_font

    assert _korean_font() == "NanumGothic"  # from koreanize-matplotlib's files: no boxes for Hangul
    series = chart_series(answer(parse("라마3 8b 32k 3060").to_request()))
    assert json.dumps(series.model) == '"Llama 3 8B"'
