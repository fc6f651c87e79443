"""``VramBot``: an ``AutoShardedBot`` that answers "will this LLM run on my GPU?" with a card.

Start-up (``setup_hook``, before the gateway connects): open the settings store (SQLite, or PostgreSQL with
``DATABASE_URL``; migrated), set the Korean translator, register the persistent buttons, load every extension in
``bot/exts`` (one failing is logged, the rest load), and sync the commands only when asked (``--sync`` or the owner's
``@vramfit sync``), never on every start. ``shard_ids`` in the settings make this process run only those shards.
"""

from __future__ import annotations

import logging
import pkgutil
from typing import Any

import discord
from discord.ext import commands

import bot.exts
from bot.answer_port import AnyCard, Backend, Overrides
from bot.cooldowns import UserCooldown
from bot.i18n import Lang
from bot.settings import Settings
from bot.storage import Store, open_store
from bot.translator import VramTranslator
from bot.tree import VramTree
from bot.ui.buttons import DYNAMIC_ITEMS

log = logging.getLogger(__name__)

GLOBAL = 0  # sync target meaning "global commands"


def extensions() -> list[str]:
    """Every module in ``bot/exts`` whose name does not start with ``_`` (the python-discord convention)."""
    return sorted(
        f"{bot.exts.__name__}.{m.name}" for m in pkgutil.iter_modules(bot.exts.__path__) if not m.name.startswith("_")
    )


def intents(*, message_content: bool = False) -> discord.Intents:
    """Guilds (for channels and threads) and messages (to see mentions); the privileged message-content intent only
    when asked for (``VRAMFIT_MESSAGE_CONTENT=true``: servers use auto-answer channels)."""
    value = discord.Intents.none()
    value.guilds = True
    value.guild_messages = True
    value.dm_messages = True
    value.message_content = message_content
    return value


class VramBot(commands.AutoShardedBot):
    """The vramfit Discord bot."""

    user: discord.ClientUser  # set once logged in
    tree: VramTree

    def __init__(
        self,
        settings: Settings,
        backend: Backend,
        *,
        sync_to: int | None = None,
        **options: Any,
    ) -> None:
        options.setdefault("shard_count", settings.shard_count)
        if settings.shard_ids is not None:
            options.setdefault("shard_ids", list(settings.shard_ids))
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents(message_content=settings.message_content),
            allowed_mentions=discord.AllowedMentions.none(),
            tree_cls=VramTree,
            help_command=None,
            chunk_guilds_at_startup=False,
            member_cache_flags=discord.MemberCacheFlags.none(),
            max_messages=None,
            owner_ids=set(settings.owner_ids) or None,
            **options,
        )
        self.settings = settings
        self.backend = backend
        self.sync_to = sync_to  # GLOBAL, a guild id, or None for no sync at start-up
        self.mention_cooldown = UserCooldown(settings.cooldown_rate, settings.cooldown_seconds)
        self.button_cooldown = UserCooldown(settings.button_cooldown_rate, settings.button_cooldown_seconds)
        self.loaded_extensions: list[str] = []
        self.store: Store | None = None  # opened in setup_hook

    async def setup_hook(self) -> None:
        if self.store is None:
            self.store = await open_store(self.settings)
        await self.tree.set_translator(VramTranslator())
        self.add_dynamic_items(*DYNAMIC_ITEMS)
        for name in extensions():
            try:
                await self.load_extension(name)
            except Exception:
                log.exception("Failed to load extension %s", name)
            else:
                self.loaded_extensions.append(name)
        log.info("Loaded extensions: %s", ", ".join(self.loaded_extensions))
        if self.sync_to is not None:
            await self.sync_commands(self.sync_to or None)

    async def close(self) -> None:
        await super().close()
        store, self.store = self.store, None
        if store is not None:
            await store.close()

    async def sync_commands(self, guild_id: int | None = None) -> list[discord.app_commands.AppCommand]:
        """Push the commands (with their Korean localizations) to Discord: globally, or to one guild now."""
        if guild_id:
            guild = discord.Object(guild_id)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
            log.info("Synced %d commands to guild %s", len(synced), guild_id)
        else:
            synced = await self.tree.sync()
            log.info("Synced %d global commands", len(synced))
        return synced

    def slash_cooldown(self, interaction: discord.Interaction[Any]) -> discord.app_commands.Cooldown | None:
        """The per-user cooldown for ``/vram`` (owners are exempt)."""
        if interaction.user.id in self.settings.owner_ids:
            return None
        return discord.app_commands.Cooldown(self.settings.cooldown_rate, self.settings.cooldown_seconds)

    def answer_card(self, text: str, lang: Lang | None, overrides: Overrides) -> AnyCard:
        """Run the backend (raises :class:`bot.answer_port.AnswerError` for questions the user must fix)."""
        return self.backend.answer(text, lang, overrides)

    async def on_ready(self) -> None:
        log.info(
            "Ready as %s (%s) in %d guilds, %d shards", self.user, self.user.id, len(self.guilds), self.shard_count or 1
        )

    async def on_command_error(self, context: commands.Context[Any], exception: commands.CommandError, /) -> None:
        """Prefix (owner) commands: unknown commands and non-owners are ignored quietly."""
        if isinstance(exception, commands.CommandNotFound | commands.CheckFailure | commands.UserInputError):
            log.debug("Ignored prefix command error: %s", exception)
            return
        log.error("Error in prefix command %s", context.command, exc_info=exception)
