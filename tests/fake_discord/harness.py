"""Run the real :class:`bot.bot.VramBot` against a :class:`FakeDiscord`, and the world it lives in.

For example::

    async with World.start() as world:          # fake Discord with one guild, a channel and a thread
        interaction = await world.slash("라마3 8b 32k 3060", locale="ko")
        reply = await world.callback(interaction)   # the JSON the bot sent back
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fake_discord import payloads as p
from tests.fake_discord.backend import FakeBackend
from tests.fake_discord.server import FakeDiscord, Recorded
from vramfit.bot.bot import VramBot
from vramfit.bot.settings import Settings

JSON = dict[str, Any]

GUILD_ID = 166_893_000_001 << 22  # (id >> 22) % 2 == 1: the guild lives on shard 1 of 2
CHANNEL_ID = GUILD_ID + 1
THREAD_ID = GUILD_ID + 2
USER_ID = 600_000_000_000_000_001
OTHER_BOT_ID = 600_000_000_000_000_009


DEFERRED_RESPONSE = 5  # DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE


def make_settings(**overrides: Any) -> Settings:
    """Settings for tests: no .env, a generous cooldown unless the test sets one, an in-memory SQLite store, no
    warm-up before connecting and no answering processes (tests/bot/test_bot_load.py tests both)."""
    values: dict[str, Any] = {
        "discord_token": None,
        "owner_ids": frozenset(),
        "cooldown_rate": 100,
        "cooldown_seconds": 60.0,
        "log_level": "DEBUG",
        "database_url": None,  # never the developer's DATABASE_URL
        "database_path": ":memory:",
        "settings_cache_seconds": 30.0,
        "warm_up": False,
        "answer_processes": 0,  # answers in the bot's threads, where a test's monkeypatches and fakes reach them
        # Without the warm-up a cold "what fits" costs 1-4 s of CPU, by machine: the 2 s budget of a warmed-up bot
        # would make such a test pass or fail with the machine; tests/bot/test_bot_load.py tests the budget itself.
        "answer_cpu_seconds": 30.0,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


@dataclass
class World:
    """A fake Discord, a running bot, and helpers to act as users."""

    fake: FakeDiscord
    bot: VramBot
    backend: FakeBackend
    channel: JSON
    thread: JSON
    user: JSON = field(default_factory=lambda: p.user(USER_ID, "asker"))
    command_id: int = field(default_factory=p.snowflake)

    @classmethod
    @contextlib.asynccontextmanager
    async def start(
        cls,
        *,
        shard_count: int = 2,
        settings: Settings | None = None,
        sync_to: int | None = None,
        backend: Any = None,
    ) -> AsyncIterator[World]:
        channel = p.text_channel(CHANNEL_ID, GUILD_ID)
        owner = p.user(800_000_000_000_000_001, "owner")
        thread = p.thread(THREAD_ID, GUILD_ID, CHANNEL_ID, int(owner["id"]))
        guild = p.guild(GUILD_ID, channels=[channel], threads=[thread], owner_id=int(owner["id"]))
        fake_backend = FakeBackend()
        async with FakeDiscord(shard_count=shard_count, guilds=[guild]) as fake:
            with fake.patch_client():
                vram_bot = VramBot(
                    settings or make_settings(),
                    backend if backend is not None else fake_backend.backend(),
                    sync_to=sync_to,
                    guild_ready_timeout=0.05,
                )
                async with run_bot(vram_bot):
                    yield cls(fake=fake, bot=vram_bot, backend=fake_backend, channel=channel, thread=thread)

    # -- acting as users ----------------------------------------------------------------------------------------------

    async def slash(
        self,
        query: str | None = None,
        *,
        locale: str = "en-US",
        options: dict[str, Any] | None = None,
        user: JSON | None = None,
        guild: bool = True,
        attachments: dict[str, JSON] | None = None,
        command: str = "vram",
    ) -> JSON:
        """Dispatch ``/vram`` (or ``command``) and return the interaction payload (``attachments``: attachment options
        by name, each an attachment payload from :meth:`FakeDiscord.attach`)."""
        opts = []
        if query is not None:
            opts.append(p.command_option("query", query))
        for name, value in (options or {}).items():
            opts.append(p.command_option(name, value, 4 if isinstance(value, int) else 3))
        for name, attached in (attachments or {}).items():
            opts.append(p.command_option(name, attached["id"], 11))
        resolved = {"attachments": {a["id"]: a for a in (attachments or {}).values()}} if attachments else None
        payload = p.slash_command(
            app_id=self.fake.app_id,
            command_id=self.command_id,
            name=command,
            options=opts,
            resolved=resolved,
            user_data=user or self.user,
            locale=locale,
            guild_id=GUILD_ID if guild else None,
            channel=self.channel if guild else {"id": str(p.snowflake()), "type": 1, "recipients": [self.user]},
        )
        await self.fake.interaction(payload)
        return payload

    async def ask(self, query: str, *, timeout: float = 30.0, **slash_options: Any) -> JSON:
        """Dispatch ``/vram`` with ``query`` (and :meth:`slash`'s options) and return the data of the bot's answer:
        the card, or the error it answered with; after a deferral (a slow answer on a busy machine), what followed
        it: the card edited in, or the error sent as a follow-up."""
        interaction = await self.slash(query, **slash_options)
        sent = (await self.callback(interaction, timeout=timeout)).json
        if sent.get("type") != DEFERRED_RESPONSE:
            data: JSON = sent["data"]
            return data
        token = interaction["token"]

        def followed() -> list[Recorded]:
            return self.fake.find("PATCH", rf"/webhooks/\d+/{token}/messages/@original") or self.fake.find(
                "POST", rf"/webhooks/\d+/{token}"
            )

        found: list[Recorded] = await self.fake.wait_until(followed, timeout)
        answer: JSON = found[0].json
        return answer

    async def autocomplete(self, command: str, option: str, typed: str) -> JSON:
        """Type ``typed`` into ``option`` of ``/command`` and return the bot's callback (type 8: the choices)."""
        payload = p.autocomplete(
            app_id=self.fake.app_id,
            command_id=self.command_id,
            name=command,
            options=[p.command_option(option, typed, focused=True)],
            user_data=self.user,
            guild_id=GUILD_ID,
            channel=self.channel,
        )
        await self.fake.interaction(payload)
        return (await self.callback(payload)).json

    async def press(
        self,
        message: JSON,
        custom_id: str,
        *,
        locale: str = "en-US",
        permissions: int = p.MEMBER_PERMISSIONS,
        app_permissions: int = p.BOT_PERMISSIONS,
        user: JSON | None = None,
    ) -> JSON:
        """Press a button on ``message`` (as stored by the fake) and return the interaction payload."""
        channel = self.fake.channel(int(message["channel_id"])) or self.channel
        payload = p.button_press(
            app_id=self.fake.app_id,
            custom_id=custom_id,
            message_data=message,
            user_data=user or self.user,
            locale=locale,
            guild_id=GUILD_ID,
            channel=channel,
            permissions=permissions,
            app_permissions=app_permissions,
        )
        await self.fake.interaction(payload)
        return payload

    async def say(
        self,
        content: str,
        *,
        channel_id: int | None = None,
        mention_bot: bool = True,
        author: JSON | None = None,
        mention_everyone: bool = False,
        attachments: list[JSON] | None = None,
        reply_to: int | None = None,
    ) -> JSON:
        """Post a message in a channel (MESSAGE_CREATE) and return it (``attachments``: from
        :meth:`FakeDiscord.attach`; ``reply_to``: the id of the message it replies to)."""
        author = author or self.user
        bot_user = self.fake.bot_user
        message = p.message(
            message_id=p.snowflake(),
            channel_id=channel_id or CHANNEL_ID,
            author=author,
            content=(f"<@{bot_user['id']}> " if mention_bot else "") + content,
            guild_id=GUILD_ID,
            member_data=p.member(author),
            mentions=[bot_user] if mention_bot else [],
            mention_everyone=mention_everyone,
            attachments=attachments,
            message_reference=(
                {"message_id": str(reply_to), "channel_id": str(channel_id or CHANNEL_ID), "guild_id": str(GUILD_ID)}
                if reply_to is not None
                else None
            ),
        )
        self.fake.messages[int(message["id"])] = message  # a reply to it can name it, as Discord's messages do
        await self.fake.dispatch("MESSAGE_CREATE", message)
        return message

    # -- reading what the bot sent ------------------------------------------------------------------------------------

    async def callback(self, interaction: JSON, timeout: float = 5.0) -> Recorded:
        """The bot's callback for ``interaction``."""
        return await self.fake.wait_request(
            "POST", rf"/interactions/{interaction['id']}/{interaction['token']}/callback", timeout=timeout
        )

    def message_for(self, interaction: JSON) -> JSON:
        """The message the fake created for an interaction's response."""
        return next(
            m for m in self.fake.messages.values()
            if m.get("application_id") and m.get("webhook_id")
            and self.fake._callbacks[interaction["token"]].original_id == int(m["id"])
        )  # fmt: skip


@contextlib.asynccontextmanager
async def run_bot(vram_bot: VramBot, *, token: str = "fake-token", ready_timeout: float = 10.0) -> AsyncIterator[None]:
    """Log in, connect every shard and wait for READY; close cleanly afterwards.

    discord.py waits 5 s between the IDENTIFY of two shards (``Client.before_identify_hook``), as Discord's
    identify rate limit wants; the fake has no such limit, so the wait is skipped.
    """

    async def _no_identify_wait(shard_id: int | None, *, initial: bool = False) -> None:
        return None

    vram_bot.before_identify_hook = _no_identify_wait  # type: ignore[method-assign]
    await vram_bot.login(token)
    task = asyncio.create_task(vram_bot.connect(reconnect=True))
    try:
        ready = asyncio.ensure_future(vram_bot.wait_until_ready())
        done, _ = await asyncio.wait({ready, task}, timeout=ready_timeout, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            ready.cancel()
            task.result()  # re-raise the connect error
        if ready not in done:
            ready.cancel()
            raise TimeoutError("the bot did not become ready")
        yield
    finally:
        await vram_bot.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 5)


def run(coro: Any, timeout: float = 30.0) -> Any:
    """Run a test coroutine in a fresh event loop with a deadline."""

    async def _with_deadline() -> Any:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(_with_deadline())


def slow_source_then_cached(question: str, requests: Callable[[], int]) -> dict[str, Any]:
    """Ask ``question`` twice through ``/vram`` with the real backend, the bot deferring after 0.2 s: the first answer
    must come deferred (a slow remote source) as the edit of the original reply, the second at once with the same
    card and no new request (``requests()`` counts what the fake source was asked). The first card's embed."""
    from tests.fake_discord.sent import embed_of
    from vramfit.bot.answering.service import CalcBackend

    first: dict[str, Any] = {}

    async def scenario() -> None:
        settings = make_settings(defer_after_seconds=0.2)
        async with World.start(settings=settings, backend=CalcBackend().backend()) as world:
            interaction = await world.slash(question)
            sent = await world.callback(interaction, timeout=10)
            assert sent.json["type"] == 5  # deferred: the source is slower than the bot waits before replying
            edit = await world.fake.wait_request(
                "PATCH", rf"/webhooks/\d+/{interaction['token']}/messages/@original", timeout=10
            )
            first.update(edit.json["embeds"][0])
            asked = requests()
            again = await world.slash(question)
            body = (await world.callback(again, timeout=10)).json["data"]
            assert embed_of(body)["description"] == first["description"]
            assert requests() == asked  # the second ask: no request to the source
            await asyncio.sleep(0)

    run(scenario())
    return first
