"""The card's buttons: context presets, language toggle, "show the math", the "📈" chart, and Pin.

Every intent's card has the context presets and the language toggle (a what-fits or compare card is recomputed at
the new context; a solver's card solves again, except that the largest context becomes a plain fit card at the
pressed context); "show the math" and the chart are on the cards of one model.

Each is a :class:`discord.ui.DynamicItem` whose ``custom_id`` carries the card's settings (:mod:`bot.ui.state`),
so a button on a card posted before a restart still works: the bot registers the classes in ``setup_hook`` and
recomputes the card from the id. No view is kept in memory per message.
"""

from __future__ import annotations

import io
import logging
import re
import time
from typing import TYPE_CHECKING, Any

import discord
from discord import ui

from vramfit.bot.answering.cards import AnyCard, Card, CompareCard
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import Lang, Tr, _, format_tokens_short, lang_for_locale
from vramfit.bot.render.embed import render_card, render_error, render_math
from vramfit.bot.ui.deliveries import (
    BUTTON_LEAD,
    RESPONSE_WINDOW_SECONDS,
    UNKNOWN_INTERACTION,
    first_response,
    post_late,
)
from vramfit.bot.ui.replies import interaction_context, retry_text, send_ephemeral, within_window
from vramfit.bot.ui.state import STATE_PATTERN, CardState, custom_id

if TYPE_CHECKING:  # annotations only: bot.bot is a layer above bot.ui (tests/import_layers.py)
    from vramfit.bot.bot import VramBot  # annotations only: bot.bot is a layer above bot.ui (tests/import_layers.py)

log = logging.getLogger(__name__)

CONTEXT_PRESETS = (4096, 8192, 32768, 131072)
NO_MENTIONS = discord.AllowedMentions.none()


class _CardButton:
    """Shared plumbing of the buttons (a mixin before ``DynamicItem``): cooldown, errors, access to the bot."""

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        bot: VramBot = interaction.client
        lang = self.reply_lang(interaction)
        retry = bot.button_cooldown.hit(interaction.user.id)
        if retry is not None:
            await send_ephemeral(interaction, retry_text(Tr(lang), retry))
            return
        try:
            await self.press(interaction, bot)
        except AnswerError as error:
            await send_ephemeral(interaction, render_error(error, lang))
        except discord.NotFound as exc:
            if exc.code != UNKNOWN_INTERACTION:
                log.warning("Discord refused a button reply: %s", interaction_context(interaction), exc_info=True)
                return
            # the press reached the bot past Discord's window: said in the channel rather than not at all
            late = _("Your button press reached me after Discord's window for it had closed: press it again.")
            await post_late(interaction, lang, lead=BUTTON_LEAD, content=Tr(lang)(late))
        except discord.HTTPException:
            log.warning("Discord refused a button reply: %s", interaction_context(interaction), exc_info=True)
        except Exception:
            log.exception("Button failed: %s", interaction_context(interaction))
            await send_ephemeral(
                interaction, Tr(lang)(_("Something went wrong on my side. It has been logged; please try again."))
            )

    def reply_lang(self, interaction: discord.Interaction[Any]) -> Lang:
        return lang_for_locale(interaction.locale)

    async def press(self, interaction: discord.Interaction[Any], bot: VramBot) -> None:
        raise NotImplementedError


def _decoded(match: re.Match[str]) -> CardState | None:
    """The card state a button id carries, or None when it cannot be read (a crafted or damaged id)."""
    try:
        return CardState.decode(match["state"])
    except ValueError:  # pydantic's ValidationError included
        log.info("Unreadable button state %r", match["state"][:200])
        return None


def _stateful_id(action: str, arg: str, state: CardState) -> str:
    """A stateful button's ``custom_id``: :func:`card_view` adds those buttons only when the longest id fits in
    Discord's 100 characters, so every one does."""
    cid = custom_id(action, arg, state)
    assert cid is not None
    return cid


def _second_row_button(label: str, emoji: str, cid: str) -> ui.Button[Any]:
    """A grey button in the row under the context buttons (language, math, pin)."""
    return ui.Button(label=label, emoji=emoji, style=discord.ButtonStyle.secondary, custom_id=cid, row=1)


class _StatefulButton(_CardButton):
    state: CardState

    def reply_lang(self, interaction: discord.Interaction[Any]) -> Lang:
        return self.state.lang

    async def rerender(self, interaction: discord.Interaction[Any], bot: VramBot, state: CardState) -> None:
        """The card at the new settings: in place for the one who asked (and on a private copy), as a private copy
        for anyone else, so a public (pinned) card changes only when its asker changes it. Deferred when the answer
        is slow; posted in the channel, naming the presser, when Discord's window had closed."""
        started = time.monotonic()
        asker = pressed_by_asker(interaction)
        card = await within_window(
            interaction,
            bot.answer("", state.lang, state.overrides()),
            defer_after=bot.settings.defer_after_seconds,
            ephemeral=not asker,
        )
        embed = render_card(card, state.lang)
        view = card_view(card, state.lang, pin=asker and interaction.guild_id is not None)
        if interaction.response.is_done():  # deferred
            if asker:  # edit the card's message through the webhook
                await interaction.edit_original_response(embed=embed, view=view, allowed_mentions=NO_MENTIONS)
            else:
                await interaction.followup.send(embed=embed, view=view, ephemeral=True, allowed_mentions=NO_MENTIONS)
            return
        if asker:
            send = interaction.response.edit_message(embed=embed, view=view, allowed_mentions=NO_MENTIONS)
        else:
            send = interaction.response.send_message(embed=embed, view=view, ephemeral=True,
                                                     allowed_mentions=NO_MENTIONS)  # fmt: skip
        window_left = RESPONSE_WINDOW_SECONDS - (time.monotonic() - started)
        if not await first_response(bot.callbacks, interaction, send, window_left):
            await post_late(interaction, state.lang, lead=BUTTON_LEAD, embed=embed, view=view)


def pressed_by_asker(interaction: discord.Interaction[Any]) -> bool:
    """Whether the card's button was pressed by the one who asked for it: the user who ran the command, or who wrote
    the message the card replies to; a private copy (ephemeral) is always its viewer's. An asker the message does
    not name (a card from before this check, a reply to a deleted message) counts as anyone's."""
    message = interaction.message
    if message is None or message.flags.ephemeral:
        return True
    asker: int | None = None
    if message.interaction_metadata is not None:
        asker = message.interaction_metadata.user.id
    elif message.reference is not None and isinstance(message.reference.resolved, discord.Message):
        asker = message.reference.resolved.author.id
    return asker is None or asker == interaction.user.id


class ContextButton(_StatefulButton, ui.DynamicItem[ui.Button[Any]], template=rf"vf:ctx:(?P<arg>\d+):{STATE_PATTERN}"):
    """Re-render the card in place at another context length."""

    def __init__(self, state: CardState, context: int) -> None:
        self.state = state
        self.context = context
        current = context == state.context
        super().__init__(
            ui.Button(
                label=format_tokens_short(context),
                style=discord.ButtonStyle.primary if current else discord.ButtonStyle.secondary,
                disabled=current,
                custom_id=_stateful_id("ctx", str(context), state),
                row=0,
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: ui.Item[Any], match: re.Match[str], /
    ) -> ContextButton:
        return cls(state, int(match["arg"])) if (state := _decoded(match)) else UnreadableButton()  # type: ignore[return-value]

    async def press(self, interaction: discord.Interaction[Any], bot: VramBot) -> None:
        await self.rerender(interaction, bot, self.state.with_context(self.context))


class LanguageButton(
    _StatefulButton, ui.DynamicItem[ui.Button[Any]], template=rf"vf:lang:(?P<arg>ko|en):{STATE_PATTERN}"
):
    """Switch the card between Korean and English."""

    def __init__(self, state: CardState, target: Lang) -> None:
        self.state = state
        self.target: Lang = target
        label = "한국어" if target == "ko" else "English"
        super().__init__(_second_row_button(label, "🌐", _stateful_id("lang", target, state)))

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: ui.Item[Any], match: re.Match[str], /
    ) -> LanguageButton:
        return cls(state, "ko" if match["arg"] == "ko" else "en") if (state := _decoded(match)) else UnreadableButton()  # type: ignore[return-value]

    async def press(self, interaction: discord.Interaction[Any], bot: VramBot) -> None:
        await self.rerender(interaction, bot, self.state.with_lang(self.target))


class MathButton(_StatefulButton, ui.DynamicItem[ui.Button[Any]], template=rf"vf:math:(?P<arg>-):{STATE_PATTERN}"):
    """Send the formulas with this card's numbers, visible only to the presser."""

    def __init__(self, state: CardState) -> None:
        self.state = state
        super().__init__(_second_row_button(Tr(state.lang)(_("Show the math")), "🧮", _stateful_id("math", "-", state)))

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: ui.Item[Any], match: re.Match[str], /
    ) -> MathButton:
        return cls(state) if (state := _decoded(match)) else UnreadableButton()  # type: ignore[return-value]

    async def press(self, interaction: discord.Interaction[Any], bot: VramBot) -> None:
        card = await bot.answer("", self.state.lang, self.state.overrides())
        if isinstance(card, CompareCard):
            card = card.a
        if not isinstance(card, Card):
            raise AnswerError("no_math", "this card has no single model to show the math for")
        await interaction.response.send_message(
            embed=render_math(card, self.state.lang), ephemeral=True, allowed_mentions=NO_MENTIONS
        )


class ChartButton(_StatefulButton, ui.DynamicItem[ui.Button[Any]], template=rf"vf:chart:(?P<arg>-):{STATE_PATTERN}"):
    """Send the chart of this card's settings, memory against context (a PNG): under the card for the one who asked,
    privately for anyone else, as the other buttons do."""

    def __init__(self, state: CardState) -> None:
        self.state = state
        super().__init__(_second_row_button(Tr(state.lang)(_("Chart")), "📈", _stateful_id("chart", "-", state)))

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: ui.Item[Any], match: re.Match[str], /
    ) -> ChartButton:
        return cls(state) if (state := _decoded(match)) else UnreadableButton()  # type: ignore[return-value]

    async def press(self, interaction: discord.Interaction[Any], bot: VramBot) -> None:
        series_of = bot.backend.chart
        if series_of is None:
            raise AnswerError("chart_unavailable", "this bot draws no charts")
        lang, overrides = self.state.lang, self.state.overrides()

        def draw() -> bytes:
            from vramfit.bot.render import chart  # matplotlib takes ~0.3 s to import: only when a chart is asked for

            return chart.render_chart(series_of(overrides), lang)

        png = await bot.off_loop(draw)
        picture = discord.File(io.BytesIO(png), filename="vramfit-chart.png")
        await interaction.response.send_message(
            file=picture, ephemeral=not pressed_by_asker(interaction), allowed_mentions=NO_MENTIONS
        )


class PinButton(_CardButton, ui.DynamicItem[ui.Button[Any]], template=r"vf:pin:(?P<lang>ko|en)"):
    """Pin the card, for members who may pin (or manage) messages, when the bot may pin.

    Since 2026-02-23 Discord requires ``PIN_MESSAGES`` of the bot (``MANAGE_MESSAGES`` no longer suffices);
    for the member, either permission shows they may decide what is pinned.
    """

    def __init__(self, lang: Lang) -> None:
        self.lang: Lang = lang
        super().__init__(_second_row_button(Tr(lang)(_("Pin")), "📌", f"vf:pin:{lang}"))

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: ui.Item[Any], match: re.Match[str], /
    ) -> PinButton:
        return cls("ko" if match["lang"] == "ko" else "en")

    async def press(self, interaction: discord.Interaction[Any], bot: VramBot) -> None:
        tr = Tr(self.reply_lang(interaction))
        message = interaction.message
        if interaction.guild_id is None or message is None:
            await send_ephemeral(interaction, tr(_("Pinning works in servers only.")))
            return
        member = interaction.permissions
        if not (member.pin_messages or member.manage_messages):
            await send_ephemeral(
                interaction, tr(_("Sorry, only members who can pin messages in this channel can pin the card."))
            )
            return
        if not interaction.app_permissions.pin_messages:
            await send_ephemeral(interaction, tr(_("I need the Pin Messages permission in this channel to do that.")))
            return
        if message.pinned:
            await send_ephemeral(interaction, tr(_("This card is already pinned.")))
            return
        await message.pin(reason=f"vramfit card pinned by {interaction.user} ({interaction.user.id})")
        await send_ephemeral(interaction, tr(_("Pinned.")))


_KNOWN_IDS = "|".join(
    re.sub(r"\(\?P<\w+>", "(?:", cls.__discord_ui_compiled_template__.pattern)
    for cls in (ContextButton, LanguageButton, MathButton, ChartButton, PinButton)
)


class UnreadableButton(_CardButton, ui.DynamicItem[ui.Button[Any]], template=rf"(?!(?:{_KNOWN_IDS})$)vf:.*"):
    """Any ``vf:`` id that no other button reads (or whose card state is damaged): the presser is told so instead
    of getting no reply. discord.py dispatches every template that matches, hence the negative lookahead."""

    def __init__(self) -> None:
        super().__init__(ui.Button(label="?", custom_id="vf:unreadable"))

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: ui.Item[Any], match: re.Match[str], /
    ) -> UnreadableButton:
        return cls()

    async def press(self, interaction: discord.Interaction[Any], bot: VramBot) -> None:
        raise AnswerError("stale_button", "this button's card cannot be read")


DYNAMIC_ITEMS: tuple[type[ui.DynamicItem[Any]], ...] = (
    ContextButton,
    LanguageButton,
    MathButton,
    ChartButton,
    PinButton,
    UnreadableButton,
)


def card_view(card: AnyCard, lang: Lang, *, pin: bool = True) -> ui.View:
    """The buttons under a card in ``lang``; stateful ones only when the card's settings fit in a ``custom_id``."""
    view = ui.View(timeout=None)
    state = CardState.from_card(card, lang)
    if card.stateful and custom_id("ctx", str(max(CONTEXT_PRESETS)), state) is not None:
        for context in CONTEXT_PRESETS:
            view.add_item(ContextButton(state, context))
        view.add_item(LanguageButton(state, "en" if lang == "ko" else "ko"))
        if isinstance(card, Card):
            view.add_item(MathButton(state))
            view.add_item(ChartButton(state))
    if pin:
        view.add_item(PinButton(lang))
    # Every button is a DynamicItem its class answers (registered once, exts/buttons.py): discord.py need not keep this
    # view for the message it is sent with (for a private card, a 15-minute timer each), so it is sent finished.
    view.stop()
    return view
