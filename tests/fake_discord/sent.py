"""Reading what the bot sent: the embed of a message body, its fields, its buttons."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
NO_PINGS: JSON = {"parse": []}  # allowed_mentions that ping nobody


def embed_of(body: JSON) -> JSON:
    embeds: list[JSON] = body["embeds"]
    assert len(embeds) == 1
    return embeds[0]


def fields(embed: JSON) -> dict[str, str]:
    return {f["name"]: f["value"] for f in embed["fields"]}


def custom_ids(body: JSON) -> list[str]:
    return [c["custom_id"] for row in body.get("components", []) for c in row["components"]]


def button(body: JSON, prefix: str) -> str:
    return next(cid for cid in custom_ids(body) if cid.startswith(prefix))
