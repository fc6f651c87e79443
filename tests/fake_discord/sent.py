"""Reading what the bot sent: the embed of a message body, its fields, its buttons."""

from __future__ import annotations

import re
from typing import Any

JSON = dict[str, Any]
NO_PINGS: JSON = {"parse": []}  # allowed_mentions that ping nobody


def embed_of(body: JSON) -> JSON:
    embeds: list[JSON] = body["embeds"]
    assert len(embeds) == 1
    return embeds[0]


def fields(embed: JSON) -> dict[str, str]:
    return {f["name"]: f["value"] for f in embed.get("fields", [])}


_SIZE = r"([\d.,]+ ?[KMG]i?B)"
_SUM = re.compile(
    rf"(?:Weights|가중치) {_SIZE} \+ KV {_SIZE} \+ (?:(?:state|순환 상태) {_SIZE} \+ )?(?:other|기타) {_SIZE} = "
    rf"\*\*{_SIZE}\*\*"
)


def card_sum(embed: JSON) -> dict[str, str]:
    """The default card's one-line sum ("Weights 4.3 GiB + KV 4.0 GiB + other 0.7 GiB = **9.0 GiB** of 12.0 GiB")
    as {"weights", "kv", "state", "other", "total"} (bold as on the card: "**9.0 GiB**")."""
    found = _SUM.search(embed.get("description") or "")
    assert found is not None, embed.get("description")
    weights, kv, state, other, total = found.groups()
    return {"weights": weights, "kv": f"**{kv}**", "state": state or "", "other": other, "total": f"**{total}**"}


def custom_ids(body: JSON) -> list[str]:
    return [c["custom_id"] for row in body.get("components", []) for c in row["components"]]


def button(body: JSON, prefix: str) -> str:
    return next(cid for cid in custom_ids(body) if cid.startswith(prefix))
