"""The one hook the answering code calls for a server's settings: :func:`guild_defaults`.

``/vram`` and mentions call it with the guild id (``None`` in DMs) and get a :class:`GuildDefaults`:

* ``lang``: the server's answer language (``None``: follow the user, as without settings);
* :meth:`GuildDefaults.apply`: the question's overrides plus the server's default engine (when neither the text nor
  an option names one) and its GPU shortlist (when neither names a GPU): the card then shows those GPUs first;
* ``private_mentions``: answer mentions by DM instead of a public reply (see :func:`reply_to_mention`);
* :meth:`GuildDefaults.autoanswers`: whether :mod:`bot.exts.autoanswer` owns this message (an auto-answer channel
  with the message-content intent on), so the mention handler leaves it alone.

A database that cannot be reached never stops an answer: the defaults fall back to "no settings" and it is logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import discord

from vramfit.bot.answering.cards import Overrides
from vramfit.bot.i18n import Lang, Tr, _
from vramfit.bot.parser import parse
from vramfit.bot.storage.db import StorageError
from vramfit.bot.storage.repository import GuildSettings
from vramfit.calc.errors import VramfitError
from vramfit.calc.presets import load_catalog

if TYPE_CHECKING:  # annotations only: the bot (bot.bot) loads this module, so it cannot import the bot back
    from vramfit.bot.bot import VramBot  # annotations only: bot.bot imports this module

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
_WARNED_GPUS: set[str] = set()  # shortlisted ids the catalog lacks, logged once per process


@dataclass(frozen=True, slots=True)
class GuildDefaults:
    """A server's settings as the answering code uses them."""

    lang: Lang | None = None
    engine: str | None = None  # None: the calculator's default (llama.cpp)
    gpus: tuple[str, ...] = ()
    private_mentions: bool = False
    autoanswer_channels: frozenset[int] = field(default_factory=frozenset)
    message_content: bool = False  # the bot runs with the message-content intent
    reserved_mib: int = 0  # GPU memory members' desktops hold (/vram-settings in-use), taken off unless asked

    @classmethod
    def from_settings(cls, settings: GuildSettings, *, message_content: bool = False) -> GuildDefaults:
        """The settings as answers use them; a shortlisted GPU the catalog no longer has (renamed or removed in a
        release) is skipped, never an error for every question (``/vram-settings show`` lists it to the admins)."""
        known = tuple(gpu_id for gpu_id in settings.gpus if gpu_id in load_catalog().gpus)
        for gpu_id in set(settings.gpus) - set(known) - _WARNED_GPUS:
            _WARNED_GPUS.add(gpu_id)
            log.warning("A server's GPU shortlist names %r, which the catalog no longer has: skipped", gpu_id)
        return cls(
            lang=None if settings.language == "user" else settings.language,
            engine=None if settings.engine == "llama.cpp" else settings.engine,
            gpus=known,
            private_mentions=settings.mention_replies == "private",
            autoanswer_channels=settings.channels,
            message_content=message_content,
            reserved_mib=settings.reserved_mib,
        )

    def reads_question(self, overrides: Overrides) -> bool:
        """Whether :meth:`apply` would parse the question (the server sets an engine or GPUs the options do not)."""
        want_engine = self.engine is not None and "engine" not in overrides
        want_reserved = bool(self.reserved_mib) and "reserved_mib" not in overrides
        return want_engine or want_reserved or (bool(self.gpus) and not ({"gpu", "gpus"} & overrides.keys()))

    def apply(self, text: str, overrides: Overrides) -> Overrides:
        """``overrides`` plus the server's engine and GPU shortlist where the question names neither."""
        if not self.reads_question(overrides):
            return overrides
        want_engine = self.engine is not None and "engine" not in overrides
        want_gpus = bool(self.gpus) and not ({"gpu", "gpus"} & overrides.keys())
        named_engine, named_gpus, named_reserved = _named_in(text)
        out = Overrides(**overrides)
        if self.reserved_mib and "reserved_mib" not in overrides and not named_reserved:
            out["reserved_mib"] = self.reserved_mib  # the server's desktop share, unless the question says its own
        if want_engine and not named_engine and self.engine is not None:
            out["engine"] = self.engine
        if want_gpus and not named_gpus:
            count = out.pop("gpu_count", 1)  # "/vram gpu_count:2" without a GPU: two of each shortlisted GPU
            out["gpus"] = tuple((gpu_id, count) for gpu_id in self.gpus)
        return out

    def autoanswers(self, message: discord.Message) -> bool:
        """Whether the auto-answer extension answers ``message`` (so the mention handler must not)."""
        if not self.message_content or not self.autoanswer_channels or message.guild is None:
            return False
        channel = message.channel
        parent_id = getattr(channel, "parent_id", None)
        return channel.id in self.autoanswer_channels or parent_id in self.autoanswer_channels


NO_DEFAULTS = GuildDefaults()


def _named_in(text: str) -> tuple[bool, bool, bool]:
    """Whether the text names an engine, a GPU, and memory already in use (unreadable text: none of them)."""
    if not text.strip():
        return False, False, False
    try:
        parsed = parse(text)
    except VramfitError:
        return False, False, False
    return parsed.engine is not None or parsed.compare_engines, bool(parsed.gpus), bool(parsed.reserved_bytes)


async def guild_defaults(bot: VramBot, guild_id: int | None) -> GuildDefaults:
    """The defaults for answers in ``guild_id`` (none in DMs, without a store, or when the database fails)."""
    store = getattr(bot, "store", None)
    if guild_id is None or store is None:
        return NO_DEFAULTS
    try:
        settings = await store.guild(guild_id)
    except StorageError as exc:
        log.warning("Could not read the settings of guild %s (%s); answering without them", guild_id, exc)
        return NO_DEFAULTS
    except Exception:
        log.exception("Could not read the settings of guild %s; answering without them", guild_id)
        return NO_DEFAULTS
    return GuildDefaults.from_settings(settings, message_content=bot.settings.message_content)


async def claim_message(bot: VramBot, message: discord.Message) -> bool:
    """``True`` when this process should answer ``message``: the first to record it, across restarts and processes
    (a store that fails lets the answer through: one duplicate is better than silence)."""
    store = getattr(bot, "store", None)
    if store is None:
        return True
    try:
        claimed: bool = await store.claim("message", message.id, message.guild.id if message.guild else None)
    except StorageError as exc:
        log.warning("Could not record message %s as answered (%s); answering anyway", message.id, exc)
        return True
    except Exception:
        log.exception("Could not record message %s as answered; answering anyway", message.id)
        return True
    if not claimed:
        log.info("Message %s was already answered (a duplicate event or another process)", message.id)
    return claimed


async def reply_to_mention(
    message: discord.Message, defaults: GuildDefaults, lang: Lang, **kwargs: Any
) -> discord.Message | None:
    """Reply to a mention: publicly, or by DM when the server wants answers only for the asker; the public reply
    (None for a DM, or the note that one could not be sent).

    Discord has no ephemeral replies to messages, so "only for the asker" is a direct message with a link back to
    the question. When the asker's DMs are closed, a short public note says so (without the answer).
    """
    if not defaults.private_mentions or message.guild is None:
        return await message.reply(mention_author=False, allowed_mentions=NO_MENTIONS, **kwargs)
    tr = Tr(lang)
    text = kwargs.pop("content", None)
    lead = tr(_("Your question: {link}"), link=message.jump_url)
    try:
        await message.author.send(content=f"{lead}\n{text}" if text else lead, allowed_mentions=NO_MENTIONS, **kwargs)
    except discord.Forbidden:
        await message.reply(
            content=tr(_("This server sends answers privately, but I can't send you a direct message.")),
            mention_author=False,
            allowed_mentions=NO_MENTIONS,
        )
    return None
