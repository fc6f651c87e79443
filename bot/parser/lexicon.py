"""Word lists the parser matches against: Hangul spellings, particles, filler and brand words.

Everything here is data. Hangul words are translated to the English token the preset catalog uses
("라마" → "llama", "맥스" → "max"), so a Korean alias in ``presets/models.toml`` and an English question meet on
the same key; see :mod:`bot.parser.index`.
"""

from __future__ import annotations

import re
import unicodedata

# Hangul spellings of model-name words → the English token they stand for (a value may be two words).
# Common misspellings are spelled out (잼마, 리마, 딥싴): match.py's fuzzy reading skips two-syllable words, which
# collide too easily with ordinary ones.
KO_MODEL_WORDS: dict[str, str] = {
    "라마": "llama",
    "야마": "llama",
    "리마": "llama",
    "젬마": "gemma",
    "잼마": "gemma",
    "겜마": "gemma",
    "제마": "gemma",
    "큐웬": "qwen",
    "퀜": "qwen",
    "큐원": "qwen",
    "큐엔": "qwen",
    "쿠엔": "qwen",
    "쿠웬": "qwen",
    "큐언": "qwen",
    "첸": "qwen",
    "미스트랄": "mistral",
    "미스트럴": "mistral",
    "미스트랄ai": "mistral",
    "믹스트랄": "mixtral",
    "믹스트럴": "mixtral",
    "딥시크": "deepseek",
    "딥씨크": "deepseek",
    "딥식": "deepseek",
    "딥싴": "deepseek",
    "파이": "phi",
    "엑사원": "exaone",
    "솔라": "solar",
    "커맨드": "command",
    "코맨드": "command",
    "커맨드알": "command r",
    "디스틸": "distill",
    "디스틸드": "distill",
    "증류": "distill",
    "스몰": "small",
    "타이니": "tiny",
    "마이크로": "micro",
    "나노": "nano",
    "네모": "nemo",
    "코더": "coder",
    "미니": "mini",
    "미디엄": "medium",
    "라지": "large",
    "플러스": "plus",
    "인스트럭트": "instruct",
    "하이퍼클로바": "hyperclova",
    "하이퍼클로바x": "hyperclova x",
    "카나나": "kanana",
    "지피티": "gpt",
    "오픈ai": "openai",
    "그록": "grok",
    "키미": "kimi",
    "그래니트": "granite",
    "올모": "olmo",
    "스카우트": "scout",
    "매버릭": "maverick",
    "비전": "vision",
    "터보": "turbo",
    "제미나이": "gemini",
    "제미니": "gemini",
    "클로드": "claude",
    "챗gpt": "chatgpt",
    "챗지피티": "chatgpt",
    "팔콘": "falcon",
    "그라나이트": "granite",
}

# Hangul spellings of GPU-name words.
KO_GPU_WORDS: dict[str, str] = {
    "슈퍼": "super",
    "수퍼": "super",
    "티": "ti",
    "티아이": "ti",
    "맥스": "max",
    "멕스": "max",
    "프로": "pro",
    "울트라": "ultra",
    "에어": "air",
    "애플": "apple",
    "인텔": "intel",
    "아크": "arc",
    "라데온": "radeon",
    "노트북": "laptop",
    "랩탑": "laptop",
    "랩톱": "laptop",
    "모바일": "mobile",
    "지포스": "geforce",
    "알티엑스": "rtx",
    "지티엑스": "gtx",
    "엑스티엑스": "xtx",
    "엑스티": "xt",
    "엔비디아": "nvidia",
    "엔비댜": "nvidia",
    "타이탄": "titan",
    "그래픽카드": "card",
    "그래픽": "card",
    "글카": "card",
    "그카": "card",
    "카드": "card",
    "램": "ram",
    "비램": "vram",
    "브이램": "vram",
    "메모리": "memory",
}

KO_WORDS: dict[str, str] = {**KO_MODEL_WORDS, **KO_GPU_WORDS}

# Particles and endings that follow a noun or number in Korean ("라마를", "32k로", "3060에서"), longest first.
PARTICLES: tuple[str, ...] = tuple(
    sorted(
        {
            "으로는",
            "에서는",
            "이라도",
            "으로도",
            "에서도",
            "까지는",
            "이라면",
            "이랑은",
            "한테서",
            "으로",
            "에서",
            "이랑",
            "하고",
            "한테",
            "까지",
            "부터",
            "이면",
            "이나",
            "처럼",
            "보다",
            "로는",
            "라도",
            "에는",
            "이라",
            "라면",
            "이서",
            "짜리",
            "정도",
            "이요",
            "인데",
            "인가",
            "이야",
            "이고",
            "이지",
            "랑",
            "로",
            "이",
            "가",
            "은",
            "는",
            "을",
            "를",
            "에",
            "의",
            "와",
            "과",
            "도",
            "면",
            "나",
            "만",
            "씩",
            "요",
            "께",
            "서",
            "고",
            "야",
            "지",
            "라",
        },
        key=len,
        reverse=True,
    )
)

# Words that make the bare number before them a count of people, never the end of a name: "kimi k2 5 users" is Kimi
# K2 for 5 users, though its tokens join into the key of "kimi k2.5" (the version's dot is dropped, k2.5 -> k25).
COUNT_NOUNS: frozenset[str] = frozenset(
    {"users", "user", "people", "persons", "person", "clients", "client", "requests", "request", "sessions",
     "session", "seqs", "seq", "sequences", "sequence", "slots", "slot", "connections", "connection", "streams",
     "stream", "concurrent", "parallel", "simultaneous", "명", "사람", "인", "동시"}
)  # fmt: skip

# Tokens dropped when building a model key: release suffixes and publishers ("gemma-2-9b-it", "meta-llama-3-8b").
MODEL_SKIP: frozenset[str] = frozenset(
    {
        "instruct",
        "it",
        "chat",
        "hf",
        "gguf",
        "meta",
        "openai",
        "microsoft",
        "google",
        "mistralai",
        "nvidia",  # also a GPU brand: "nvidia h100" names a card, not NVIDIA-Nemotron-3-Nano (its hf_repo)
        "upstage",
        "c4ai",
        "lgai",
        "unsloth",
        "bartowski",
        "thebloke",
        "lmstudio",
        "community",
        "mlx",
    }
)

# Tokens dropped when building a GPU key: brands and words around a card name ("GeForce RTX 3060 graphics card").
GPU_SKIP: frozenset[str] = frozenset(
    {
        "nvidia",
        "geforce",
        "rtx",
        "gtx",
        "amd",
        "radeon",
        "rx",
        "intel",
        "arc",
        "apple",
        "tesla",
        "instinct",
        "quadro",
        "gpu",
        "gpus",
        "card",
        "cards",
        "graphics",
        "air",
    }
)

# A brand word followed by an unknown model number is an unknown GPU ("rtx 4050", "gtx 970"), not filler.
GPU_BRANDS: frozenset[str] = frozenset(
    {"geforce", "rtx", "gtx", "radeon", "rx", "arc", "tesla", "quadro", "instinct", "titan"}
)

# Organisation prefixes of Hugging Face repositories ("meta-llama/Llama-3.1-8B-Instruct").
HF_ORGS: tuple[str, ...] = (
    "meta-llama",
    "qwen",
    "mistralai",
    "google",
    "microsoft",
    "deepseek-ai",
    "unsloth",
    "bartowski",
    "thebloke",
    "lmstudio-community",
    "lgai-exaone",
    "upstage",
    "cohereforai",
    "coherelabs",
    "nvidia",
    "openai",
    "moonshotai",
    "zai-org",
    "thudm",
    "allenai",
    "naver-hyperclovax",
    "kakaocorp",
    "ibm-granite",
    "mlx-community",
    "ggml-org",
    "huggingfaceh4",
    "nousresearch",
    "mradermacher",
)

# Words around a GPU name that may sit between the name and its memory size or count ("m3 max with 36gb").
GPU_GAP_WORDS: frozenset[str] = frozenset(
    {
        "with",
        "w",
        "and",
        "of",
        "the",
        "unified",
        "memory",
        "ram",
        "vram",
        "version",
        "edition",
        "model",
        "card",
        "gpu",
        "gpus",
        "통합",
        "메모리",
        "램",
        "버전",
        "모델",
        "짜리",
        "카드",
        "그래픽카드",
        "의",
        "에",
        "을",
        "를",
        "이",
        "가",
        "은",
        "는",
        "으로",
        "로",
    }
)

# A memory size followed by one of these is system RAM or storage, not a GPU ("32gb ram").
NOT_VRAM_AFTER: frozenset[str] = frozenset(
    {
        "ram",
        "램",
        "system",
        "시스템",
        "ddr4",
        "ddr5",
        "ddr",
        "ssd",
        "disk",
        "storage",
        "file",
        "files",
        "파일",
        "download",
        "다운로드",
        "용량",
        "디스크",
        "model",
        "모델",
        "weights",
        "가중치",
        "of ram",
        "swap",
        "스왑",
    }
)

# Words that count GPUs after a number ("2장", "2 cards", "2-way").
GPU_COUNTERS: frozenset[str] = frozenset(
    {"장", "개", "대", "way", "cards", "card", "gpus", "gpu", "카드", "ea", "pcs", "units", "x"}
)

# Native Korean numerals, the determiner form used before a counter ("두 장", "열 명") and the noun form ("둘").
NATIVE_NUMBERS: dict[str, int] = {
    "한": 1,
    "하나": 1,
    "두": 2,
    "둘": 2,
    "세": 3,
    "셋": 3,
    "석": 3,
    "네": 4,
    "넷": 4,
    "넉": 4,
    "다섯": 5,
    "여섯": 6,
    "일곱": 7,
    "여덟": 8,
    "아홉": 9,
    "열": 10,
    "열한": 11,
    "열하나": 11,
    "열두": 12,
    "열둘": 12,
    "열세": 13,
    "열셋": 13,
    "열네": 14,
    "열넷": 14,
    "열다섯": 15,
    "열여섯": 16,
    "열일곱": 17,
    "열여덟": 18,
    "열아홉": 19,
    "스무": 20,
    "스물": 20,
}

ENGLISH_NUMBERS: dict[str, int] = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "sixteen": 16,
    "twenty": 20,
    "thirty-two": 32,
    "sixty-four": 64,
}

# "dual 4090" = 2 × 4090.
MULTIPLIER_WORDS: dict[str, int] = {"single": 1, "dual": 2, "twin": 2, "double": 2, "triple": 3, "quad": 4}

# Model families people ask about that the catalog may not carry: named alone, they are an unknown model (with
# suggestions), not "no model named".
OTHER_MODEL_FAMILIES: frozenset[str] = frozenset(
    {
        "hyperclova",
        "kanana",
        "grok",
        "kimi",
        "granite",
        "olmo",
        "starcoder",
        "starcoder2",
        "internlm",
        "vicuna",
        "wizardlm",
        "zephyr",
        "hermes",
        "codellama",
        "openchat",
        "chatglm",
        "glm",
        "baichuan",
        "minicpm",
        "smollm",
        "tinyllama",
        "stablelm",
        "nemotron",
        "jamba",
        "qwq",
        "llava",
        "pixtral",
        "codestral",
        "devstral",
        "magistral",
        "ministral",
        "gemini",
        "claude",
        "chatgpt",
        "gpt4",
        "gpt4o",
        "falcon",
        "yi",
        "aya",
    }
)

POPULAR_MODELS: tuple[str, ...] = ("llama-3.1-8b", "qwen2.5-7b", "gemma-3-12b", "mistral-nemo-12b", "qwen3-32b")

HANGUL_RE = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")


def has_hangul(text: str) -> bool:
    return HANGUL_RE.search(text) is not None


def decompose(text: str) -> str:
    """NFD: Hangul syllables split into jamo, so spelling variants (딥씨크/딥시크) score close in rapidfuzz."""
    return unicodedata.normalize("NFD", text)


def strip_particle(word: str, known: dict[str, str] | frozenset[str] | set[str]) -> str | None:
    """``word`` without a trailing particle when the rest is a known word ("라마를" → "라마"), else None."""
    for particle in PARTICLES:
        if len(word) > len(particle) and word.endswith(particle):
            stem = word[: -len(particle)]
            if stem in known:
                return stem
    return None
