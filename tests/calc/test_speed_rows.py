"""Every published speed row carries where it was read and the table line it was read from: a URL that SPEED.md
names (its repository or page), and a quote in which the row's tokens/s appears as the source printed it."""

from __future__ import annotations

import re

import pytest

from tests.groundtruth import DATA, speed_rows

SPEED_MD = (DATA / "groundtruth" / "SPEED.md").read_text(encoding="utf-8")


def _named_in_speed_md(url: str) -> bool:
    """The source's repository (github.com/owner/name) or page host is named in SPEED.md."""
    repo = re.match(r"https://github\.com/([^/]+/[^/#?]+)", url)
    key = repo[1] if repo else re.sub(r"^https?://(www\.)?", "", url).split("/")[0]
    return key in SPEED_MD


@pytest.mark.parametrize("row", speed_rows(), ids=lambda r: str(r["id"]))
def test_each_row_has_its_source_and_quote(row: dict[str, object]) -> None:
    source, quote = str(row["source"]), str(row["quote"])
    assert source.startswith("https://") and _named_in_speed_md(source), source
    assert quote.strip()
    value = float(str(row["tokens_per_second"]))
    printed = {f"{value:.2f}", f"{value:.1f}", f"{value:g}", str(row["tokens_per_second"])}
    assert any(p in quote for p in printed), (row["id"], value)
