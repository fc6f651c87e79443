"""Owner-only maintenance, as mention commands (``@vramfit sync``), since slash commands need a sync first."""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord.ext import commands

from vramfit.bot.bot import VramBot

log = logging.getLogger(__name__)


class Admin(commands.Cog):
    """Owner commands."""

    def __init__(self, bot: VramBot) -> None:
        self.bot = bot

    async def cog_check(self, ctx: commands.Context[Any]) -> bool:
        return await self.bot.is_owner(ctx.author)

    @commands.command(name="sync")
    async def sync(self, ctx: commands.Context[Any], scope: str = "global") -> None:
        """Sync the slash commands: ``sync`` (global), ``sync here`` (this server, at once) or ``sync <guild id>``."""
        if scope == "here":
            if ctx.guild is None:
                await ctx.reply("`sync here` works in a server.", allowed_mentions=discord.AllowedMentions.none())
                return
            guild_id: int | None = ctx.guild.id
        elif scope == "global":
            guild_id = None
        elif scope.isdigit():
            guild_id = int(scope)
        else:
            await ctx.reply(
                "Usage: `sync`, `sync here` or `sync <guild id>`.", allowed_mentions=discord.AllowedMentions.none()
            )
            return
        synced = await self.bot.sync_commands(guild_id)
        where = f"guild {guild_id}" if guild_id else "global"
        log.info("Owner %s synced %d commands (%s)", ctx.author.id, len(synced), where)
        await ctx.reply(f"Synced {len(synced)} commands ({where}).", allowed_mentions=discord.AllowedMentions.none())


async def setup(bot: VramBot) -> None:
    """Load the Admin cog."""
    await bot.add_cog(Admin(bot))
