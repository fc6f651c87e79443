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
    VRAMFIT_SHARD_IDS=0,1                # only these shards (needs VRAMFIT_SHARD_COUNT); other processes run the rest
    DATABASE_URL=postgresql://...        # per-server settings in PostgreSQL (shared by every process); never logged
    VRAMFIT_DATABASE_PATH=vramfit.db     # ... else in this SQLite file (WAL mode)
    VRAMFIT_SETTINGS_CACHE_SECONDS=30    # how long a process keeps a server's settings before reading them again
    VRAMFIT_MESSAGE_CONTENT=false        # true: ask for the privileged message-content intent (auto-answer channels)
    VRAMFIT_ANSWER_PROCESSES=1           # processes computing answers off the event loop's GIL (0: threads)
    VRAMFIT_ANSWER_CPU_SECONDS=2         # the CPU one question may use before it is "too long or too complex"
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from vramfit.bot.storage.db import describe_url


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
    shard_ids: Annotated[tuple[int, ...] | None, NoDecode] = None
    database_url: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("DATABASE_URL", "VRAMFIT_DATABASE_URL")
    )
    database_path: str = "vramfit.db"
    settings_cache_seconds: float = Field(default=30.0, ge=0)
    message_content: bool = False
    # Answering: the parse and the calculation run in worker threads, never on the event loop, within a time limit.
    answer_workers: int = Field(default=2, ge=1, le=64)
    answer_timeout_seconds: float = Field(default=5.0, gt=0)
    # Processes that compute answers (bot.answering.processes), so no question takes the GIL from the event loop;
    # 0: the answering threads compute them (a backend that cannot be built in another process always does)
    answer_processes: int = Field(default=1, ge=0, le=64)
    # The CPU a question may use (a worker process's, or its thread's): past it, "too long or too complex"
    answer_cpu_seconds: float = Field(default=2.0, gt=0)
    # Compute what every question needs (the catalog, the parser's index, each preset's weights) before connecting,
    # so the first burst after a start does not pay for it (a few seconds)
    warm_up: bool = True
    # Questions that read a model from the Hub or the Ollama registry run in their own threads, so a stalled server
    # holds only the questions that need it; each read has its own deadline (VRAMFIT_HUB_DEADLINE_SECONDS).
    remote_workers: int = Field(default=4, ge=1, le=64)
    # The settings store on the answer path: a read slower than this answers with cached or default settings.
    storage_timeout_seconds: float = Field(default=1.0, gt=0)
    # An interaction whose answer is not ready by then is deferred (Discord's window is 3 s).
    defer_after_seconds: float = Field(default=1.5, gt=0, lt=3.0)

    @field_validator("owner_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: Any) -> Any:
        """Accept ``123,456`` (and ``[123, 456]``) from the environment."""
        if isinstance(value, str):
            return frozenset(int(part) for part in value.replace("[", "").replace("]", "").split(",") if part.strip())
        return value

    @field_validator("shard_ids", mode="before")
    @classmethod
    def _split_shards(cls, value: Any) -> Any:
        """Accept ``0,1`` (and ``[0, 1]``) from the environment; empty means every shard."""
        if isinstance(value, str):
            parts = [part for part in value.replace("[", "").replace("]", "").split(",") if part.strip()]
            return tuple(int(part) for part in parts) or None
        return value

    @model_validator(mode="after")
    def _check_shards(self) -> Settings:
        if self.shard_ids is not None:
            if self.shard_count is None:
                raise ValueError("shard_ids needs shard_count (VRAMFIT_SHARD_COUNT or --shard-count)")
            bad = [i for i in self.shard_ids if not 0 <= i < self.shard_count]
            if bad or len(set(self.shard_ids)) != len(self.shard_ids):
                raise ValueError(f"shard_ids must be distinct and in 0..{self.shard_count - 1}; got {self.shard_ids}")
        return self

    @field_validator("log_level")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()

    def safe_summary(self) -> dict[str, Any]:
        """The settings without the token, for the startup log."""
        data = self.model_dump(exclude={"discord_token", "database_url"})
        data["discord_token"] = "set" if self.discord_token else "missing"
        if self.database_url is not None:
            data["database_url"] = describe_url(self.database_url.get_secret_value())  # without the password
        return data
