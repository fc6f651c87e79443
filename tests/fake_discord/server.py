"""A fake Discord (REST under ``/api/v10`` + a JSON gateway) on 127.0.0.1 for the real discord.py client.

The client is pointed here by patching two class attributes (see :meth:`FakeDiscord.patch_client`):
``discord.http.Route.BASE`` for REST (webhook and interaction routes go through ``Route`` too) and
``DiscordWebSocket.DEFAULT_GATEWAY`` (an ``AutoShardedClient`` also asks ``GET /gateway/bot`` for the URL).

Everything the bot sends is recorded as :class:`Recorded` so tests assert on the JSON itself. Tests inject gateway
events with :meth:`FakeDiscord.dispatch`; events for a shard whose socket is down are kept and replayed on RESUME,
like Discord does. Pitfalls this file works around (each observed):

* discord.py's ``json_or_text`` wants ``Content-Type`` to be exactly ``application/json`` (no charset);
* gateway frames are plain text JSON: the client only inflates binary frames, so no zlib is needed;
* payloads must be complete (see :mod:`tests.fake_discord.payloads`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import discord
import yarl
from aiohttp import WSMsgType, web
from discord.gateway import DiscordWebSocket

from tests.fake_discord import payloads as p

JSON = dict[str, Any]

OP_DISPATCH, OP_HEARTBEAT, OP_IDENTIFY, OP_RESUME, OP_RECONNECT, OP_INVALID_SESSION, OP_HELLO, OP_HEARTBEAT_ACK = (
    0,
    1,
    2,
    6,
    7,
    9,
    10,
    11,
)

EPHEMERAL = 1 << 6


@dataclass
class Recorded:
    """One REST request the bot made."""

    seq: int
    method: str
    path: str  # below /api/v10, e.g. "/channels/1/messages"
    query: dict[str, str]
    json: Any
    status: int = 200
    at: float = field(default_factory=time.perf_counter)  # when it arrived (perf_counter clock)

    def __repr__(self) -> str:
        return f"<{self.seq} {self.method} {self.path} {json.dumps(self.json, ensure_ascii=False)[:200]}>"


@dataclass
class GatewaySession:
    """A gateway session: survives its socket so that RESUME can replay what was missed."""

    session_id: str
    shard: tuple[int, int]
    seq: int = 0
    history: list[JSON] = field(default_factory=list)
    ws: web.WebSocketResponse | None = None


@dataclass
class _Callback:
    """What the fake knows about an interaction token."""

    interaction: JSON
    original_id: int | None = None


class FakeDiscord:
    """The fake server. Use ``async with FakeDiscord(...) as fake, fake.patch_client():``."""

    instances: ClassVar[list[FakeDiscord]] = []  # the fake started last in this process

    def __init__(
        self,
        *,
        app_id: int = 900_000_000_000_000_001,
        bot_user_id: int = 900_000_000_000_000_001,
        owner_id: int = 800_000_000_000_000_001,
        shard_count: int = 1,
        guilds: list[JSON] | None = None,
        heartbeat_interval_ms: int = 41_250,
    ) -> None:
        self.app_id = app_id
        self.bot_user = p.user(bot_user_id, "vramfit", bot=True)
        self.owner = p.user(owner_id, "owner")
        self.shard_count = shard_count
        self.guilds: list[JSON] = guilds or []
        self.heartbeat_interval_ms = heartbeat_interval_ms

        self.requests: list[Recorded] = []
        self.unhandled: list[Recorded] = []
        self.identifies: list[JSON] = []
        self.resumes: list[JSON] = []
        self.heartbeats = 0
        self.sessions: dict[str, GatewaySession] = {}
        self.global_commands: list[JSON] = []
        self.guild_commands: dict[int, list[JSON]] = {}
        self.messages: dict[int, JSON] = {}
        self.pins: list[tuple[int, int]] = []
        self.dm_channels: dict[int, int] = {}  # user id -> DM channel id (POST /users/@me/channels)
        self.closed_dms: set[int] = set()  # user ids whose DMs refuse the bot (403, code 50007)
        self._callbacks: dict[str, _Callback] = {}
        # Interactions that reach the bot too late: Discord answers their callback "Unknown interaction" (10062).
        self.late_interactions = False
        # Seconds an interaction callback's answer takes after the fake has taken the reply (a slow network): the
        # card is there, the bot just does not know it yet.
        self.callback_delay = 0.0
        self._session_ids = itertools.count(1)
        self._seq = itertools.count(1)
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.host = ""
        self.on_request: Callable[[Recorded], None] | None = None  # called for every REST request (benchmarks)
        self.rate_limits: list[tuple[str, float]] = []  # (path pattern, retry_after): the next match answers 429
        self.record = True  # False: keep no history (long benchmark runs)
        self.files: dict[str, bytes] = {}  # attachment path -> bytes, served as Discord's CDN serves them
        self.downloads: list[str] = []  # the attachment paths the bot downloaded

    # -- lifecycle -------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Serve on 127.0.0.1 with an ephemeral port."""
        FakeDiscord.instances[:] = [self]
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        app.router.add_get("/attachments/{tail:.*}", self._attachment)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self.host = f"127.0.0.1:{port}"

    async def close(self) -> None:
        """Close every socket and stop serving."""
        for session in self.sessions.values():
            if session.ws is not None and not session.ws.closed:
                await session.ws.close(code=1001)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeDiscord:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def api_base(self) -> str:
        return f"http://{self.host}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://{self.host}/gateway"

    @contextlib.contextmanager
    def patch_client(self) -> Iterator[None]:
        """Point discord.py at this server (set after any ``_set_api_version`` call, before ``login``)."""
        old_base = discord.http.Route.BASE
        old_gateway = DiscordWebSocket.DEFAULT_GATEWAY
        discord.http.Route.BASE = self.api_base
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.gateway_url)
        try:
            yield
        finally:
            discord.http.Route.BASE = old_base
            DiscordWebSocket.DEFAULT_GATEWAY = old_gateway

    # -- waiting and querying ----------------------------------------------------------------------------------------

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_until(self, predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
        """Wait until ``predicate()`` is truthy and return its value (checked on every request and event the fake
        sees, and every 10 ms for state that only the bot holds)."""

        async def _wait() -> Any:
            async with self._changed:
                while not (value := predicate()):
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), 0.01)
                return value

        return await asyncio.wait_for(_wait(), timeout)

    def find(self, method: str, pattern: str, *, since: int = 0) -> list[Recorded]:
        """Recorded requests whose method matches and whose path fully matches the regex ``pattern``."""
        rx = re.compile(pattern)
        return [r for r in self.requests if r.seq > since and r.method == method and rx.fullmatch(r.path)]

    async def wait_request(self, method: str, pattern: str, *, since: int = 0, timeout: float = 5.0) -> Recorded:
        """Wait for the first request after ``since`` matching ``method`` and ``pattern``."""
        found: list[Recorded] = await self.wait_until(lambda: self.find(method, pattern, since=since), timeout)
        return found[0]

    @property
    def last_seq(self) -> int:
        """The sequence number of the last recorded request (pass it as ``since``)."""
        return self.requests[-1].seq if self.requests else 0

    # -- gateway -----------------------------------------------------------------------------------------------------

    def shard_for(self, guild_id: int | None) -> int:
        """Discord's shard formula."""
        return 0 if guild_id is None else (guild_id >> 22) % self.shard_count

    def live_sessions(self) -> list[GatewaySession]:
        return [s for s in self.sessions.values() if s.ws is not None and not s.ws.closed]

    def session_for_shard(self, shard_id: int) -> GatewaySession:
        for session in reversed(list(self.sessions.values())):
            if session.shard[0] == shard_id:
                return session
        raise LookupError(f"no gateway session for shard {shard_id}")

    async def wait_ready(self, timeout: float = 5.0) -> None:
        """Wait until every shard has an open socket."""
        await self.wait_until(lambda: len({s.shard[0] for s in self.live_sessions()}) == self.shard_count, timeout)

    async def dispatch(self, event: str, data: JSON, *, shard_id: int | None = None) -> None:
        """Send a DISPATCH event on the right shard (kept for replay if the shard's socket is down)."""
        if shard_id is None:
            raw_guild = data.get("guild_id") or (data.get("id") if event == "GUILD_CREATE" else None)
            shard_id = self.shard_for(int(raw_guild) if raw_guild else None)
        session = self.session_for_shard(shard_id)
        session.seq += 1
        frame = {"op": OP_DISPATCH, "t": event, "s": session.seq, "d": data}
        session.history.append(frame)
        if session.ws is not None and not session.ws.closed:
            await session.ws.send_str(json.dumps(frame))

    async def interaction(self, payload: JSON, *, shard_id: int | None = None) -> None:
        """Register an interaction token and dispatch INTERACTION_CREATE (on its guild's shard unless given)."""
        if not self.late_interactions:
            self._callbacks[payload["token"]] = _Callback(payload)
        await self.dispatch("INTERACTION_CREATE", payload, shard_id=shard_id)

    async def close_gateway(self, shard_id: int = 0, *, code: int = 4000) -> None:
        """Close a shard's socket from the server side (the client should RESUME)."""
        session = self.session_for_shard(shard_id)
        ws = session.ws
        session.ws = None
        if ws is not None and not ws.closed:
            await ws.close(code=code, message=b"fake discord: going away")

    async def request_reconnect(self, shard_id: int = 0) -> None:
        """Send op 7 RECONNECT: the client closes and resumes."""
        session = self.session_for_shard(shard_id)
        if session.ws is not None:
            await session.ws.send_str(json.dumps({"op": OP_RECONNECT, "d": None}))

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True, max_msg_size=16 * 1024 * 1024)
        await ws.prepare(request)
        await ws.send_str(json.dumps({"op": OP_HELLO, "d": {"heartbeat_interval": self.heartbeat_interval_ms}}))
        session: GatewaySession | None = None
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            frame = json.loads(msg.data)
            op, data = frame.get("op"), frame.get("d")
            if op == OP_HEARTBEAT:
                self.heartbeats += 1
                await ws.send_str(json.dumps({"op": OP_HEARTBEAT_ACK}))
            elif op == OP_IDENTIFY:
                session = await self._identify(ws, data)
            elif op == OP_RESUME:
                session = await self._resume(ws, data)
            await self._notify()
        if session is not None and session.ws is ws:
            session.ws = None
        await self._notify()
        return ws

    async def _identify(self, ws: web.WebSocketResponse, data: JSON) -> GatewaySession:
        self.identifies.append(data)
        shard = tuple(data.get("shard") or (0, 1))
        session = GatewaySession(session_id=f"session-{next(self._session_ids)}", shard=(shard[0], shard[1]), ws=ws)
        self.sessions[session.session_id] = session
        shard_guilds = [g for g in self.guilds if self.shard_for(int(g["id"])) == session.shard[0]]
        ready = {
            "v": 10,
            "user": {**self.bot_user, "verified": True, "mfa_enabled": False},
            "guilds": [{"id": g["id"], "unavailable": True} for g in shard_guilds],
            "session_id": session.session_id,
            "resume_gateway_url": self.gateway_url,
            "shard": list(session.shard),
            "application": {"id": str(self.app_id), "flags": 0},
            "private_channels": [],
            "relationships": [],
        }
        await self.dispatch("READY", ready, shard_id=session.shard[0])
        for g in shard_guilds:
            await self.dispatch("GUILD_CREATE", g, shard_id=session.shard[0])
        return session

    async def _resume(self, ws: web.WebSocketResponse, data: JSON) -> GatewaySession | None:
        self.resumes.append(data)
        session = self.sessions.get(data.get("session_id", ""))
        if session is None:
            await ws.send_str(json.dumps({"op": OP_INVALID_SESSION, "d": False}))
            return None
        session.ws = ws
        last = data.get("seq") or 0
        for frame in session.history:
            if frame["s"] > last:
                await ws.send_str(json.dumps(frame))
        await self.dispatch("RESUMED", {}, shard_id=session.shard[0])
        return session

    # -- attachments (Discord's CDN) ---------------------------------------------------------------------------------

    def attach(self, filename: str, data: bytes, *, size: int | None = None, content_type: str | None = None) -> JSON:
        """An attachment payload whose URL serves ``data`` from here (``size``: what the payload claims, to test a
        client that trusts it)."""
        attachment_id = p.snowflake()
        path = f"/attachments/{attachment_id}/{filename}"
        self.files[path] = data
        url = f"http://{self.host}{path}"
        return p.attachment(attachment_id, filename, len(data) if size is None else size, url,
                            content_type=content_type)  # fmt: skip

    async def _attachment(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        self.downloads.append(path)
        await self._notify()
        if path not in self.files:
            return web.Response(status=404)
        return web.Response(body=self.files[path], headers={"Content-Type": "application/octet-stream"})

    # -- REST --------------------------------------------------------------------------------------------------------

    @staticmethod
    def _json(data: Any, status: int = 200) -> web.Response:
        """A JSON response with exactly ``application/json`` (discord.py compares the header verbatim)."""
        return web.Response(body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"})

    async def _body(self, request: web.Request) -> Any:
        if not request.can_read_body:
            return None
        if request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            body: Any = None
            files: list[tuple[str, bytes]] = []  # the attachments, as (file name, bytes): kept for the tests
            while (part := await reader.next()) is not None:
                if getattr(part, "name", None) == "payload_json":
                    body = json.loads(await part.text())  # type: ignore[union-attr]
                elif getattr(part, "filename", None):
                    files.append((str(part.filename), bytes(await part.read())))  # type: ignore[union-attr]
            if isinstance(body, dict) and files:
                body["_files"] = files
            return body
        raw = await request.read()
        return json.loads(raw) if raw else None

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        body = await self._body(request)
        record = Recorded(next(self._seq), request.method, path, dict(request.query), body)
        if self.record:
            self.requests.append(record)
        try:
            response = self._route(record)
        finally:
            if self.on_request is not None:
                self.on_request(record)
            await self._notify()
        record.status = response.status
        if self.callback_delay and response.status < 300 and re.fullmatch(r"/interactions/\d+/[^/]+/callback", path):
            await asyncio.sleep(self.callback_delay)
        return response

    def rate_limit_next(self, pattern: str, retry_after: float) -> None:
        """Answer the next request whose path matches ``pattern`` with a 429 asking to wait ``retry_after`` s."""
        self.rate_limits.append((pattern, retry_after))

    def _route(self, r: Recorded) -> web.Response:
        m, path, body = r.method, r.path, r.json
        for i, (pattern, retry_after) in enumerate(self.rate_limits):
            if re.fullmatch(pattern, path):
                del self.rate_limits[i]
                limited = {"message": "You are being rate limited.", "retry_after": retry_after, "global": False}
                response = self._json(limited, 429)
                response.headers["Via"] = "1.1 fake"  # discord.py retries a 429 only when it came through a proxy
                return response
        app = str(self.app_id)
        if m == "GET" and path == "/users/@me":
            return self._json(self.bot_user)
        if m == "GET" and path in ("/gateway/bot", "/gateway"):
            limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
            return self._json({"url": self.gateway_url, "shards": self.shard_count, "session_start_limit": limit})
        if m == "GET" and path in ("/oauth2/applications/@me", "/applications/@me"):
            return self._json(p.application(self.app_id, self.owner))
        if match := re.fullmatch(rf"/applications/{app}(?:/guilds/(\d+))?/commands", path):
            store = self.guild_commands.setdefault(int(match[1]), []) if match[1] else self.global_commands
            if m == "PUT":
                store[:] = [self._command(c, match[1]) for c in body or []]
            return self._json(store)
        if match := re.fullmatch(r"/interactions/(\d+)/([^/]+)/callback", path):
            return self._callback(match[2], body, with_response=r.query.get("with_response") in ("1", "true"))
        if match := re.fullmatch(rf"/webhooks/{app}/([^/]+)/messages/(@original|\d+)", path):
            return self._webhook_message(m, match[1], match[2], body)
        if m == "POST" and (match := re.fullmatch(rf"/webhooks/{app}/([^/]+)", path)):
            return self._followup(match[1], body)
        if m == "POST" and path == "/users/@me/channels":
            user_id = int((body or {})["recipient_id"])
            channel_id = self.dm_channels.setdefault(user_id, p.snowflake())
            return self._json({"id": str(channel_id), "type": 1, "last_message_id": None, "recipients": [
                {**p.user(user_id, "someone")}]})  # fmt: skip
        if m == "POST" and (match := re.fullmatch(r"/channels/(\d+)/messages", path)):
            dm_user = next((u for u, c in self.dm_channels.items() if c == int(match[1])), None)
            if dm_user is not None and dm_user in self.closed_dms:
                return self._json({"message": "Cannot send messages to this user", "code": 50007}, 403)
            return self._json(self._create_message(int(match[1]), body or {}))
        if match := re.fullmatch(r"/channels/(\d+)/messages/(\d+)", path):
            msg = self.messages.get(int(match[2]))
            if msg is None:
                return self._json({"message": "Unknown Message", "code": 10008}, 404)
            if m == "PATCH":
                self._edit(msg, body or {})
            return self._json(msg)
        if m == "PUT" and (match := re.fullmatch(r"/channels/(\d+)/(?:messages/)?pins/(\d+)", path)):
            self.pins.append((int(match[1]), int(match[2])))
            if (msg := self.messages.get(int(match[2]))) is not None:
                msg["pinned"] = True
            return web.Response(status=204)
        if m == "GET" and (match := re.fullmatch(r"/channels/(\d+)", path)):
            channel = self.channel(int(match[1]))
            if channel is None:
                return self._json({"message": "Unknown Channel", "code": 10003}, 404)
            return self._json(channel)
        self.unhandled.append(r)
        return self._json({"message": f"fake discord: no route for {m} {path}", "code": 0}, 404)

    def channel(self, channel_id: int) -> JSON | None:
        """A channel or thread from the configured guilds."""
        for g in self.guilds:
            for c in [*g.get("channels", []), *g.get("threads", [])]:
                if int(c["id"]) == channel_id:
                    return dict(c)
        return None

    def _command(self, payload: JSON, guild_id: str | None) -> JSON:
        return {
            **payload,
            "id": str(p.snowflake()),
            "application_id": str(self.app_id),
            "version": str(p.snowflake()),
            **({"guild_id": guild_id} if guild_id else {}),
        }

    def _new_message(self, channel_id: int, body: JSON, *, interaction: JSON | None = None) -> JSON:
        guild_id = None
        channel = self.channel(channel_id)
        if channel is not None and channel.get("guild_id"):
            guild_id = int(channel["guild_id"])
        elif interaction is not None and interaction.get("guild_id"):
            guild_id = int(interaction["guild_id"])
        msg = p.message(
            message_id=p.snowflake(),
            channel_id=channel_id,
            author=self.bot_user,
            content=body.get("content") or "",
            guild_id=guild_id,
            embeds=body.get("embeds") or [],
            components=body.get("components") or [],
            flags=int(body.get("flags") or 0),
            message_type=19 if body.get("message_reference") else (20 if interaction else 0),
            message_reference=body.get("message_reference"),
            webhook_id=self.app_id if interaction else None,
            application_id=self.app_id if interaction else None,
        )
        if interaction is not None:  # as Discord marks a message an interaction created: who ran the command
            asker = (interaction.get("member") or {}).get("user") or interaction.get("user") or {}
            msg["interaction_metadata"] = {
                "id": str(interaction.get("id")), "type": int(interaction.get("type") or 2), "user": asker,
                "authorizing_integration_owners": {},
            }  # fmt: skip
        reference = body.get("message_reference") or {}
        if reference.get("message_id") and int(reference["message_id"]) in self.messages:
            msg["referenced_message"] = self.messages[int(reference["message_id"])]  # a reply: the message replied to
        self.messages[int(msg["id"])] = msg
        return msg

    def _create_message(self, channel_id: int, body: JSON) -> JSON:
        return self._new_message(channel_id, body)

    @staticmethod
    def _edit(msg: JSON, body: JSON) -> None:
        for key in ("content", "embeds", "components", "flags"):
            if key in body and body[key] is not None:
                msg[key] = body[key]
        msg["edited_timestamp"] = p.TIMESTAMP

    def _callback(self, token: str, body: JSON, *, with_response: bool) -> web.Response:
        cb = self._callbacks.get(token)
        if cb is None:
            return self._json({"message": "Unknown interaction", "code": 10062}, 404)
        kind = body.get("type")
        data = body.get("data") or {}
        inter = cb.interaction
        channel_id = int(inter.get("channel_id") or 0)
        message: JSON | None = None
        if kind in (4, 5):  # CHANNEL_MESSAGE_WITH_SOURCE, DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE
            message = self._new_message(channel_id, data, interaction=inter)
            cb.original_id = int(message["id"])
        elif kind == 7 and inter.get("message"):  # UPDATE_MESSAGE
            message = self.messages.get(int(inter["message"]["id"]))
            if message is None:
                message = dict(inter["message"])
                self.messages[int(message["id"])] = message
            self._edit(message, data)
        if not with_response:
            return web.Response(status=204)
        answer: JSON = {
            "interaction": {
                "id": inter["id"],
                "type": inter["type"],
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool(int(data.get("flags") or 0) & EPHEMERAL),
            },
        }
        if message is not None:
            answer["interaction"]["response_message_id"] = message["id"]
        answer["resource"] = {"type": kind, **({"message": message} if message is not None and kind != 7 else {})}
        return self._json(answer)

    def _webhook_message(self, method: str, token: str, which: str, body: JSON | None) -> web.Response:
        cb = self._callbacks.get(token)
        if cb is None:
            return self._json({"message": "Unknown Webhook", "code": 10015}, 404)
        if which == "@original":
            if cb.original_id is None and cb.interaction.get("message") and method == "PATCH":
                cb.original_id = int(cb.interaction["message"]["id"])
            msg_id = cb.original_id
        else:
            msg_id = int(which)
        msg = self.messages.get(msg_id) if msg_id is not None else None
        if msg is None:
            return self._json({"message": "Unknown Message", "code": 10008}, 404)
        if method == "PATCH":
            self._edit(msg, body or {})
        elif method == "DELETE":
            del self.messages[int(msg["id"])]
            return web.Response(status=204)
        return self._json(msg)

    def _followup(self, token: str, body: JSON) -> web.Response:
        cb = self._callbacks.get(token)
        if cb is None:
            return self._json({"message": "Unknown Webhook", "code": 10015}, 404)
        return self._json(
            self._new_message(int(cb.interaction.get("channel_id") or 0), body, interaction=cb.interaction)
        )
