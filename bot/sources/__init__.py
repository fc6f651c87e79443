"""Remote model sources: models named by where they live rather than by a preset (a Hugging Face repo or link).

Discord-free and outside ``calc``: these modules fetch, the calculator only receives the architecture and the tensor
sizes they read (:func:`vramfit.calc.gguf.read_gguf_stream`).
"""
