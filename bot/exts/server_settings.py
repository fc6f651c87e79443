"""``/vram-settings``: a server's answer language, GPU shortlist, default engine, mention replies and auto-answer
channels, stored per server (:mod:`bot.storage`).

Only members with Manage Server see the command by default (server admins can change that in the server's
Integrations settings, which Discord enforces); it exists only in servers. Replies are ephemeral and in the
admin's Discord language; every change answers with the settings as they now are.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from vramfit.bot.bot import VramBot
from vramfit.bot.i18n import Tr, lang_for_locale
from vramfit.bot.i18n import _ as N_  # replies (extracted by pybabel as N_); `_` marks command strings
from vramfit.bot.parser.slots import reserved_bytes
from vramfit.bot.storage import GuildSettings, StorageError, Store
from vramfit.bot.storage.repository import MAX_CHANNELS, MAX_GPUS, AddResult
from vramfit.bot.ui.replies import send_ephemeral, send_private
from vramfit.calc.errors import BadNumberError
from vramfit.calc.presets import Catalog, load_catalog

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
AUTOCOMPLETE_LIMIT = 25
_Function = TypeVar("_Function", bound=Callable[..., Any])

LANGUAGE_CHOICES = [
    app_commands.Choice(name=_("Follow each user's language"), value="user"),
    app_commands.Choice(name="한국어", value="ko"),
    app_commands.Choice(name="English", value="en"),
]
ENGINE_CHOICES = [
    app_commands.Choice(name="llama.cpp", value="llama.cpp"),
    app_commands.Choice(name="vLLM", value="vllm"),
]
MENTION_CHOICES = [
    app_commands.Choice(name=_("Public reply"), value="public"),
    app_commands.Choice(name=_("Only the asker (by direct message)"), value="private"),
]


def value_option(
    description: app_commands.locale_str, choices: list[app_commands.Choice[str]]
) -> Callable[[_Function], _Function]:
    """The one option of a setting that takes one of ``choices`` (language, engine, mentions): named "value" in the
    user's language and described by ``description``."""

    def decorate(command: _Function) -> _Function:
        command = app_commands.choices(value=choices)(command)
        command = app_commands.describe(value=description)(command)
        return app_commands.rename(value=_("value"))(command)

    return decorate


def catalog() -> Catalog:
    return load_catalog()


def gpu_name(gpu_id: str) -> str:
    gpu = catalog().gpus.get(gpu_id)
    return gpu.name if gpu is not None else gpu_id


def suggest_gpus(current: str, ids: list[str] | None = None) -> list[tuple[str, str]]:
    """``(name, id)`` of preset GPUs matching ``current`` by id, name or alias: prefix matches first."""
    key = "".join(current.lower().split())
    prefix: list[tuple[str, str]] = []
    inner: list[tuple[str, str]] = []
    for gpu in catalog().gpus.values():
        if ids is not None and gpu.id not in ids:
            continue
        keys = ["".join(k.lower().split()) for k in (gpu.id, gpu.name, *gpu.aliases)]
        if not key or any(k.startswith(key) for k in keys):
            prefix.append((gpu.name, gpu.id))
        elif any(key in k for k in keys):
            inner.append((gpu.name, gpu.id))
    return (prefix + inner)[:AUTOCOMPLETE_LIMIT]


def describe(settings: GuildSettings, tr: Tr, *, message_content: bool) -> str:
    """The settings as a few localized lines (what ``/vram-settings show`` prints)."""
    language = {
        "user": tr(N_("Follow each user's language")),
        "ko": "한국어",
        "en": "English",
    }[settings.language]
    gpus = ", ".join(gpu_name(g) for g in settings.gpus) or tr(N_("none (cards suggest GPUs that fit)"))
    engine = {"llama.cpp": "llama.cpp", "vllm": "vLLM"}[settings.engine]
    mentions = {
        "public": tr(N_("Public reply")),
        "private": tr(N_("Only the asker (by direct message)")),
    }[settings.mention_replies]
    channels = ", ".join(f"<#{c}>" for c in sorted(settings.channels)) or tr(N_("none"))
    in_use = (
        tr(
            N_("{size}, taken off every card's GPU unless the question says its own"),
            size=tr.gib(settings.reserved_mib << 20),
        )
        if settings.reserved_mib
        else tr(N_("none"))
    )
    lines = [
        tr(N_("**vramfit settings for this server**")),
        tr(N_("Answer language: {value}"), value=language),
        tr(N_("GPUs shown first: {value}"), value=gpus),
        tr(N_("Default engine: {value}"), value=engine),
        tr(N_("Answers to mentions: {value}"), value=mentions),
        tr(N_("GPU memory already in use: {value}"), value=in_use),
        tr(N_("Auto-answer channels: {value}"), value=channels),
    ]
    if settings.channels and not message_content:
        lines.append(tr(AUTOANSWER_OFF))
    if missing := [g for g in settings.gpus if g not in catalog().gpus]:
        lines.append(
            tr(
                N_(
                    "⚠️ No longer in vramfit's GPU list, so skipped: {gpus}. Remove it with "
                    "`/vram-settings gpus remove`."
                ),
                gpus=", ".join(f"`{g}`" for g in missing),
            )
        )
    return "\n".join(lines)


AUTOANSWER_OFF = N_(
    "⚠️ Auto-answer is off: this bot runs without the message-content intent, so it only sees messages that "
    "mention it. Mentions and /vram still work."
)


@app_commands.guild_only()
@app_commands.default_permissions(manage_guild=True)
@app_commands.allowed_installs(guilds=True, users=False)
@app_commands.allowed_contexts(guilds=True, dms=False, private_channels=False)
class ServerSettings(
    commands.GroupCog,
    group_name=_("vram-settings"),
    group_description=_("vramfit's settings for this server"),
):
    """``/vram-settings ...``"""

    gpus = app_commands.Group(name=_("gpus"), description=_("The GPUs that cards show first"))
    channels = app_commands.Group(name=_("channels"), description=_("Channels where questions are answered unasked"))

    def __init__(self, bot: VramBot) -> None:
        self.bot = bot
        super().__init__()

    # -- helpers -----------------------------------------------------------------------------------------------------

    async def interaction_check(self, interaction: discord.Interaction[VramBot]) -> bool:  # type: ignore[override]
        """Manage Server, checked here as well: Discord's default permissions can be changed by a server and a
        crafted request is not bound by them. (Every store call is bounded well inside Discord's 3-second window:
        :class:`bot.storage.Store` gives writes ``write_timeout`` seconds, so no deferral is needed.)"""
        if interaction.guild_id is None:
            raise app_commands.NoPrivateMessage()
        if not interaction.permissions.manage_guild:
            raise app_commands.MissingPermissions(["manage_guild"])
        return True

    def _store(self) -> Store:
        if self.bot.store is None:
            raise StorageError(self.bot.store_error or "the settings store is not open")
        return self.bot.store

    async def _reply(self, interaction: discord.Interaction[VramBot], lead: str, settings: GuildSettings) -> None:
        tr = Tr(lang_for_locale(interaction.locale))
        text = describe(settings, tr, message_content=self.bot.settings.message_content)
        await send_private(interaction, f"{lead}\n\n{text}" if lead else text)

    async def _saved(
        self, interaction: discord.Interaction[VramBot], setting: str, value: str, settings: GuildSettings
    ) -> None:
        """A one-value setting changed: log who changed it, and answer "Saved." with the settings as they now are."""
        log.info("Guild %s: %s = %s (by %s)", interaction.guild_id, setting, value, interaction.user.id)
        await self._reply(interaction, Tr(lang_for_locale(interaction.locale))(N_("Saved.")), settings)

    async def _added(
        self, interaction: discord.Interaction[VramBot], change: str, result: AddResult, leads: dict[AddResult, str]
    ) -> None:
        """An addition to one of the server's lists (GPUs, channels) was tried: log it, and answer the lead for its
        ``result`` with the settings as they now are."""
        guild_id = self._guild_id(interaction)
        log.info("Guild %s: %s → %s (by %s)", guild_id, change, result, interaction.user.id)
        await self._reply(interaction, leads[result], await self._store().guild(guild_id))

    @staticmethod
    def _guild_id(interaction: discord.Interaction[VramBot]) -> int:
        if interaction.guild_id is None:  # interaction_check refuses DMs; this keeps the type honest
            raise app_commands.NoPrivateMessage()
        return interaction.guild_id

    # -- commands ----------------------------------------------------------------------------------------------------

    @app_commands.command(name=_("show"), description=_("Show this server's settings"))
    async def show(self, interaction: discord.Interaction[VramBot]) -> None:
        store = self._store()
        guild_id = self._guild_id(interaction)
        await self._reply(interaction, "", await store.fresh_guild(guild_id))  # what is stored now, not a cached copy

    @app_commands.command(name=_("language"), description=_("The language of answers in this server"))
    @value_option(_("Follow each user, or always Korean or English"), LANGUAGE_CHOICES)
    async def language(self, interaction: discord.Interaction[VramBot], value: str) -> None:
        settings = await self._store().set_language(self._guild_id(interaction), value)  # type: ignore[arg-type]
        await self._saved(interaction, "language", value, settings)

    @app_commands.command(name=_("engine"), description=_("The engine cards assume unless the question names one"))
    @value_option(_("llama.cpp or vLLM"), ENGINE_CHOICES)
    async def engine(self, interaction: discord.Interaction[VramBot], value: str) -> None:
        settings = await self._store().set_engine(self._guild_id(interaction), value)  # type: ignore[arg-type]
        await self._saved(interaction, "engine", value, settings)

    @app_commands.command(name=_("mentions"), description=_("Answer mentions publicly or only for the asker"))
    @value_option(_("Only the asker: the card comes by direct message"), MENTION_CHOICES)
    async def mentions(self, interaction: discord.Interaction[VramBot], value: str) -> None:
        settings = await self._store().set_mention_replies(self._guild_id(interaction), value)  # type: ignore[arg-type]
        await self._saved(interaction, "mention replies", value, settings)

    @app_commands.command(
        name=_("in-use"), description=_("GPU memory members' desktops already use, taken off every card's GPU")
    )
    @app_commands.rename(value=_("value"))
    @app_commands.describe(value=_("How much, e.g. 1.5GB (nvidia-smi shows it); 0 clears it"))
    async def in_use(self, interaction: discord.Interaction[VramBot], value: str) -> None:
        tr = Tr(lang_for_locale(interaction.locale))
        try:
            mib = 0 if value.strip().lower() in ("0", "0gb", "0mb", "none") else reserved_bytes(value) >> 20
        except BadNumberError:
            text = tr(N_("That isn't a memory size: **{value}**. Write it as `1.5GB` or `800MB`."),
                      value=discord.utils.escape_markdown(value[:40]))  # fmt: skip
            await send_ephemeral(interaction, text)
            return
        settings = await self._store().set_reserved(self._guild_id(interaction), mib)
        await self._saved(interaction, "in-use", f"{mib} MiB", settings)

    # -- /vram-settings gpus ---------------------------------------------------------------------------------------

    @gpus.command(name=_("add"), description=_("Add a GPU that cards show first"))
    @app_commands.rename(gpu=_("gpu"))
    @app_commands.describe(gpu=_("A GPU from the presets"))
    async def gpus_add(self, interaction: discord.Interaction[VramBot], gpu: str) -> None:
        tr = Tr(lang_for_locale(interaction.locale))
        found = catalog().find_gpu(gpu)
        if found is None:
            suggestions = ", ".join(f"`{s}`" for s in catalog().suggest_gpus(gpu, 3))
            text = tr(N_("I don't know the GPU **{gpu}**."), gpu=discord.utils.escape_markdown(gpu[:100]))
            if suggestions:
                text += "\n" + tr(N_("Did you mean one of these? {suggestions}"), suggestions=suggestions)
            await send_ephemeral(interaction, text)
            return
        result = await self._store().add_gpu(self._guild_id(interaction), found.id)
        leads: dict[AddResult, str] = {
            "added": tr(N_("Added {gpu}."), gpu=found.name),
            "exists": tr(N_("{gpu} is already on the list."), gpu=found.name),
            "full": tr(N_("The list is full ({count} GPUs). Remove one first."), count=tr.num(MAX_GPUS)),
        }
        await self._added(interaction, f"add GPU {found.id}", result, leads)

    @gpus.command(name=_("remove"), description=_("Remove a GPU from the list"))
    @app_commands.rename(gpu=_("gpu"))
    @app_commands.describe(gpu=_("A GPU on the list"))
    async def gpus_remove(self, interaction: discord.Interaction[VramBot], gpu: str) -> None:
        tr = Tr(lang_for_locale(interaction.locale))
        store, guild_id = self._store(), self._guild_id(interaction)
        found = catalog().find_gpu(gpu)
        gpu_id = found.id if found is not None else gpu
        removed = await store.remove_gpu(guild_id, gpu_id)
        name = gpu_name(gpu_id)
        lead = tr(N_("Removed {gpu}."), gpu=name) if removed else tr(N_("{gpu} was not on the list."), gpu=name)
        await self._reply(interaction, lead, await store.guild(guild_id))

    @gpus.command(name=_("clear"), description=_("Empty the list (cards then suggest GPUs that fit)"))
    async def gpus_clear(self, interaction: discord.Interaction[VramBot]) -> None:
        tr = Tr(lang_for_locale(interaction.locale))
        store, guild_id = self._store(), self._guild_id(interaction)
        await store.clear_gpus(guild_id)
        await self._reply(interaction, tr(N_("Saved.")), await store.guild(guild_id))

    @gpus_add.autocomplete("gpu")
    async def _gpu_autocomplete(
        self, interaction: discord.Interaction[VramBot], current: str
    ) -> list[app_commands.Choice[str]]:
        return [app_commands.Choice(name=name[:100], value=gid) for name, gid in suggest_gpus(current[:100])]

    @gpus_remove.autocomplete("gpu")
    async def _listed_gpu_autocomplete(
        self, interaction: discord.Interaction[VramBot], current: str
    ) -> list[app_commands.Choice[str]]:
        if interaction.guild_id is None or self.bot.store is None:
            return []
        listed = list((await self.bot.store.guild(interaction.guild_id)).gpus)
        return [app_commands.Choice(name=name[:100], value=gid) for name, gid in suggest_gpus(current[:100], listed)]

    # -- /vram-settings channels -----------------------------------------------------------------------------------

    @channels.command(name=_("add"), description=_("Answer memory questions in this channel or forum unasked"))
    @app_commands.rename(channel=_("channel"))
    @app_commands.describe(channel=_("A text channel or a forum"))
    async def channels_add(
        self, interaction: discord.Interaction[VramBot], channel: discord.TextChannel | discord.ForumChannel
    ) -> None:
        tr = Tr(lang_for_locale(interaction.locale))
        result = await self._store().add_channel(self._guild_id(interaction), channel.id)
        leads: dict[AddResult, str] = {
            "added": tr(N_("Auto-answer is on in {channel}."), channel=channel.mention),
            "exists": tr(N_("Auto-answer was already on in {channel}."), channel=channel.mention),
            "full": tr(N_("Too many channels ({count}). Remove one first."), count=tr.num(MAX_CHANNELS)),
        }
        await self._added(interaction, f"auto-answer in {channel.id}", result, leads)

    @channels.command(name=_("remove"), description=_("Stop answering unasked in this channel"))
    @app_commands.rename(channel=_("channel"))
    @app_commands.describe(channel=_("A channel where auto-answer is on"))
    async def channels_remove(
        self, interaction: discord.Interaction[VramBot], channel: discord.TextChannel | discord.ForumChannel
    ) -> None:
        tr = Tr(lang_for_locale(interaction.locale))
        store, guild_id = self._store(), self._guild_id(interaction)
        removed = await store.remove_channel(guild_id, channel.id)
        lead = (
            tr(N_("Auto-answer is off in {channel}."), channel=channel.mention)
            if removed
            else tr(N_("Auto-answer was not on in {channel}."), channel=channel.mention)
        )
        await self._reply(interaction, lead, await store.guild(guild_id))


async def setup(bot: VramBot) -> None:
    """Load the settings cog."""
    await bot.add_cog(ServerSettings(bot))
