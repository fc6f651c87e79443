"""The bot's settings, from the environment or a ``.env`` file (pydantic-settings).

``DISCORD_TOKEN`` is a :class:`~pydantic.SecretStr`: its ``repr`` and ``str`` are masked, and it is unwrapped only
where the client logs in. The other settings take a ``VRAMFIT_`` prefix::

    DISCORD_TOKEN=...                    # required to run; never logged
    VRAMFIT_OWNER_IDS=123,456            # who may run owner commands (default: the application's owner)
    VRAMFIT_LOG_LEVEL=INFO
    VRAMFIT_DEV_GUILD_ID=...             # `--sync` without `--guild` syncs here instead of globally when set
    VRAMFIT_COOLDOWN_RATE=5              # answers per user ...
    VRAMFIT_COOLDOWN_SECONDS=30          # ... per this many seconds, for /vram and for mentions each
    VRAMFIT_SHARD_COUNT=                 # empty: ask Discord (AutoShardedBot)
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="VRAMFIT_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,  # Settings(discord_token=...) as well as the DISCORD_TOKEN alias
    )

    discord_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("DISCORD_TOKEN", "VRAMFIT_DISCORD_TOKEN")
    )
    owner_ids: Annotated[frozenset[int], NoDecode] = frozenset()
    log_level: str = "INFO"
    dev_guild_id: int | None = None
    cooldown_rate: int = Field(default=5, ge=1)
    cooldown_seconds: float = Field(default=30.0, gt=0)
    button_cooldown_rate: int = Field(default=10, ge=1)
    button_cooldown_seconds: float = Field(default=30.0, gt=0)
    shard_count: int | None = Field(default=None, ge=1)

    @field_validator("owner_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: Any) -> Any:
        """Accept ``123,456`` (and ``[123, 456]``) from the environment."""
        if isinstance(value, str):
            return frozenset(int(part) for part in value.replace("[", "").replace("]", "").split(",") if part.strip())
        return value

    @field_validator("log_level")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()

    def safe_summary(self) -> dict[str, Any]:
        """The settings without the token, for the startup log."""
        data = self.model_dump(exclude={"discord_token"})
        data["discord_token"] = "set" if self.discord_token else "missing"
        return data
