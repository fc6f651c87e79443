"""Answering on one's own in the channels a server chose (``/vram-settings channels add``).

* A new forum post (its title and starter message) or a message in a chosen channel that asks a memory question
  (:func:`bot.answering.followups.asks_memory_question`) gets one answer, as a reply. In a thread (forum posts
  included) the
  first question is answered once per thread; the thread then remembers it.
* Follow-ups in that thread that change something ("what about 32k?", "q8이면?", "4090이면?") are answered
  against the thread's last question (:func:`bot.answering.followups.merge`), which then becomes the thread's question.
* Mentions of the bot in those channels are answered here too (the mention handler leaves them alone), so
  "@vramfit q8이면?" in such a thread also follows up; they follow ``/vram-settings mentions`` (public, or by DM).

Needs the privileged message-content intent (``VRAMFIT_MESSAGE_CONTENT=true``); without it Discord sends no text
for messages that do not mention the bot, and this extension stays idle. Never answers bots (itself included),
webhooks or system messages. Every answer is claimed first in the store (``answered``: a unique key per message
and per thread), so a message is answered once even when the event comes twice, after a restart, or to two
processes.
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord.ext import commands

from vramfit.bot.answering.cards import Overrides, with_unread
from vramfit.bot.answering.followups import (
    asks_memory_question,
    followup_lang,
    followup_slots,
    from_json,
    merge,
    to_json,
)
from vramfit.bot.bot import VramBot
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import Lang, Tr, lang_of_text
from vramfit.bot.render.embed import help_text, render_card, render_error
from vramfit.bot.render.log_card import render_log_card
from vramfit.bot.storage import Store, ThreadQuestion
from vramfit.bot.storage.defaults import GuildDefaults, guild_defaults, reply_to_mention
from vramfit.bot.ui.attachments import attached_model, config_attachment
from vramfit.bot.ui.buttons import card_view
from vramfit.bot.ui.logs import may_carry_log, message_log, outside_code
from vramfit.bot.ui.mentions import mentions_bot, strip_mentions
from vramfit.bot.ui.replies import retry_text
from vramfit.bot.ui.slash import split_question

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
ANSWERABLE_TYPES = (discord.MessageType.default, discord.MessageType.reply)


class AutoAnswer(commands.Cog):
    """Answer memory questions in auto-answer channels and forums."""

    def __init__(self, bot: VramBot) -> None:
        self.bot = bot
        if not bot.settings.message_content:
            log.info("Auto-answer is off: VRAMFIT_MESSAGE_CONTENT is not set (mentions and /vram still work)")

    # -- the listener --------------------------------------------------------------------------------------------

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        store = self.bot.store
        if not self.bot.settings.message_content or store is None or self.bot.user is None:
            return
        if message.guild is None or message.author.bot or message.webhook_id is not None:
            return
        if message.type not in ANSWERABLE_TYPES:
            return
        defaults = await guild_defaults(self.bot, message.guild.id)
        if not defaults.autoanswer_channels:
            return
        channel: Any = message.channel
        if isinstance(channel, discord.PartialMessageable):  # a thread the cache has not seen (yet)
            channel = await self._fetch_channel(channel.id) or channel
        parent_id = getattr(channel, "parent_id", None)
        if channel.id not in defaults.autoanswer_channels and parent_id not in defaults.autoanswer_channels:
            return
        mentioned = mentions_bot(message, self.bot.user.id)
        if mentioned and await self._is_owner_command(message):
            return
        text = strip_mentions(message, self.bot.user.id) if mentioned else " ".join(message.content.split())
        try:
            if isinstance(channel, discord.Thread):
                await self._in_thread(store, message, channel, text, defaults, mentioned=mentioned)
            else:
                await self._in_channel(store, message, text, defaults, mentioned=mentioned)
        except Exception:
            log.exception("Auto-answer failed for message %s in channel %s", message.id, channel.id)

    # -- a text channel: every question once ----------------------------------------------------------------------

    async def _in_channel(
        self, store: Store, message: discord.Message, text: str, defaults: GuildDefaults, *, mentioned: bool
    ) -> None:
        attached = _attached(message)
        if not mentioned and not attached and not await self.bot.off_loop(asks_memory_question, text):
            return
        if not await self._claim(store, message):
            return
        if not await self._allowed(message, mentioned):
            return
        overrides = await self.bot.off_loop(defaults.apply, text, Overrides())
        await self._answer(store, message, text, defaults, defaults.lang, overrides, mentioned=mentioned)

    # -- a thread (a forum post): the first question once, then follow-ups ------------------------------------------

    async def _in_thread(
        self,
        store: Store,
        message: discord.Message,
        thread: discord.Thread,
        text: str,
        defaults: GuildDefaults,
        *,
        mentioned: bool,
    ) -> None:
        previous = await store.thread_question(thread.id)
        starter = message.id == thread.id  # a forum post's first message has the thread's id
        attached = _attached(message)
        if previous is None:
            question = f"{thread.name}\n{text}".strip() if starter and thread.name else text
            if not mentioned and not attached and not await self.bot.off_loop(asks_memory_question, question):
                return
            if not await self._claim(store, message):
                return
            if not await store.claim("thread", thread.id, thread.guild.id):
                log.info("Thread %s already has its answer (another process or an earlier event)", thread.id)
                return
            if not await self._allowed(message, mentioned):
                await store.release("thread", thread.id)
                return
            overrides = await self.bot.off_loop(defaults.apply, question, Overrides())
            card_lang = await self._answer(
                store, message, question, defaults, defaults.lang, overrides, mentioned=mentioned
            )
            if card_lang is None or attached:
                # Not answered, or answered for an attached file the thread cannot keep (a follow-up of its own
                # words would be about another model): a later message may ask the thread's question.
                await store.release("thread", thread.id)
                return
            await store.set_thread_question(thread.id, thread.guild.id, ThreadQuestion(question, {}, card_lang))
            return

        change = followup_slots(text) if text else None
        if change is None or attached:  # a question of its own (a config.json attached is one)
            asked = mentioned or attached
            if asked and await self._claim(store, message) and await self._allowed(message, mentioned):
                overrides = await self.bot.off_loop(defaults.apply, text, Overrides())
                await self._answer(store, message, text, defaults, defaults.lang, overrides, mentioned=mentioned)
            return
        before = from_json(previous.overrides)
        merged = merge(before, change)
        if merged == before and not mentioned:
            return  # says what the thread already asked
        if not await self._claim(store, message):
            return
        # The thread's author asking a follow-up in their own thread asked the bot as surely as a mention: past the
        # cooldown they are told to wait, never met with silence.
        asked = mentioned or message.author.id == getattr(thread, "owner_id", None)
        if not await self._allowed(message, asked):
            return
        lang = defaults.lang or followup_lang(text, previous.lang)
        overrides = await self.bot.off_loop(defaults.apply, previous.text, merged)
        card_lang = await self._answer(store, message, previous.text, defaults, lang, overrides, mentioned=mentioned)
        if card_lang is not None:
            await store.set_thread_question(
                thread.id, thread.guild.id, ThreadQuestion(previous.text, to_json(merged), previous.lang)
            )

    # -- answering -----------------------------------------------------------------------------------------------

    async def _answer(
        self,
        store: Store,
        message: discord.Message,
        text: str,
        defaults: GuildDefaults,
        lang: Lang | None,
        overrides: Overrides,
        *,
        mentioned: bool,
    ) -> Lang | None:
        """Reply with the card (or, when asked by mention, with the error); return the card's language, or ``None``
        when no card was sent. A mention follows /vram-settings mentions here too (public, or by DM)."""
        reply_lang: Lang = lang or lang_of_text(outside_code(text))
        private = defaults if mentioned and defaults.private_mentions else None
        try:  # a log attached or pasted in a code block (a forum post asking why it crashed): its diagnosis
            diagnosis = await message_log(self.bot.off_loop, message.content, message.attachments)  # as written
        except AnswerError as error:
            await self._reply(store, message, private, reply_lang, content=render_error(error, reply_lang))
            return None
        if diagnosis is not None:
            sent = await self._reply(store, message, private, reply_lang, embed=render_log_card(diagnosis, reply_lang))
            return reply_lang if sent else None
        attachment = config_attachment(message.attachments)
        if not mentioned and attachment is None and may_carry_log(message.content, message.attachments):
            return None  # code or a file that is no engine's log, unasked: not a question either
        if not text.strip() and not overrides and attachment is None:
            await self._reply(store, message, private, reply_lang, content=help_text(reply_lang))
            return None
        try:
            if attachment is not None:  # the model is the attached config.json's, whatever the words name
                overrides = Overrides(**overrides, model_ref=await attached_model(self.bot.off_loop, attachment))
            question, unread = split_question(text)
            card = with_unread(await self.bot.answer(question, lang, overrides), unread)
        except AnswerError as error:
            log.debug("No card for message %s: %s", message.id, error.code)
            if mentioned or attachment is not None or error.code in ("unknown_model", "unknown_gpu"):
                await self._reply(store, message, private, reply_lang, content=render_error(error, reply_lang))
            return None
        sent = await self._reply(
            store, message, private, card.lang, embed=render_card(card, card.lang),
            view=card_view(card, card.lang, pin=private is None),
        )  # fmt: skip
        return card.lang if sent else None

    async def _reply(
        self, store: Store, message: discord.Message, private: GuildDefaults | None, lang: Lang, **kwargs: Any
    ) -> bool:
        """Reply in the channel, or (``private``: a mention where answers go only to the asker) by DM."""
        try:
            if private is not None:
                await reply_to_mention(message, private, lang, **kwargs)
            else:
                await message.reply(mention_author=False, allowed_mentions=NO_MENTIONS, **kwargs)
        except discord.HTTPException:
            log.warning("Could not reply to message %s in channel %s", message.id, message.channel.id, exc_info=True)
            await store.release("message", message.id)  # a redelivered event may try again
            return False
        return True

    async def _claim(self, store: Store, message: discord.Message) -> bool:
        claimed = await store.claim("message", message.id, message.guild.id if message.guild else None)
        if not claimed:
            log.info("Message %s was already answered (a duplicate event or another process)", message.id)
        return claimed

    async def _allowed(self, message: discord.Message, mentioned: bool) -> bool:
        """The per-user cooldown shared with mentions: a mention is told to wait, an unasked answer is skipped."""
        retry = self.bot.mention_cooldown.hit(message.author.id)
        if retry is None:
            return True
        if mentioned:
            lang = lang_of_text(message.content)
            await message.reply(content=retry_text(Tr(lang), retry), mention_author=False, allowed_mentions=NO_MENTIONS)
        return False

    async def _fetch_channel(self, channel_id: int) -> Any:
        try:
            return await self.bot.fetch_channel(channel_id)
        except discord.HTTPException:
            return None

    async def _is_owner_command(self, message: discord.Message) -> bool:
        ctx = await self.bot.get_context(message)
        return ctx.valid and await self.bot.is_owner(message.author)


def _attached(message: discord.Message) -> bool:
    """A config.json (a question about that model) or a log (why it crashed): answered without asking words."""
    return config_attachment(message.attachments) is not None or may_carry_log(message.content, message.attachments)


async def setup(bot: VramBot) -> None:
    """Load the auto-answer cog."""
    await bot.add_cog(AutoAnswer(bot))
