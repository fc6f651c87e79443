"""Renderers: an answer from calc as the JSON contract, terminal text or a Discord embed."""
