"""Reading a message that mentions the bot: whether it does (the bot itself or its managed role), and the question
without the mention. Shared by the mention handler and the auto-answer extension."""

from __future__ import annotations

import re

import discord


def _bot_roles(message: discord.Message, user_id: int) -> list[int]:
    """Ids of the bot's own managed role mentioned in ``message`` (people often pick it instead of the bot)."""
    return [r.id for r in message.role_mentions if r.tags is not None and r.tags.bot_id == user_id]


def mentions_bot(message: discord.Message, user_id: int) -> bool:
    """True when the message explicitly mentions the bot (``ClientUser.mentioned_in`` counts ``@everyone``)."""
    return any(user.id == user_id for user in message.mentions) or bool(_bot_roles(message, user_id))


def strip_mentions(message: discord.Message, user_id: int) -> str:
    """The question without the bot's ``<@id>``, ``<@!id>`` and managed-role mentions (other mentions stay inert)."""
    text = re.sub(rf"<@!?{user_id}>", " ", message.content)
    for role_id in _bot_roles(message, user_id):
        text = text.replace(f"<@&{role_id}>", " ")
    return " ".join(text.split())
