"""Payload factories for the fake Discord: every dict the real discord.py client parses is built here.

discord.py indexes required keys directly (``data['flags']``), and a missing one inside a gateway parser kills the
gateway task, so all payloads come from these helpers, complete and in one place. Pinned against discord.py 2.7.
"""

from __future__ import annotations

import itertools
from typing import Any

JSON = dict[str, Any]

DISCORD_EPOCH_MS = 1_420_070_400_000
_BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: snowflakes are deterministic, not wall-clock
_counter = itertools.count(1)

TIMESTAMP = "2026-01-01T00:00:00.000000+00:00"

# Permission bits (https://discord.com/developers/docs/topics/permissions).
VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
MANAGE_MESSAGES = 1 << 13
EMBED_LINKS = 1 << 14
READ_MESSAGE_HISTORY = 1 << 16
USE_APPLICATION_COMMANDS = 1 << 31
SEND_MESSAGES_IN_THREADS = 1 << 38
PIN_MESSAGES = 1 << 51

MEMBER_PERMISSIONS = (
    VIEW_CHANNEL | SEND_MESSAGES | READ_MESSAGE_HISTORY | USE_APPLICATION_COMMANDS | (SEND_MESSAGES_IN_THREADS)
)
MODERATOR_PERMISSIONS = MEMBER_PERMISSIONS | MANAGE_MESSAGES | PIN_MESSAGES
BOT_PERMISSIONS = MEMBER_PERMISSIONS | EMBED_LINKS | PIN_MESSAGES


def snowflake() -> int:
    """Return a new, increasing snowflake id."""
    return ((_BASE_MS - DISCORD_EPOCH_MS) << 22) | next(_counter)


def user(user_id: int, name: str = "someone", *, bot: bool = False) -> JSON:
    """Build a user object."""
    return {
        "id": str(user_id),
        "username": name,
        "discriminator": "0",
        "global_name": name,
        "avatar": None,
        "bot": bot,
        "system": False,
        "public_flags": 0,
        "flags": 0,
    }


def member(user_data: JSON, *, permissions: int = MEMBER_PERMISSIONS, roles: list[int] | None = None) -> JSON:
    """Build a guild member object as it appears in interactions (with resolved ``permissions``)."""
    return {
        "user": user_data,
        "nick": None,
        "avatar": None,
        "roles": [str(r) for r in roles or []],
        "joined_at": TIMESTAMP,
        "premium_since": None,
        "deaf": False,
        "mute": False,
        "pending": False,
        "flags": 0,
        "permissions": str(permissions),
        "communication_disabled_until": None,
    }


def role(
    role_id: int, name: str = "@everyone", *, permissions: int = MEMBER_PERMISSIONS, bot_id: int | None = None
) -> JSON:
    """Build a role object (``bot_id``: the managed role Discord gives a bot when it joins a server)."""
    data: JSON = {
        "id": str(role_id),
        "name": name,
        "color": 0,
        "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
        "hoist": False,
        "icon": None,
        "unicode_emoji": None,
        "position": 0,
        "permissions": str(permissions),
        "managed": False,
        "mentionable": False,
        "flags": 0,
    }
    if bot_id is not None:
        data.update(managed=True, tags={"bot_id": str(bot_id)})
    return data


def text_channel(channel_id: int, guild_id: int, name: str = "general") -> JSON:
    """Build a guild text channel."""
    return {
        "id": str(channel_id),
        "type": 0,
        "guild_id": str(guild_id),
        "name": name,
        "position": 0,
        "permission_overwrites": [],
        "nsfw": False,
        "topic": None,
        "rate_limit_per_user": 0,
        "parent_id": None,
        "last_message_id": None,
        "flags": 0,
    }


def forum_channel(channel_id: int, guild_id: int, name: str = "will-it-run") -> JSON:
    """Build a guild forum channel (type 15); its posts are threads whose first message has the thread's id."""
    return {
        **text_channel(channel_id, guild_id, name),
        "type": 15,
        "available_tags": [],
        "default_reaction_emoji": None,
        "default_thread_rate_limit_per_user": 0,
        "default_sort_order": None,
        "default_forum_layout": 0,
    }


def resolved_channel(channel: JSON, *, permissions: int = BOT_PERMISSIONS) -> JSON:
    """A channel as an interaction's ``resolved.channels`` carries it (a channel option's value)."""
    keys = ("id", "type", "name", "parent_id", "guild_id", "position", "nsfw", "topic", "rate_limit_per_user", "flags")
    data = {k: channel[k] for k in keys if k in channel}
    data.setdefault("parent_id", None)
    return {**data, "permissions": str(permissions), "last_message_id": None}


def thread(thread_id: int, guild_id: int, parent_id: int, owner_id: int, name: str = "help") -> JSON:
    """Build a public thread."""
    return {
        "id": str(thread_id),
        "type": 11,
        "guild_id": str(guild_id),
        "parent_id": str(parent_id),
        "owner_id": str(owner_id),
        "name": name,
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "message_count": 0,
        "member_count": 1,
        "total_message_sent": 0,
        "flags": 0,
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": 1440,
            "archive_timestamp": TIMESTAMP,
            "locked": False,
            "invitable": True,
            "create_timestamp": TIMESTAMP,
        },
    }


def guild(
    guild_id: int,
    *,
    name: str = "test guild",
    owner_id: int = 1,
    channels: list[JSON] | None = None,
    threads: list[JSON] | None = None,
    members: list[JSON] | None = None,
    preferred_locale: str = "en-US",
) -> JSON:
    """Build a full GUILD_CREATE payload (``@everyone`` role has the same id as the guild)."""
    return {
        "id": str(guild_id),
        "name": name,
        "icon": None,
        "splash": None,
        "discovery_splash": None,
        "owner_id": str(owner_id),
        "afk_channel_id": None,
        "afk_timeout": 300,
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "roles": [role(guild_id)],
        "emojis": [],
        "stickers": [],
        "features": [],
        "mfa_level": 0,
        "nsfw_level": 0,
        "application_id": None,
        "system_channel_id": None,
        "system_channel_flags": 0,
        "rules_channel_id": None,
        "max_members": 500000,
        "vanity_url_code": None,
        "description": None,
        "banner": None,
        "premium_tier": 0,
        "premium_subscription_count": 0,
        "preferred_locale": preferred_locale,
        "public_updates_channel_id": None,
        "nsfw": False,
        "premium_progress_bar_enabled": False,
        "safety_alerts_channel_id": None,
        "joined_at": TIMESTAMP,
        "large": False,
        "unavailable": False,
        "member_count": max(1, len(members or [])),
        "voice_states": [],
        "members": members or [],
        "channels": channels or [],
        "threads": threads or [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
    }


def application(app_id: int, owner: JSON, *, name: str = "vramfit") -> JSON:
    """Build the ``GET /oauth2/applications/@me`` answer."""
    return {
        "id": str(app_id),
        "name": name,
        "icon": None,
        "description": "",
        "rpc_origins": [],
        "bot_public": True,
        "bot_require_code_grant": False,
        "owner": owner,
        "team": None,
        "verify_key": "0" * 64,
        "flags": 0,
        "summary": "",
        "tags": [],
        "redirect_uris": [],
        "interactions_endpoint_url": None,
    }


def message(
    *,
    message_id: int,
    channel_id: int,
    author: JSON,
    content: str = "",
    guild_id: int | None = None,
    member_data: JSON | None = None,
    mentions: list[JSON] | None = None,
    mention_everyone: bool = False,
    embeds: list[JSON] | None = None,
    components: list[JSON] | None = None,
    flags: int = 0,
    message_type: int = 0,
    pinned: bool = False,
    message_reference: JSON | None = None,
    webhook_id: int | None = None,
    application_id: int | None = None,
    mention_roles: list[int] | None = None,
    attachments: list[JSON] | None = None,
) -> JSON:
    """Build a message object (MESSAGE_CREATE adds ``guild_id`` and ``member``)."""
    data: JSON = {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": author,
        "content": content,
        "timestamp": TIMESTAMP,
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": mention_everyone,
        "mentions": mentions or [],
        "mention_roles": [str(r) for r in mention_roles or ()],
        "attachments": attachments or [],
        "embeds": embeds or [],
        "components": components or [],
        "reactions": [],
        "pinned": pinned,
        "type": message_type,
        "flags": flags,
    }
    if guild_id is not None:
        data["guild_id"] = str(guild_id)
    if member_data is not None:
        data["member"] = {k: v for k, v in member_data.items() if k not in ("user", "permissions")}
    if message_reference is not None:
        data["message_reference"] = message_reference
    if webhook_id is not None:
        data["webhook_id"] = str(webhook_id)
    if application_id is not None:
        data["application_id"] = str(application_id)
    return data


def attachment(attachment_id: int, filename: str, size: int, url: str, *, content_type: str | None = None) -> JSON:
    """Build an attachment object (on a message, or in an interaction's ``resolved.attachments``)."""
    data: JSON = {"id": str(attachment_id), "filename": filename, "size": size, "url": url, "proxy_url": url}
    if content_type is not None:
        data["content_type"] = content_type
    return data


def command_option(name: str, value: Any, option_type: int = 3, *, focused: bool = False) -> JSON:
    """Build one option of an application command interaction (3 string, 4 integer, 7 channel, 11 attachment)."""
    data: JSON = {"name": name, "type": option_type, "value": value}
    if focused:
        data["focused"] = True
    return data


def subcommand(name: str, options: list[JSON] | None = None, *, group: bool = False) -> JSON:
    """Build a subcommand (type 1) or a subcommand group (type 2) option that wraps ``options``."""
    return {"name": name, "type": 2 if group else 1, "options": options or []}


def interaction(
    *,
    app_id: int,
    interaction_type: int,
    data: JSON,
    user_data: JSON,
    locale: str = "en-US",
    guild_id: int | None = None,
    channel: JSON | None = None,
    permissions: int = MEMBER_PERMISSIONS,
    app_permissions: int = BOT_PERMISSIONS,
    message_data: JSON | None = None,
    guild_locale: str | None = "en-US",
) -> JSON:
    """Build an INTERACTION_CREATE payload (2 application command, 3 component, 4 autocomplete).

    In a guild the invoker comes as ``member`` (with resolved channel permissions), in DMs as ``user``.
    """
    interaction_id = snowflake()
    payload: JSON = {
        "id": str(interaction_id),
        "application_id": str(app_id),
        "type": interaction_type,
        "data": data,
        "token": f"tok-{interaction_id}",
        "version": 1,
        "locale": locale,
        "app_permissions": str(app_permissions),
        "entitlements": [],
        "authorizing_integration_owners": {"0": str(guild_id)} if guild_id else {"1": user_data["id"]},
        "context": 0 if guild_id else 1,
        "attachment_size_limit": 10 * 1024 * 1024,
    }
    if channel is not None:
        payload["channel"] = channel
        payload["channel_id"] = channel["id"]
    if guild_id is not None:
        payload["guild_id"] = str(guild_id)
        payload["guild"] = {"id": str(guild_id), "locale": guild_locale or "en-US", "features": []}
        payload["member"] = member(user_data, permissions=permissions)
        if guild_locale is not None:
            payload["guild_locale"] = guild_locale
    else:
        payload["user"] = user_data
    if message_data is not None:
        payload["message"] = message_data
    return payload


def slash_command(
    *,
    app_id: int,
    command_id: int,
    name: str,
    options: list[JSON],
    user_data: JSON,
    resolved: JSON | None = None,
    **kwargs: Any,
) -> JSON:
    """Build a CHAT_INPUT command interaction (``resolved``: the objects its options point at, e.g. channels)."""
    data: JSON = {"id": str(command_id), "name": name, "type": 1, "options": options}
    if resolved:
        data["resolved"] = resolved
    return interaction(app_id=app_id, interaction_type=2, data=data, user_data=user_data, **kwargs)


def autocomplete(
    *,
    app_id: int,
    command_id: int,
    name: str,
    options: list[JSON],
    user_data: JSON,
    **kwargs: Any,
) -> JSON:
    """Build an APPLICATION_COMMAND_AUTOCOMPLETE interaction (one option has ``focused``)."""
    data = {"id": str(command_id), "name": name, "type": 1, "options": options}
    return interaction(app_id=app_id, interaction_type=4, data=data, user_data=user_data, **kwargs)


def button_press(*, app_id: int, custom_id: str, message_data: JSON, user_data: JSON, **kwargs: Any) -> JSON:
    """Build a MESSAGE_COMPONENT interaction for a button on ``message_data``."""
    data = {"custom_id": custom_id, "component_type": 2}
    return interaction(
        app_id=app_id, interaction_type=3, data=data, user_data=user_data, message_data=message_data, **kwargs
    )
