"""An interaction's first response delivered exactly once: never cancelled once Discord may have taken it, and posted
in the channel instead only when Discord certainly did not.

Discord takes an interaction's first response for 3 s. A send can outlive that window two ways:

- Discord answers the callback with a rate limit (429) and discord.py sleeps before retrying it: Discord has not
  taken the card, and the retry will come too late. :class:`CallbackWatch` sees that 429 (an aiohttp trace on the
  bot's own HTTP session: discord.py has no hook for it), so the waiting retry can be cancelled and the card posted
  in the channel at once.
- The request is on its way, or Discord took it and its answer is slow. Cancelling it then (``wait_for`` did) and
  posting the card in the channel gave people the same card twice. So such a send is awaited to its end; only
  "Unknown interaction" (10062, the interaction reached the bot past its window) makes the card go to the channel.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable
from types import SimpleNamespace
from typing import Any

import aiohttp
import discord

from vramfit.bot.i18n import Lang, Tr
from vramfit.bot.i18n import _ as N_

log = logging.getLogger(__name__)

RESPONSE_WINDOW_SECONDS = 2.8  # Discord accepts the first response to an interaction for 3 s
UNKNOWN_INTERACTION = 10062  # Discord's code for an interaction that can no longer be answered
POLL_SECONDS = 0.25  # how often a send past the window is looked at again
_CALLBACK = re.compile(r"/interactions/\d+/(?P<token>[^/]+)/callback$")
_KEPT = 4096  # callbacks remembered at once (each is forgotten when its send ends)


class CallbackWatch:
    """What Discord last answered to each interaction's callback request: ``"sent"`` (on its way, or taken and not
    yet answered), ``"refused"`` (429: not taken) or ``"answered"``."""

    def __init__(self) -> None:
        self._states: OrderedDict[str, str] = OrderedDict()

    def trace_config(self) -> aiohttp.TraceConfig:
        """The aiohttp trace the bot's HTTP client is built with (``http_trace``)."""
        config = aiohttp.TraceConfig()
        config.on_request_start.append(self._started)
        config.on_request_end.append(self._ended)
        return config

    def _set(self, url: Any, state: str) -> None:
        m = _CALLBACK.search(str(getattr(url, "path", url)))
        if m is None:
            return
        self._states[m["token"]] = state
        self._states.move_to_end(m["token"])
        while len(self._states) > _KEPT:
            self._states.popitem(last=False)

    async def _started(self, session: aiohttp.ClientSession, context: SimpleNamespace, params: Any) -> None:
        self._set(params.url, "sent")

    async def _ended(self, session: aiohttp.ClientSession, context: SimpleNamespace, params: Any) -> None:
        self._set(params.url, "refused" if params.response.status == 429 else "answered")

    def refused(self, token: str) -> bool:
        """Whether Discord's last answer to this interaction's callback was a rate limit, no retry sent since."""
        return self._states.get(token) == "refused"

    def forget(self, token: str) -> None:
        self._states.pop(token, None)


async def first_response(
    watch: CallbackWatch | None, interaction: discord.Interaction[Any], send: Awaitable[Any], window_left: float
) -> bool:
    """Await ``send``, the interaction's first response: True when Discord took it, False when it certainly did not
    (past the window, or refused with a rate limit and not retried before the window closed: the retry is cancelled,
    since Discord would refuse it too). Never cancels a send Discord may have taken."""
    task = asyncio.ensure_future(send)
    try:
        await asyncio.wait((task,), timeout=max(0.0, window_left))
        while not task.done():
            if watch is not None and watch.refused(interaction.token):
                task.cancel()
                await asyncio.wait((task,))
                return False
            await asyncio.wait((task,), timeout=POLL_SECONDS)
        task.result()
        return True
    except discord.NotFound as exc:
        if exc.code != UNKNOWN_INTERACTION:
            raise
        return False
    except discord.RateLimited:
        return False
    finally:
        if watch is not None:
            watch.forget(interaction.token)


SLASH_LEAD = N_("Answer to {user}'s /vram")
BUTTON_LEAD = N_("Answer to {user}'s button")


async def post_late(
    interaction: discord.Interaction[Any],
    lang: Lang,
    *,
    lead: str = SLASH_LEAD,
    embed: discord.Embed | None = None,
    view: discord.ui.View | None = None,
    content: str = "",
) -> None:
    """The answer could not be the interaction's reply (Discord's window had closed): it goes to the channel as a
    message naming whose it is. Never raises."""
    log.warning("The answer missed the interaction window; posting it in the channel: %s", interaction.id)
    channel = interaction.channel
    if not isinstance(channel, discord.abc.Messageable):
        return
    text = Tr(lang)(lead, user=interaction.user.mention) + (f"\n{content}" if content else "")
    extra: dict[str, Any] = {"embed": embed} if embed is not None else {}
    if view is not None:
        extra["view"] = view
    try:
        await channel.send(content=text, allowed_mentions=discord.AllowedMentions.none(), **extra)
    except discord.HTTPException:
        log.warning("Could not post the late answer in channel %s", interaction.channel_id, exc_info=True)
