"""Answering a question, without Discord: read it (:mod:`bot.parser`), resolve it to the calculator's answer for its
intent (:mod:`.resolve`), turn that into the card every front end renders (:mod:`.cards`), behind one cached service
the bot and its tests call (:mod:`.service`); and the follow-ups a thread asks (:mod:`.followups`)."""
