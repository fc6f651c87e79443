"""``/vram`` and @mentions: the two ways to ask, both answered with the same card.

The slash command answers in the user's Discord language; a mention is answered in the question's language, as a
reply, in channels and threads; in DMs every message is a question. No privileged intent is needed: Discord sends a
bot the content of messages that mention it and of its DMs. ``@everyone`` does not count as mentioning the bot, and
bots (itself included) are never answered.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot.answering.cards import AnswerError, AnyCard, Overrides
from bot.cooldowns import UserCooldown
from bot.i18n import Lang, Tr, lang_for_locale, lang_of_text
from bot.i18n import _ as N_  # replies (extracted by pybabel as N_); `_` marks command strings
from bot.render.embed import help_text, render_card, render_error
from bot.storage.defaults import GuildDefaults, claim_message, guild_defaults, reply_to_mention
from bot.ui.buttons import card_view
from bot.ui.replies import retry_text, send_ephemeral, within_window
from calc.request import MAX_CONTEXT, MAX_GPU_COUNT, MAX_USERS

if TYPE_CHECKING:
    from bot.bot import VramBot

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
MAX_QUERY = 300
RESPONSE_WINDOW_SECONDS = 2.8  # Discord accepts the first response to an interaction for 3 s

KV_CHOICES = [
    app_commands.Choice(name=_("f16 (default)"), value="f16"),
    app_commands.Choice(name="bf16", value="bf16"),
    app_commands.Choice(name="q8_0", value="q8_0"),
    app_commands.Choice(name="fp8 (vLLM)", value="fp8"),
    app_commands.Choice(name="q5_1", value="q5_1"),
    app_commands.Choice(name="q5_0", value="q5_0"),
    app_commands.Choice(name="q4_1", value="q4_1"),
    app_commands.Choice(name="q4_0", value="q4_0"),
    app_commands.Choice(name="iq4_nl", value="iq4_nl"),
    app_commands.Choice(name="f32", value="f32"),
]
ENGINE_CHOICES = [
    app_commands.Choice(name=_("llama.cpp (default)"), value="llama.cpp"),
    app_commands.Choice(name="vLLM", value="vllm"),
]
QUANT_CHOICES = [
    app_commands.Choice(name=_("Q4_K_M (default)"), value="Q4_K_M"),
    *(
        app_commands.Choice(name=q, value=q)
        for q in (
            "Q5_K_M", "Q6_K", "Q8_0", "F16", "BF16", "Q4_0", "Q4_K_S", "Q5_0", "Q5_K_S", "Q3_K_M", "Q3_K_L",
            "Q3_K_S", "Q2_K", "IQ4_XS", "IQ4_NL", "IQ3_XXS", "IQ2_XS", "FP8", "INT4", "F32",
        )
    ),
]  # fmt: skip


async def answer_interaction(
    bot: VramBot, interaction: discord.Interaction[VramBot], text: str, overrides: Overrides
) -> None:
    """Answer a slash command with the card for ``text`` and ``overrides``, the server's /vram-settings applied
    (its language, its engine, and its GPU shortlist when the question names no GPU); errors go only to the asker.

    The settings, the parse and the calculation run off the event loop; when they are not done within
    ``defer_after_seconds`` the interaction is deferred, so the answer never misses Discord's window."""

    async def work() -> tuple[Lang, AnyCard | AnswerError]:
        defaults = await guild_defaults(bot, interaction.guild_id)
        lang = defaults.lang or lang_for_locale(interaction.locale)
        try:
            return lang, await bot.answer(text, lang, overrides, defaults)
        except AnswerError as error:
            return lang, error

    started = time.monotonic()
    lang, card = await within_window(interaction, work(), defer_after=bot.settings.defer_after_seconds)
    if isinstance(card, AnswerError):
        await send_ephemeral(interaction, render_error(card, lang))
        return
    embed, view = render_card(card, lang), card_view(card, lang, pin=interaction.guild_id is not None)
    if interaction.response.is_done():  # deferred: the placeholder becomes the card (follow-ups have 15 minutes)
        await interaction.edit_original_response(embed=embed, view=view, allowed_mentions=NO_MENTIONS)
        return
    window_left = max(0.1, RESPONSE_WINDOW_SECONDS - (time.monotonic() - started))
    try:
        send = interaction.response.send_message(embed=embed, view=view, allowed_mentions=NO_MENTIONS)
        await asyncio.wait_for(send, window_left)
    except TimeoutError:
        await _post_in_channel(interaction, lang, embed, view)


async def _post_in_channel(
    interaction: discord.Interaction[VramBot], lang: Lang, embed: discord.Embed, view: discord.ui.View
) -> None:
    """The reply could not get through within Discord's window (a rate limit asked to wait longer): the
    interaction can no longer be answered, so the card goes to the channel as a message, naming whose it is."""
    log.warning("The answer missed the interaction window; posting it in the channel: %s", interaction.id)
    channel = interaction.channel
    if not isinstance(channel, discord.abc.Messageable):
        return
    lead = Tr(lang)(N_("Answer to {user}'s /vram"), user=interaction.user.mention)
    try:
        await channel.send(content=lead, embed=embed, view=view, allowed_mentions=NO_MENTIONS)
    except discord.HTTPException:
        log.warning("Could not post the late answer in channel %s", interaction.channel_id, exc_info=True)


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
    )
    @app_commands.describe(
        query=_("Your question, e.g. “llama3 8b 32k on a 3060”"),
        model=_("Model (overrides the question)"),
        gpu=_("GPU (overrides the question)"),
        quant=_("Weight format; Q4_K_M by default"),
        kv_cache=_("KV cache type; f16 by default"),
        context=_("Context length in tokens per user; 8192 by default"),
        users=_("Users served at once; 1 by default"),
        gpu_count=_("How many of the GPU"),
        engine=_("Inference engine; llama.cpp by default"),
    )
    @app_commands.choices(quant=QUANT_CHOICES, kv_cache=KV_CHOICES, engine=ENGINE_CHOICES)
    @app_commands.allowed_installs(guilds=True, users=True)
    @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    @app_commands.checks.dynamic_cooldown(lambda i: i.client.slash_cooldown(i))
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
    ) -> None:
        overrides = Overrides()
        for key, value in (
            ("model", model),
            ("gpu", gpu),
            ("quant", quant),
            ("kv_cache", kv_cache),
            ("context", context),
            ("users", users),
            ("gpu_count", gpu_count),
            ("engine", engine),
        ):
            if value is not None:
                overrides[key] = value  # type: ignore[literal-required]
        await answer_interaction(self.bot, interaction, query, overrides)

    @vram.autocomplete("model")
    async def _model_autocomplete(
        self, interaction: discord.Interaction[VramBot], current: str
    ) -> list[app_commands.Choice[str]]:
        return [app_commands.Choice(name=label[:100], value=value) for label, value in self._suggest("model", current)]

    @vram.autocomplete("gpu")
    async def _gpu_autocomplete(
        self, interaction: discord.Interaction[VramBot], current: str
    ) -> list[app_commands.Choice[str]]:
        return [app_commands.Choice(name=label[:100], value=value) for label, value in self._suggest("gpu", current)]

    def _suggest(self, kind: str, current: str) -> list[tuple[str, str]]:
        source = self.bot.backend.suggest_models if kind == "model" else self.bot.backend.suggest_gpus
        try:
            return source(current[:100])[:25]
        except Exception:
            log.exception("Autocomplete for %s failed on %r", kind, current)
            return []

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
        lang: Lang = defaults.lang or lang_of_text(text)
        retry = self.bot.mention_cooldown.hit(message.author.id)
        if retry is not None:
            if self.warned.hit(message.author.id) is None:  # say it once per window, not to every message
                await self._reply(message, defaults, lang, content=retry_text(Tr(lang), retry))
            return
        if not text:
            await self._reply(message, defaults, lang, content=help_text(lang))
            return
        try:
            card = await self.bot.answer(text[:MAX_QUERY], defaults.lang, Overrides(), defaults)
        except AnswerError as error:
            await self._reply(message, defaults, lang, content=render_error(error, lang))
            return
        except Exception:
            # Our fault, not the asker's: say so, then let VramBot.on_error log it with where it happened.
            sorry = Tr(lang)(N_("Something went wrong on my side. It has been logged; please try again."))
            await self._reply(message, defaults, lang, content=sorry)
            raise
        pin = message.guild is not None and not defaults.private_mentions
        await self._reply(
            message, defaults, card.lang, embed=render_card(card, card.lang), view=card_view(card, card.lang, pin=pin)
        )

    async def _is_owner_command(self, message: discord.Message) -> bool:
        ctx = await self.bot.get_context(message)
        return ctx.valid and await self.bot.is_owner(message.author)

    async def _reply(self, message: discord.Message, defaults: GuildDefaults, lang: Lang, **kwargs: Any) -> None:
        try:
            await reply_to_mention(message, defaults, lang, **kwargs)  # public, or by DM (/vram-settings mentions)
        except discord.HTTPException:
            log.warning("Could not reply to message %s in channel %s", message.id, message.channel.id, exc_info=True)


async def setup(bot: VramBot) -> None:
    """Load the Vram cog."""
    await bot.add_cog(Vram(bot))
