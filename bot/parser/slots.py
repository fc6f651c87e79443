"""Slots read with regular expressions: engine, flash attention, KV cache type, weight format, users, context, intent.

Each extractor reads a :class:`Scratch` (the cleaned message) and blanks what it used, so a number read as one slot
is never read again as another ("q8_0 kv" is the KV cache, not the weights; "4 users" is not a GPU count).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from vramfit.bot.parser.numbers import count_from_suffix, tokens_from_suffix
from vramfit.calc.errors import BadNumberError, UnknownQuantError
from vramfit.calc.file_types import UPLOADER_MIXES, FileType, uploader_mix
from vramfit.calc.gpu import GIB
from vramfit.calc.ram_speed import DESKTOP_CHANNELS, MAX_CHANNELS, MTS_RANGE, TYPICAL_MTS, RamKind, RamSpeed, typical
from vramfit.calc.request import MAX_CONTEXT, MAX_USERS, Engine, KvType

USED = "\x00"


@dataclass
class Scratch:
    """The message being read; used characters are replaced by NUL (positions never move, and no pattern bridges
    a used span the way it would bridge spaces)."""

    text: str

    def blank(self, start: int, end: int) -> None:
        self.text = self.text[:start] + USED * (end - start) + self.text[end:]

    def take(self, m: re.Match[str]) -> None:
        self.blank(m.start(), m.end())


# --- engine ----------------------------------------------------------------------------------------------------

_VLLM = re.compile(r"(?<![a-z0-9])v-?llm(?![a-z0-9])|브이엘엘엠")
_LLAMA_CPP = re.compile(
    r"(?<![a-z0-9])(?:llama[\s._-]?cpp|llama[\s-]?server|ollama|lm[\s-]?studio|koboldcpp|kobold\.cpp|kobold)"
    r"(?![a-z0-9])|라마\s?\.?\s?cpp|라마\s?씨피피|올라마|코볼드|엘엠\s?스튜디오"
)


_OLLAMA = re.compile(r"(?<![a-z0-9])ollama(?![a-z0-9])|올라마")


def mentions_ollama(text: str) -> bool:
    """The question names Ollama ("on ollama", "올라마로"): its defaults apply (calc.ollama)."""
    return _OLLAMA.search(text) is not None


def extract_engine(s: Scratch) -> tuple[Engine | None, bool]:
    """The engine named, and whether both were named ("llama.cpp vs vllm": compare them)."""
    vllm = list(_VLLM.finditer(s.text))
    llama = list(_LLAMA_CPP.finditer(s.text))
    for m in vllm + llama:
        s.take(m)
    if vllm and llama:
        return None, True
    if vllm:
        return Engine.VLLM, False
    if llama:
        return Engine.LLAMA_CPP, False
    return None, False


# --- flash attention -------------------------------------------------------------------------------------------

_FA = r"(?:flash[\s_-]?attn|flash[\s_-]?attention|flashattention|플래시\s?어텐션|(?<![a-z0-9-])fa)"
_END = r"(?=\s*(?:$|[,.;:)!?]|and\b|&|으로|로|고|하고|해서))"
_FA_OFF = re.compile(
    rf"(?:\bno|without|disabl(?:e|ed|ing)|w/o|turn(?:ed)?\s+off)\s+{_FA}"
    rf"|{_FA}\s*(?:[:=]\s*)?(?:off|false|disabled?|끄고|끄면|끈|꺼|끄기|없이|비활성화?|안\s?쓰|안\s?켜|미사용)"
    r"|(?:-fa|--flash-attn)\s*(?:=\s*)?(?:off|0|false)\b"
)
_FA_ON = re.compile(
    rf"(?:with|enable[ds]?|using|use|turn(?:ed)?\s+on)\s+{_FA}"
    rf"|{_FA}\s*(?:[:=]\s*)?(?:on{_END}|true|enabled?|켜고|켜면|켠|켜서|켜|사용|활성화?)"
    r"|(?:^|(?<=\s))(?:-fa|--flash-attn)(?:\s*=\s*(?:on|1|true))?(?![a-z0-9-])"
)


def extract_flash_attn(s: Scratch) -> bool | None:
    off = _FA_OFF.search(s.text)
    on = _FA_ON.search(s.text)
    if off is not None and (on is None or off.start() <= on.start()):
        s.take(off)
        return False
    if on is not None:
        s.take(on)
        return True
    return None


# --- KV cache type ---------------------------------------------------------------------------------------------

_KVT = (
    r"(fp8(?:[_-]?e4m3|[_-]?e5m2)?|fp32|f32|fp16|f16|bf16|q8_0|q8|q5_1|q5_0|q4_1|q4_0|q4|iq4_nl|int8|int4"
    r"|(?:16|8|4)\s?-?\s?(?:bits?|비트))"
)
# "kv", "kv cache", "k/v 캐시", or "cache" / "캐시" alone ("q8_0 cache", "cache-type q8_0", "캐시 q8_0으로"): the
# weights are never called a cache, so a format next to the word is the KV cache's.
_KVW = (
    r"(?:(?:k/v|kv)(?:[\s_-]*(?:cache|캐시|캐쉬))?|cache|캐시|캐쉬)"
    r"(?:[\s_-]*(?:type|dtype|타입|형식|양자화|quant(?:ization)?|precision|정밀도))?"
)
_KV_AFTER = re.compile(rf"(?<![a-z0-9]){_KVW}\s*(?:[:=]|은|는|을|를|도|as|in|to|at|with|=)?\s*{_KVT}(?![a-z0-9_])")
_KV_BEFORE = re.compile(rf"(?<![a-z0-9_]){_KVT}\s*(?:로|으로|짜리|의|for)?\s*{_KVW}(?![a-z])")
# llama.cpp's flags and llama-cpp-python's / vLLM's argument names: "--cache-type-k", "cache_type_v", "-ctk",
# "--kv-cache-dtype".
_KV_FLAG = re.compile(
    rf"(?:(?<![a-z0-9])(?:--)?cache[-_]type[-_][kv]|-ct[kv]|(?<![a-z0-9])(?:--)?kv[-_]cache[-_]dtype)"
    rf"(?:\s*[=:]\s*|\s+){_KVT}(?![a-z0-9_])"
)


def _kv_type(word: str, engine: Engine | None) -> KvType:
    w = re.sub(r"[\s-]", "", word).replace("비트", "bit").replace("bits", "bit")
    if w.startswith("fp8"):
        return KvType.FP8
    table = {
        "fp32": KvType.F32,
        "f32": KvType.F32,
        "fp16": KvType.F16,
        "f16": KvType.F16,
        "16bit": KvType.F16,
        "bf16": KvType.BF16,
        "q8_0": KvType.Q8_0,
        "q8": KvType.Q8_0,
        "q5_1": KvType.Q5_1,
        "q5_0": KvType.Q5_0,
        "q4_1": KvType.Q4_1,
        "q4_0": KvType.Q4_0,
        "q4": KvType.Q4_0,
        "int4": KvType.Q4_0,
        "4bit": KvType.Q4_0,
        "iq4_nl": KvType.IQ4_NL,
    }
    if w in ("int8", "8bit"):
        # vLLM's 8-bit KV cache is fp8; llama.cpp's is q8_0.
        return KvType.FP8 if engine == Engine.VLLM else KvType.Q8_0
    return table[w]


def extract_kv_cache(s: Scratch, engine: Engine | None) -> KvType | None:
    matches = [m for rx in (_KV_FLAG, _KV_AFTER, _KV_BEFORE) for m in rx.finditer(s.text)]
    if not matches:
        return None
    first = min(matches, key=lambda m: m.start())
    kv = _kv_type(first.group(1), engine)
    for m in matches:
        s.take(m)
    return kv


# --- Apple product words ---------------------------------------------------------------------------------------

_APPLE_WORDS = re.compile(
    r"(?:mac\s?book(?:\s?(?:air|pro))?|mac\s?(?:mini|studio|pro)|imac|(?<![a-z0-9])(?:macs?|mbp)(?![a-z0-9])"
    r"|맥\s?북(?:\s?(?:에어|프로))?|맥\s?(?:미니|스튜디오|프로)|아이맥"
    r"|(?<![\uac00-\ud7a3])맥(?=$|[^\uac00-\ud7a3]|에서|으로|로|이랑|은|는|이|가|을|를|도|에))"
    r"(?:\s?(?:1[3-6]|2[47])(?:\"|”|-?inch|인치)?(?![0-9a-z.]))?"
)


_SCREEN_SIZE = re.compile(r"\s?(?:1[3-6]|2[47])(?:\"|”|-?inch|인치)?$")


def remove_apple_words(s: Scratch) -> list[str]:
    """Blank "MacBook Air", "맥북 프로", "Mac Studio" (the chip and memory say what the GPU is); the product names
    found, without a screen size ("MacBook Pro 16\"" gives "macbook pro"), for a memory size with no chip to be read
    against the machines in the catalog (calc.gpu.Machine)."""
    found: list[str] = []
    for m in _APPLE_WORDS.finditer(s.text):
        s.take(m)
        found.append(_SCREEN_SIZE.sub("", m.group(0)))
    return found


# --- weight format ---------------------------------------------------------------------------------------------

KNOWN_QUANTS: frozenset[str] = frozenset(t.value for t in FileType)

_QUANT_ALIASES: dict[str, str] = {
    "Q2": "Q2_K",
    "Q3": "Q3_K_M",
    "Q4": "Q4_K_M",
    "Q5": "Q5_K_M",
    "Q6": "Q6_K",
    "Q8": "Q8_0",
    "Q3_K": "Q3_K_M",
    "Q4_K": "Q4_K_M",
    "Q5_K": "Q5_K_M",
    "Q6_K_M": "Q6_K",
    "Q6_K_L": "Q6_K",
    "Q6_K_S": "Q6_K",
    "Q8_K": "Q8_0",
    "Q8_K_M": "Q8_0",
    "Q2_K_M": "Q2_K",
    "Q2_K_L": "Q2_K",
    "IQ1": "IQ1_M",
    "IQ2": "IQ2_M",
    "IQ3": "IQ3_M",
    "IQ4": "IQ4_XS",
    "FP32": "F32",
    "FP16": "F16",
    "FP8": "FP8",
    "MXFP4": "MXFP4_MOE",
    "AWQ": "INT4",
    "GPTQ": "INT4",
    "W4A16": "INT4",
    "NF4": "INT4",
    "BNB": "INT4",
    "BITSANDBYTES": "INT4",
    "W8A8": "INT8",
}
_BITS: dict[int, str] = {2: "Q2_K", 3: "Q3_K_M", 4: "Q4_K_M", 5: "Q5_K_M", 6: "Q6_K", 8: "Q8_0", 16: "F16", 32: "F32"}

_GGUF_NAME = re.compile(r"(?<![a-z0-9])(i?q[1-8])(?:[_-]?(k))?(?:[_-]?(xxs|xs|xl|s|m|l|nl|0|1))?(?![a-z0-9])")
_QUANT_WORD = re.compile(
    r"(?<![a-z0-9])(fp32|f32|fp16|f16|bf16|fp8|nvfp4|int8|int4|awq|gptq|nf4|bnb|bitsandbytes|mxfp4|w4a16|w8a8)"
    r"(?![a-z0-9])"
)
_QUANT_BITS = re.compile(r"(?<![a-z0-9.])(\d{1,2})\s*-?\s*(?:bits?|비트|bpw)(?![a-z0-9])")
# Quantization-aware-trained weights ("gemma3:27b-it-qat", "gemma 3 27b qat"): Google's QAT release of Gemma 3, and
# Ollama's qat tags, are Q4_0 files (INT4 on vLLM, as for AWQ). A format named as well wins.
_QAT = re.compile(r"(?<![a-z0-9])qat(?![a-z0-9])")
_FULL_PRECISION = re.compile(
    r"full[\s-]?precision|unquantized|non[\s-]?quantized|no\s+quant(?:ization)?|양자화\s*(?:없이|안\s*한|안\s*하고)"
    r"|비양자화|원본\s*(?:모델|가중치|그대로)|풀\s*프리시전"
)


def canonical_quant(name: str, engine: Engine | None = None) -> str:
    """The calc's name for a weight format ("q4_k_m" → "Q4_K_M", "q4" → "Q4_K_M", "awq" → "INT4").

    Raises UnknownQuantError with up to 5 suggestions.
    """
    key = re.sub(r"[\s-]+", "_", name.strip().upper())
    if engine == Engine.VLLM and key in ("INT4", "INT8"):
        return key  # vLLM's AWQ/GPTQ and W8A8 checkpoints; GGUF names ("q4", "q8") stay GGUF
    key = {"INT4": "Q4_K_M", "INT8": "Q8_0"}.get(key, key)
    key = _QUANT_ALIASES.get(key, key)
    if key in UPLOADER_MIXES:  # "Q4_K_XL": sized as the standard type it starts from (quant_mix says so)
        return UPLOADER_MIXES[key].value
    if key in KNOWN_QUANTS:
        return key
    close = difflib.get_close_matches(key, sorted(KNOWN_QUANTS), n=5, cutoff=0.5)
    raise UnknownQuantError(f"unknown quantization: {name}", suggestions=close, quant=name)


_MIX_NAME = re.compile(r"(?<![a-z0-9])((?:ud[-_])?i?q[1-8](?:[_-]?k)?(?:[_-]?(?:xxs|xs|xl|s|m|l|nl|0|1))?)(?![a-z0-9])")


def quant_mix(text: str) -> str:
    """An uploader's mix the question names ("ud-q4_k_xl" → "UD-Q4_K_XL", "q6_k_l"), as its uploader writes it;
    "" for a standard quant. Read before :func:`extract_quant`, which takes the standard type it is sized as."""
    for m in _MIX_NAME.finditer(text):
        if (found := uploader_mix(m[1])) is not None:
            return found[1]
    return ""


# The kind of 4-bit checkpoint a vLLM question names (calc.presets.VLLM_CHECKPOINT_KINDS): the quant is INT4 either
# way, but `vllm serve` loads a repo of that kind.
_CHECKPOINT_KIND = re.compile(r"(?<![a-z0-9])(awq|gptq|w4a16|nf4|bnb|bitsandbytes)(?![a-z0-9])")
_KIND_OF_WORD = {"awq": "awq", "gptq": "gptq", "w4a16": "gptq", "nf4": "bnb-4bit", "bnb": "bnb-4bit",
                 "bitsandbytes": "bnb-4bit"}  # fmt: skip


def checkpoint_kind(text: str) -> str:
    """The kind of quantized checkpoint the question names ("awq", "gptq", "nf4" → "bnb-4bit"), or "". Read before
    :func:`extract_quant`, which takes the word as the INT4 it is sized as."""
    found = _CHECKPOINT_KIND.search(text)
    return _KIND_OF_WORD[found[1]] if found else ""


_IMATRIX_PREFIX = re.compile(r"(?<![a-z0-9])(?:i1|ud)[-_](?=i?q\d)")  # "i1-q4_k_m", "ud-q4_k_xl": the quant follows


def extract_quant(s: Scratch, engine: Engine | None) -> str | None:
    s.text = _IMATRIX_PREFIX.sub(lambda m: " " * len(m[0]), s.text)  # same length: spans stay where they were
    found: list[tuple[int, str]] = []
    for m in _GGUF_NAME.finditer(s.text):
        base, k, suffix = m.group(1), m.group(2), m.group(3)
        if not k and not suffix and base[-1] not in "234568":
            continue  # "q1", "q7": not a quant anyone means
        name = base.upper() + ("_K" if k else "") + (f"_{suffix.upper()}" if suffix else "")
        found.append((m.start(), canonical_quant(name)))
        s.take(m)
    for m in _QUANT_WORD.finditer(s.text):
        found.append((m.start(), canonical_quant(m.group(1), engine)))
        s.take(m)
    for m in _QUANT_BITS.finditer(s.text):
        bits = int(m.group(1))
        if bits in _BITS:
            name = _BITS[bits]
            if engine == Engine.VLLM and bits in (4, 8):
                name = "INT4" if bits == 4 else "INT8"
            found.append((m.start(), name))
            s.take(m)
    for m in _FULL_PRECISION.finditer(s.text):
        found.append((m.start(), "F16"))
        s.take(m)
    qat = False
    for m in _QAT.finditer(s.text):
        qat = True
        s.take(m)
    if not found:
        return ("INT4" if engine == Engine.VLLM else "Q4_0") if qat else None
    return min(found)[1]


# --- system RAM speed ------------------------------------------------------------------------------------------

# "ddr4", "ddr5-6000", "ddr5 6400mt/s", "ddr4 3200mhz" (MHz as kits are sold: the transfer rate).
# A rate has four or more digits, all of them read ("ddr5-999999999999999" is a rate out of range, not DDR5 and a number
# left for the context to take).
_RAM_KIND = re.compile(r"(?<![a-z0-9])ddr\s?([45])(?:[\s-]?(\d{4,})(?:\s?(?:mt/s|mts|mhz))?)?(?![a-z0-9])")
# "dual channel" (read by clean() as "2x channel"), "4-channel", "8 channels", "듀얼채널", "4채널".
_CHANNELS = re.compile(
    r"(?<![a-z0-9])(\d+)\s?x?\s?-?\s?(?:channels?|ch)(?![a-z])|(싱글|듀얼|트리플|쿼드|옥타|(?<!\d)\d+)\s?채널"
)
_KO_CHANNELS = {"싱글": 1, "듀얼": 2, "트리플": 3, "쿼드": 4, "옥타": 8}


# GPU memory other programs already hold, as a question says it: "1.5gb already used", "2gb used by the desktop",
# "800mb in use", "already using 2gb"; "1.5기가 이미 쓰고 있어", "이미 2기가 사용 중", "1.5기가 점유". Korean needs
# "이미" (already) or a word of occupying: "8기가 쓰고 있어" alone is how people name their 8 GB card. clean() has
# read "기가" as "gb" already.
_SIZE = r"(\d+(?:\.\d+)?)\s?(gb|gib|g|mb|mib)(?![a-z0-9])"
_KO_PARTICLE = r"(?:는|은|가|이|를|을|정도는?|쯤은?)?"
_KO_OCCUPY = r"(?:사용|쓰|먹|잡혀|점유|차지)"  # used, using, eaten, held, occupied, taken
_RESERVED = (
    re.compile(
        r"(?<![a-z0-9.])" + _SIZE + r"(?:\s+(?:is|are))?(?:\s+already)?\s+(?:used|in use|taken|occupied)(?![a-z])"
        r"(?:\s+(?:by|for)\s+(?:the\s+|my\s+|other\s+)?(?:desktop|display|monitor|screen|windows|os|browser|system|"
        r"apps?|programs?)(?![a-z]))?"
    ),
    re.compile(r"(?<![a-z])already\s+(?:using|uses|use)\s+" + _SIZE),
    re.compile(
        r"(?<![a-z0-9.])" + _SIZE + _KO_PARTICLE + r"\s*(?:(?:이미|벌써)\s*" + _KO_OCCUPY + r"|점유|잡혀\s?있|차지)"
    ),
    re.compile(r"(?:이미|벌써)\s*" + _SIZE + _KO_PARTICLE + r"\s*" + _KO_OCCUPY),
    # programs said to eat it: "discord and chrome eat about 1.5 gigs of vram", "chrome uses 2gb vram"; the word
    # "vram" after the size says it is the card's memory, not the system's
    re.compile(
        r"(?<![a-z])(?:discord|chrome|firefox|edge|browsers?|desktop|windows|os|apps?|programs?|games?|obs|steam|"
        r"spotify|wallpaper\s+engine|background\s+(?:apps?|stuff|programs?)|other\s+(?:stuff|apps?|programs?))"
        r"(?:\s*(?:,|and|&|\+)\s*[a-z]+){0,3}\s+(?:already\s+|also\s+|all\s+)?"
        r"(?:eats?|eating|takes?|taking|uses?|using|hogs?|hogging|occup(?:y|ies|ying)|grabs?)\s+(?:up\s+)?"
        r"(?:about|around|roughly|almost|nearly|like|~)?\s*" + _SIZE + r"\s+(?:of\s+)?(?:my\s+|the\s+)?vram(?![a-z])"
    ),
    # "크롬이 vram 1.5기가 먹어요", "vram 2기가를 디스코드가 잡아먹어": VRAM before the size, then a word of eating
    re.compile(r"(?<![a-z])vram\s*(?:을|를)?\s*" + _SIZE + _KO_PARTICLE + r"\s*(?:정도\s*)?(?:[가-힣]+\s*)?"
               r"(?:먹|잡아\s?먹|쓰|사용|차지|점유)"),
)
MAX_RESERVED_GB = 1024
# A display on the card, said without how much it uses ("my monitor is connected to it", "모니터 연결돼 있어"): no
# published measurement gives a figure for the desktop's share (it depends on the screens, the OS and what is open),
# so the answer asks for it rather than guessing.
_DISPLAY = re.compile(
    r"(?<![a-z])(?:monitors?|displays?|desktop|screens?)\s+(?:is\s+|are\s+)?(?:connected|plugged|attached|hooked)"
    r"|(?<![a-z])(?:drives|driving|runs|running|also\s+runs)\s+(?:my\s+|the\s+)?(?:monitors?|displays?|desktop)"
    r"|(?<![a-z])(?:my|the)\s+(?:monitors?|displays?|desktop)\s+(?:is\s+|are\s+)?(?:on|runs\s+on)\s+(?:it|this|the)"
    r"|모니터\s*(?:가|를|도|랑)?\s*(?:연결|꽂|물려|달려|붙어)|화면\s*출력|디스플레이\s*(?:가|를|도)?\s*(?:연결|꽂)"
)


def mentions_display(text: str) -> bool:
    """The question says a display runs on the GPU, whatever it says of its memory."""
    return _DISPLAY.search(text) is not None


def extract_reserved(s: Scratch) -> float | None:
    """GPU memory other programs already hold, in GiB (MiB read as 1/1024), or None; its words are taken so no GPU
    or RAM reader sees the size. Raises BadNumberError for a size past what any GPU has."""
    for pattern in _RESERVED:
        m = pattern.search(s.text)
        if m is None:
            continue
        size = float(m.group(1)) / (1024 if m.group(2).startswith("m") else 1)
        if not 0 < size <= MAX_RESERVED_GB:
            raise BadNumberError(
                f"memory in use must be more than 0 and at most {MAX_RESERVED_GB} GB, not {m.group(1)}",
                field="reserved", value=m.group(1)[:40], low=0, high=MAX_RESERVED_GB,
            )  # fmt: skip
        s.take(m)
        return size
    return None


# --- images ----------------------------------------------------------------------------------------------------

_IMAGE_NOUN = r"(?:images?|pictures?|photos?|screenshots?)"
_IMAGES = re.compile(
    r"(?<![a-z0-9-])(?:with\s+(?:an?\s+|some\s+|my\s+)?" + _IMAGE_NOUN
    + r"|(?:send|sending|read|reading|analy[sz]e|analy[sz]ing|describe|describing)\s+(?:an?\s+|some\s+)?" + _IMAGE_NOUN
    + r"|" + _IMAGE_NOUN + r"\s+(?:input|inputs|too|as\s+well)"
    + r"|vision|multimodal|(?:--)?mmproj)(?![a-z0-9])"
    + r"|이미지|사진|스크린샷|비전|멀티모달"
)  # fmt: skip


def extract_images(s: Scratch) -> bool:
    """Whether images will be sent ("with images", "vision", "--mmproj", "이미지도 넣을 거야", "사진 분석"): llama.cpp
    then loads the vision projector, and the answer counts it. Its words are taken."""
    found = list(_IMAGES.finditer(s.text))
    for m in found:
        s.take(m)
    return bool(found)


# --- the model's own MTP head ----------------------------------------------------------------------------------

_MTP = re.compile(
    r"(?<![a-z0-9-])(?:(?:with|using|use)\s+)?(?:--)?(?:mtp|draft-mtp|multi[\s-]?token[\s-]?prediction)(?![a-z])"
)


def extract_mtp(s: Scratch) -> bool:
    """Whether the model drafts with its own MTP head ("with mtp", "--mtp", "multi-token prediction"); taken."""
    found = list(_MTP.finditer(s.text))
    for m in found:
        s.take(m)
    return bool(found)


# --- draft model -----------------------------------------------------------------------------------------------

# A model as a draft's words name it: a name, a version ("llama 3.2"), a size ending in b, a quant ("qwen3 0.6b q8_0").
_DRAFT_MODEL = (
    r"(?P<m>[^\s,;?!]{1,40}(?:\s+[0-9][0-9.]{0,8}(?![0-9.]*[a-z]))?(?:\s+[0-9][^\s,;?!]{0,10}b)?"
    r"(?:\s+(?:i?q[0-9][^\s,;?!]{0,8}|b?f16|mxfp4))?)"
)
_DRAFT = (
    re.compile(r"(?<![a-z])(?:with|using|use|and|plus)\s+" + _DRAFT_MODEL
               + r"\s+as\s+(?:an?\s+|the\s+|its\s+)?draft(?:\s+model)?(?![a-z])"),
    re.compile(r"(?<![a-z-])(?:draft(?:\s+model)?|speculative(?:\s+decoding)?\s+(?:with|using))\s*(?:[:=]\s*)?"
               + _DRAFT_MODEL),
    re.compile(_DRAFT_MODEL + r"\s*(?:을|를)?\s*드래프트(?:\s*모델)?\s*(?:로|으로)"),
    re.compile(r"드래프트(?:\s*모델)?\s*(?:로|으로|는|은)?\s*" + _DRAFT_MODEL),
)  # fmt: skip
_DRAFT_WORD = re.compile(r"draft|speculative|드래프트")
_KO_TAIL = re.compile(r"(?:을|를|은|는|이|가|로|으로|도)$")


def extract_draft(s: Scratch) -> str | None:
    """The words naming a draft model for speculative decoding ("with qwen3 0.6b as draft", "draft qwen3 0.6b q8_0",
    "qwen3 0.6b를 드래프트로"), taken from the text so the main model is read without them; None when none is named."""
    if not _DRAFT_WORD.search(s.text):  # the patterns start anywhere: only read a text that names a draft at all
        return None
    for pattern in _DRAFT:
        m = pattern.search(s.text)
        if m is None:
            continue
        phrase = _KO_TAIL.sub("", m.group("m").strip())
        s.take(m)
        return phrase[:80]
    return None


def reserved_bytes(text: str) -> int:
    """A size of GPU memory already in use as a flag or a setting writes it: ``1.5GB``, ``800MB``, ``1.5`` (GiB, and
    MiB, as nvidia-smi and Task Manager count them). Raises BadNumberError for anything else or past any GPU."""
    found = _RESERVED_SIZE.match(text)
    if found is None:
        raise BadNumberError(f"reserved: not a memory size: {text}", field="reserved", value=text[:40])
    gb = float(found[1]) / (1024 if (found[2] or "g").lower().startswith("m") else 1)
    if not 0 < gb <= MAX_RESERVED_GB:
        raise BadNumberError(
            f"reserved must be more than 0 and at most {MAX_RESERVED_GB} GB: {text}",
            field="reserved", value=text[:40], low=0, high=MAX_RESERVED_GB,
        )  # fmt: skip
    return int(gb * GIB)


_RESERVED_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(gb|gib|g|mb|mib|m)?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class RamSpeedSlot:
    """What the question says of its system RAM's speed: the speed to compute with, and whether its kind and rate
    were named (a channel count alone takes DDR5-5600, and the answer says so)."""

    speed: RamSpeed
    kind_named: bool


def extract_ram_speed(s: Scratch) -> RamSpeedSlot | None:
    """The RAM kind, rate and channels named ("64gb ddr4-3200 dual channel", "ddr5 6000mhz", "램 ddr4 4채널"). The
    kind's words become "ram" so "ddr5 128gb" still reads as system RAM. Raises BadNumberError for a rate or a
    channel count no memory runs at."""
    kind_match = _RAM_KIND.search(s.text)
    channel_match = _CHANNELS.search(s.text)
    if kind_match is None and channel_match is None:
        return None
    channels = DESKTOP_CHANNELS
    if channel_match is not None:
        word = channel_match.group(1) or channel_match.group(2)
        channels = _KO_CHANNELS[word] if word in _KO_CHANNELS else int(word[:6]) if len(word) <= 6 else 10**6
        if not 1 <= channels <= MAX_CHANNELS:
            raise BadNumberError(
                f"memory channels must be between 1 and {MAX_CHANNELS}, not {word}", field="ram_channels",
                value=word[:40], low=1, high=MAX_CHANNELS,
            )  # fmt: skip
        s.take(channel_match)
    if kind_match is None:
        return RamSpeedSlot(typical("ddr5", channels), kind_named=False)
    kind: RamKind = "ddr4" if kind_match.group(1) == "4" else "ddr5"
    mts = TYPICAL_MTS[kind]
    if kind_match.group(2):
        mts = int(kind_match.group(2)[:7]) if len(kind_match.group(2)) <= 7 else 10**7
        low, high = MTS_RANGE[kind]
        if not low <= mts <= high:
            raise BadNumberError(
                f"{kind.upper()} runs at {low}-{high} MT/s, not {kind_match.group(2)}", field="ram_speed",
                value=kind_match.group(2)[:40], low=low, high=high,
            )  # fmt: skip
    start, end = kind_match.span()
    s.text = s.text[:start] + "ram" + USED * (end - start - 3) + s.text[end:]
    return RamSpeedSlot(RamSpeed(kind=kind, mts=mts, channels=channels), kind_named=True)


# --- users -----------------------------------------------------------------------------------------------------

_NUM = r"(\d+(?:\.\d+)?)\s?(k?)"
# After a number: English nouns ("8 users") or Korean counters ("8명"); Korean puts the noun first ("사용자 8명").
_PEOPLE = (
    r"(?:users?|people|persons?|clients?|requests?|sessions?|seqs?|sequences?|slots?|connections?|streams?"
    r"|명|사람|인(?![\uac00-\ud7a3]))"
)
_USERS_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(rf"(?<![a-z0-9.]){_NUM}\s*(?:concurrent|parallel|simultaneous|동시|active)?\s*{_PEOPLE}(?![a-z])"),
    re.compile(
        r"(?:동시|concurrent|parallel|simultaneous)\s*(?:사용자|접속자?|유저|users?|requests?|connections?|sessions?)?"
        rf"\s*(?:수)?\s*(?:[:=]|of)?\s*{_NUM}\s*(?:명|users?)?(?![a-z0-9])"
    ),
    re.compile(rf"(?:users?|사용자|유저|접속자|인원)\s*(?:수|count|number)?\s*(?:[:=]|of)?\s*{_NUM}(?![a-z0-9])"),
    re.compile(rf"(?:--parallel|-np|--max-num-seqs|max_num_seqs|n_parallel)(?:\s*=\s*|\s+){_NUM}(?![a-z0-9])"),
    re.compile(rf"batch(?:\s*size)?\s*(?:of|[:=])?\s*{_NUM}(?![a-z0-9])"),
)


_USER_FLAGS = _USERS_PATTERNS[3]


def extract_user_flags(s: Scratch) -> int | None:
    """Slots given as an engine's flag ("-np 4", "--parallel=2", "--max-num-seqs 4"), taken before the GPUs are read,
    so that their number is never read as a count of the GPU named after it ("-np=2 4090" is not two 4090s)."""
    m = _USER_FLAGS.search(s.text)
    if m is None:
        return None
    s.take(m)
    users = count_from_suffix(m.group(1), m.group(2))
    if not 1 <= users <= MAX_USERS:
        raise BadNumberError(f"users must be between 1 and {MAX_USERS}, not {users}", number=users, limit=MAX_USERS)
    return users


def extract_users(s: Scratch) -> int | None:
    found: list[tuple[int, int]] = []
    for i, rx in enumerate(_USERS_PATTERNS):
        for m in rx.finditer(s.text):
            value = count_from_suffix(m.group(1), m.group(2))
            if i == len(_USERS_PATTERNS) - 1 and value > 256:
                continue  # "batch 2048" is llama.cpp's -b, not people
            found.append((m.start(), value))
            s.take(m)
    if not found:
        return None
    users = min(found)[1]
    if not 1 <= users <= MAX_USERS:
        raise BadNumberError(f"users must be between 1 and {MAX_USERS}, not {users}", number=users, limit=MAX_USERS)
    return users


# --- context ---------------------------------------------------------------------------------------------------

_CTX_WORD = (
    r"(?:tokens?|toks?|토큰|ctx|context|컨텍스트|콘텍스트|문맥|n_ctx|ctx[-_]?size|max[-_]model[-_]len"
    r"|context[\s_-]?(?:length|window|size|len))"
)
_CONTEXT_SUFFIXED = re.compile(r"(?<![a-z0-9._])(\d+(?:\.\d+)?)(?:\s?(k)|(m))(?![a-z0-9])")
_PER_SECOND = r"(?!\s*(?:/|per\b|a\s+sec|each\s+sec|in\s+\d+\s*s))"  # "30 tokens/s" is a speed
_CONTEXT_BEFORE_WORD = re.compile(
    rf"(?<!초당)(?<!초당 )(?<![a-z0-9._])(\d+(?:\.\d+)?)()\s*{_CTX_WORD}(?![a-z0-9]){_PER_SECOND}"
)
_CONTEXT_AFTER_WORD = re.compile(
    rf"(?:{_CTX_WORD}|(?<![a-z0-9])-c)\s*(?:길이|length|window|size|of|is|=|:|는|은|를|을|가|이|를|로)?\s*"
    r"(\d+(?:\.\d+)?)\s?([km]?)(?![a-z0-9])"
)
_BARE_NUMBER = re.compile(r"(?<![a-z0-9._$])(\d{3,8})(?![a-z0-9._%])")
_NOT_CONTEXT_AFTER = re.compile(r"\s*(?:원|won|\$|달러|불|명|장|개|대|w\b|watts?|와트|년|mhz|시간|hours?|초|분)")


def _check_context(value: int) -> int:
    if not 1 <= value <= MAX_CONTEXT:
        raise BadNumberError(
            f"context must be between 1 and {MAX_CONTEXT} tokens, not {value}", number=value, limit=MAX_CONTEXT
        )
    return value


# llama-server's own flags pasted ("-c 16384 -np 4", "--ctx-size 32768 --parallel 2"): -c is the whole cache, which
# the slots share (llama.cpp: n_ctx_seq = n_ctx / n_seq, or one unified cache of n_ctx cells), not each slot's.
_LLAMA_CTX_FLAG = re.compile(r"(?<![a-z0-9-])(?:-c|--ctx-size)(?:\s*=\s*|\s+)\d")


def names_cache_flag(text: str) -> bool:
    """Whether ``text`` gives llama-server's ``-c`` as a flag: with the slots given as a flag too
    (:func:`extract_user_flags`), the context it names is the cache they share."""
    return _LLAMA_CTX_FLAG.search(text) is not None


def extract_context(s: Scratch) -> int | None:
    found: list[tuple[int, int]] = []
    for rx in (_CONTEXT_AFTER_WORD, _CONTEXT_BEFORE_WORD, _CONTEXT_SUFFIXED):
        for m in rx.finditer(s.text):
            number = m.group(1)
            suffix = (m.group(2) or "") + (m.group(3) or "") if rx is _CONTEXT_SUFFIXED else m.group(2)
            found.append((m.start(), tokens_from_suffix(number, suffix)))
            s.take(m)
    if found:
        return _check_context(min(found)[1])
    # A bare number that looks like a context size: a power of two from 256, or whole thousands.
    for m in _BARE_NUMBER.finditer(s.text):
        value = int(m.group(1))
        looks_like_context = (value >= 256 and value & (value - 1) == 0) or (value >= 1000 and value % 1000 == 0)
        if looks_like_context and not _NOT_CONTEXT_AFTER.match(s.text, m.end()):
            s.take(m)
            return _check_context(value)
    return None


# --- intent ----------------------------------------------------------------------------------------------------

_MAX_USERS = re.compile(
    r"how\s+many\s+(?:concurrent\s+|parallel\s+|simultaneous\s+)?(?:users|people|requests|sessions|clients"
    r"|connections|slots)|max(?:imum)?\s+(?:number\s+of\s+)?(?:concurrent\s+|parallel\s+)?(?:users|requests|sessions"
    r"|clients)|몇\s*명|최대\s*(?:동시\s*)?(?:사용자|유저|접속|인원)|동시\s*(?:사용자|접속자?|유저|접속)\s*(?:수\s*)?"
    r"(?:는\s*)?(?:몇|최대|얼마)"
)
_MAX_CONTEXT = re.compile(
    r"how\s+(?:much|long|big|large)(?:\s+(?:of\s+)?(?:a|the))?\s+(?:context|ctx)"
    r"|how\s+many\s+tokens(?!\s*(?:/|per\b|a\s+sec|each\s+sec|every\s+sec|(?:do|does|will|would|can)\s+(?:i|it|you)\s+get\s+(?:per|a)\s+sec))"
    r"|max(?:imum)?\s+(?:context|ctx)|(?:longest|largest|biggest)\s+(?:context|ctx)"
    r"|(?:컨텍스트|콘텍스트|문맥|토큰)\s*(?:길이\s*)?(?:는\s*)?(?:최대|얼마|몇)|최대\s*(?:컨텍스트|콘텍스트|문맥|토큰|몇\s*k)"
    r"|몇\s*k\s*까지|(?<!초당\s)(?<!초당)몇\s*토큰(?!\s*(?:정도\s*)?(?:이나\s*)?(?:나와|나옴|나오|나와요|뽑|찍|나올))"
)
# A speed question: "how fast", "tok/s?", "tokens per second", "속도 얼마나 나와?", "몇 토큰 나와?", "얼마나 빨라?". The
# answer is the same card, with its speed first.
_SPEED = re.compile(
    r"how\s+fast|\bspeed\b|tok(?:en)?s?\s*/\s*s(?:ec)?\b|\bt/s\b|tokens?\s+(?:per|a|each)\s+sec(?:ond)?|\btps\b"
    r"|how\s+many\s+tokens\b.{0,30}?\b(?:per|a|each)\s+sec(?:ond)?\b"
    r"|속도|몇\s*토큰\s*(?:정도\s*)?(?:이나\s*)?(?:나와|나옴|나오|뽑|찍|나올)|초당\s*(?:몇\s*)?토큰|얼마나\s*빨라|얼마나\s*빠르"
)
_BEST_QUANT = re.compile(
    r"(?:which|what|best|highest|optimal|recommended|largest|biggest)\s+(?:quants?|quantization|quantisation"
    r"|precision|bits?)\b|어떤\s*양자화|양자화\s*(?:는\s*)?(?:뭐|어떤|추천|몇|어느)|몇\s*비트|최적\s*양자화|어느\s*양자화"
    r"|무슨\s*양자화"
)
_WHAT_FITS = re.compile(
    r"what\s+(?:(?:models?|llms?|llama|qwen|gemma|mistral|mixtral|phi|deepseek|exaone|solar|gpt-oss|size|quant)"
    r"(?:\s+[0-9.]+)?\s+)?(?:can|could|should|will|would)\s+(?:i|we|it|this|my|fit|run)\b"
    r"|what\s+(?:fits|runs|will\s+fit|will\s+run|can\s+fit|can\s+run)|which\s+(?:models?|llms?)"
    r"|what\s+(?:llama|qwen|gemma|mistral|mixtral|phi|deepseek|exaone|solar|gpt-oss)(?:\s*[0-9.]+)?(?:\s+models?)?"
    r"\s+(?:fits?|runs?|will\s+(?:fit|run))\b|(?:맞는|들어가는)\s*(?:모델|거|것|llm)"
    r"|what\s+(?:models?|llms?)|(?:best|biggest|largest)\s+(?:\w+\s+)?(?:model|llm)s?\b"
    r"|models?\s+(?:that\s+)?(?:fit|run|i\s+can)|뭐\s*(?:를\s*)?(?:돌릴|돌아|굴릴|쓸|돌려)|뭘\s*(?:돌릴|돌려|쓸|굴릴)"
    r"|어떤\s*(?:모델|llm|거)|무슨\s*(?:모델|llm)|(?:제일|가장)\s*큰\s*(?:모델|llm|거)"
    r"|(?:돌릴|돌아갈|굴릴|쓸)\s*수\s*있는\s*(?:\S+\s*)?(?:모델|거|것|llm)|모델\s*(?:추천|뭐)|추천\s*(?:모델|해)"
)
# How many GPUs the model needs: "how many 3090s do i need", "needs how many 4090s", "how many gpus", "minimum number
# of gpus", "3090 몇 장 필요해", "4090 몇 개면", "그래픽카드 몇 장", "h100 몇 대". A count of something else ("how many
# users", "몇 명", "모델 몇 개") is not one.
_GPU_WORD = (
    r"(?:(?:rtx|gtx|rx|nvidia|amd|radeon|geforce|tesla)\s*)?(?:[a-z]{0,2}\d{2,4}(?:\s?(?:ti|super|xtx|xt|pro))?s?"
    r"(?:\s+\d+gb)?|gpus?|cards?|graphics\s+cards?|devices)"
)
_MIN_GPUS = re.compile(
    rf"how\s+many\s+{_GPU_WORD}(?![a-z0-9])(?!\s*(?:users?|people|requests?|sessions?|tokens?|k\b))"
    r"|(?:min(?:imum)?|fewest|smallest)\s+(?:number\s+of\s+|amount\s+of\s+)?(?:gpus|cards|graphics\s+cards)\b"
    r"|(?:gpus?|그래픽\s*카드|글카|카드|(?<!\d)\d+gb|(?<![a-z0-9])[a-z]{0,2}\d{2,4}(?:\s?(?:ti|티|super|슈퍼|xtx|xt))?)"
    r"\s*(?:이|가|을|를|는|은)?\s*"
    r"(?:최소\s*)?몇\s*(?:개|장|대)|몇\s*장"
)
_COMPARE = re.compile(r"\bvs\b|versus|compare|비교|\bor\b|아니면|랑|하고|and")


def asks_speed(text: str) -> bool:
    """Whether the question asks how fast the model runs (its card then leads with the speed)."""
    return _SPEED.search(text) is not None


def detect_intent(text: str, n_models: int) -> str:
    if n_models >= 2:
        return "compare"
    if _MIN_GPUS.search(text):
        return "min_gpus"
    if _MAX_USERS.search(text):
        return "max_users"
    if _MAX_CONTEXT.search(text):
        return "max_context"
    if _BEST_QUANT.search(text):
        return "best_quant"
    if n_models == 0 and _WHAT_FITS.search(text):
        return "what_fits"
    return "fit"


_ALTERNATIVES = re.compile(r"\bvs\b|versus|\bor\b|\beither\b|compare|아니면|또는|비교|중에|중\s*어느|뭐가\s*나")


def mentions_alternatives(text: str) -> bool:
    """Whether several GPUs are alternatives to compare ("3060 or 4060") rather than one machine ("4090 + 3090")."""
    return _ALTERNATIVES.search(text) is not None


def mentions_compare(text: str) -> bool:
    return _COMPARE.search(text) is not None
