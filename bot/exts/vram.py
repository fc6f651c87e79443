"""``/vram`` and @mentions: the two ways to ask, both answered with the same card.

The slash command answers in the user's Discord language; a mention is answered in the question's language, as a
reply, in channels and threads; in DMs every message is a question. No privileged intent is needed: Discord sends a
bot the content of messages that mention it and of its DMs. ``@everyone`` does not count as mentioning the bot, and
bots (itself included) are never answered.
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from vramfit.bot.answering.cards import Overrides, given_options, with_unread
from vramfit.bot.answering.followups import change_only, followup_lang, from_json, merge, to_json
from vramfit.bot.bot import VramBot
from vramfit.bot.cooldowns import UserCooldown
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import Lang, Tr, lang_of_text
from vramfit.bot.i18n import _ as N_  # replies (extracted by pybabel as N_); `_` marks command strings
from vramfit.bot.render.embed import help_text, render_card, render_error
from vramfit.bot.render.log_card import render_log_card
from vramfit.bot.storage import StorageError
from vramfit.bot.storage.defaults import GuildDefaults, claim_message, guild_defaults, reply_to_mention
from vramfit.bot.storage.repository import ThreadQuestion, now_ms
from vramfit.bot.ui.attachments import attached_model, config_attachment
from vramfit.bot.ui.buttons import card_view
from vramfit.bot.ui.logs import message_log, outside_code
from vramfit.bot.ui.mentions import mentions_bot, strip_mentions
from vramfit.bot.ui.options import CONTEXT_OPTION, QUANT_OPTION, USERS_OPTION, gpu_choices, model_choices
from vramfit.bot.ui.replies import repo_links, retry_text
from vramfit.bot.ui.slash import (
    ENGINE_CHOICES,
    KV_CHOICES,
    MAX_QUERY,
    QUANT_CHOICES,
    answer_interaction,
    card_command,
    split_question,
)
from vramfit.calc.request import MAX_CONTEXT, MAX_GPU_COUNT, MAX_USERS

log = logging.getLogger(__name__)
FOLLOWUP_MS = 24 * 3600 * 1000  # a follow-up changes the question asked in its channel or thread within the last day
NO_MENTIONS = discord.AllowedMentions.none()


class Vram(commands.Cog):
    """Answer VRAM questions."""

    def __init__(self, bot: VramBot) -> None:
        self.bot = bot
        self.warned = UserCooldown(1, bot.settings.cooldown_seconds)

    @app_commands.command(name="vram", description=_("Will this LLM run on my GPU? Ask in plain words."))
    @app_commands.rename(
        query=_("query"),
        model=_("model"),
        gpu=_("gpu"),
        quant=_("quant"),
        kv_cache=_("kv_cache"),
        context=_("context"),
        users=_("users"),
        gpu_count=_("gpu_count"),
        engine=_("engine"),
        config=_("config"),
    )
    @app_commands.describe(
        query=_("Your question, e.g. “llama3 8b 32k on a 3060”"),
        model=_("Model (overrides the question)"),
        gpu=_("GPU (overrides the question)"),
        quant=QUANT_OPTION,
        kv_cache=_("KV cache type; f16 by default"),
        context=CONTEXT_OPTION,
        users=USERS_OPTION,
        gpu_count=_("How many of the GPU"),
        engine=_("Inference engine; llama.cpp by default"),
        config=_("A model's config.json from Hugging Face, for any model (overrides the model)"),
    )
    @app_commands.choices(quant=QUANT_CHOICES, kv_cache=KV_CHOICES, engine=ENGINE_CHOICES)
    @card_command
    async def vram(
        self,
        interaction: discord.Interaction[VramBot],
        query: app_commands.Range[str, 0, MAX_QUERY] = "",
        model: str | None = None,
        gpu: str | None = None,
        quant: str | None = None,
        kv_cache: str | None = None,
        context: app_commands.Range[int, 1, MAX_CONTEXT] | None = None,
        users: app_commands.Range[int, 1, MAX_USERS] | None = None,
        gpu_count: app_commands.Range[int, 1, MAX_GPU_COUNT] | None = None,
        engine: str | None = None,
        config: discord.Attachment | None = None,
    ) -> None:
        overrides = given_options(
            Overrides(), model=model, gpu=gpu, quant=quant, kv_cache=kv_cache, context=context, users=users,
            gpu_count=gpu_count, engine=engine,
        )  # fmt: skip
        await answer_interaction(self.bot, interaction, query, overrides, config=config)

    vram.autocomplete("model")(model_choices)  # presets suggested as the user types (bot.ui.options)
    vram.autocomplete("gpu")(gpu_choices)

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot or self.bot.user is None:
            return
        if message.guild is not None and not mentions_bot(message, self.bot.user.id):
            return  # in a server only explicit mentions; in DMs every message is for the bot
        if await self._is_owner_command(message):
            return
        defaults = await guild_defaults(self.bot, message.guild.id if message.guild else None)
        if defaults.autoanswers(message) or not await claim_message(self.bot, message):
            return  # an auto-answer channel answers it, or it was answered already (duplicate event, other process)
        text = strip_mentions(message, self.bot.user.id)
        attachment = config_attachment(message.attachments)  # a config.json: the model to answer for
        lang: Lang = defaults.lang or lang_of_text(outside_code(text))
        retry = self.bot.mention_cooldown.hit(message.author.id)
        if retry is not None:
            if self.warned.hit(message.author.id) is None:  # say it once per window, not to every message
                await self._reply(message, defaults, lang, content=retry_text(Tr(lang), retry))
            return
        try:  # a log attached or pasted in a code block: why it crashed, not a question (issue 28)
            diagnosis = await message_log(self.bot.off_loop, message.content, message.attachments)  # as written
        except AnswerError as error:
            await self._reply(message, defaults, lang, content=render_error(error, lang))
            return
        if diagnosis is not None:
            await self._reply(message, defaults, lang, embed=render_log_card(diagnosis, lang))
            return
        if not text and attachment is None:
            await self._reply(message, defaults, lang, content=help_text(lang))
            return
        (question, unread), overrides, followup_of = split_question(text), Overrides(), None
        if attachment is None:
            followup_of = await self._previous_question(message, question)
        if followup_of is not None:  # "32k면?", "with 64gb ram?": the question asked here before, with the change
            previous, merged = followup_of
            question, overrides = previous.text, merged
            lang = defaults.lang or followup_lang(text, previous.lang)
        try:
            if attachment is not None:
                overrides["model_ref"] = await attached_model(self.bot.off_loop, attachment)
            answer_lang = lang if followup_of is not None else defaults.lang
            card = with_unread(await self.bot.answer(question, answer_lang, overrides, defaults), unread)
        except AnswerError as error:
            links = repo_links(error)  # an unknown model: link buttons to the Hub repos that may be it
            extra: dict[str, Any] = {"view": links} if links is not None else {}
            await self._reply(message, defaults, lang, content=render_error(error, lang), **extra)
            return
        except Exception:
            # Our fault, not the asker's: say so, then let VramBot.on_error log it with where it happened.
            sorry = Tr(lang)(N_("Something went wrong on my side. It has been logged; please try again."))
            await self._reply(message, defaults, lang, content=sorry)
            raise
        pin = message.guild is not None and not defaults.private_mentions
        asked = ThreadQuestion(question, to_json(overrides), card.lang) if attachment is None else None
        if asked is not None:  # kept before the answer goes out: a follow-up may come the moment it is read
            await self._remember(message.channel.id, message, asked)  # the channel's or thread's last question
        sent = await self._reply(
            message, defaults, card.lang, embed=render_card(card, card.lang), view=card_view(card, card.lang, pin=pin)
        )
        if asked is not None and sent is not None:
            await self._remember(sent.id, message, asked)  # and this answer's, for a reply to it

    async def _previous_question(self, message: discord.Message, text: str) -> tuple[ThreadQuestion, Overrides] | None:
        """The question asked in this channel or thread in the last day and what ``text`` changes of it ("128k?",
        "램 64기가면?", "4090이면?"), or None: a question of its own, or nothing asked here before."""
        store = self.bot.store
        if store is None or not text:
            return None
        replied = message.reference.message_id if message.reference is not None else None
        try:  # a reply follows the answer it replies to; a mention, the last question of its channel or thread
            previous = await store.thread_question(replied) if replied is not None else None
            previous = previous or await store.thread_question(message.channel.id)
        except StorageError:
            return None
        if previous is None or now_ms() - previous.updated_at_ms > FOLLOWUP_MS:
            return None
        change = await self.bot.off_loop(change_only, text)
        if change is None:
            return None
        return previous, merge(from_json(previous.overrides), change)

    async def _remember(self, key: int, message: discord.Message, question: ThreadQuestion) -> None:
        """Keep the question answered here under ``key`` (a channel, a thread, or the answer's own message), so a
        follow-up there can change it (within a day)."""
        store = self.bot.store
        if store is None:
            return
        try:
            await store.set_thread_question(key, message.guild.id if message.guild else None, question)
        except StorageError:
            log.warning("Could not keep the question of %s for follow-ups", key, exc_info=True)

    async def _is_owner_command(self, message: discord.Message) -> bool:
        ctx = await self.bot.get_context(message)
        return ctx.valid and await self.bot.is_owner(message.author)

    async def _reply(
        self, message: discord.Message, defaults: GuildDefaults, lang: Lang, **kwargs: Any
    ) -> discord.Message | None:
        try:
            return await reply_to_mention(message, defaults, lang, **kwargs)  # public, or by DM (/vram-settings)
        except discord.HTTPException:
            log.warning("Could not reply to message %s in channel %s", message.id, message.channel.id, exc_info=True)
            return None


async def setup(bot: VramBot) -> None:
    """Load the Vram cog."""
    await bot.add_cog(Vram(bot))
