"""A fake Discord for end-to-end tests: the real discord.py client talks to it over loopback."""

from tests.fake_discord.server import EPHEMERAL, FakeDiscord, GatewaySession, Recorded

__all__ = ["EPHEMERAL", "FakeDiscord", "GatewaySession", "Recorded"]
