"""LRU cache of synthesized speech, bounded by bytes.

ATC phraseology repeats ("Lufthansa three five nine," "say again," "contact tower..."), so speech
is cached per piece (the unit `split_for_speech` makes) under (engine, voice, piece text): a new
message that shares clauses with an old one reuses their audio, and a fully cached message streams
without any synthesis. Raw engine PCM is cached; the per-session radio effect is applied later.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator

from gateway.speech.tts.base import TtsEngine, split_for_speech

CacheKey = tuple[str, str, str]
DEFAULT_MAX_BYTES = 128 * 1024 * 1024  # ~50 minutes of 22 kHz speech (gateway.settings `tts_cache_mb`)


class TtsCache:
    """Thread-safe LRU map from (engine, voice, text) to PCM, holding at most `max_bytes` of audio."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if max_bytes <= 0:
            raise ValueError(f"cache size must be positive, got {max_bytes}")
        self.max_bytes = max_bytes
        self._entries: OrderedDict[CacheKey, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def size_bytes(self) -> int:
        """Bytes of audio currently held."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def peek(self, key: CacheKey) -> bool:
        """Whether `key` is cached (no hit or miss counted, no LRU move)."""
        with self._lock:
            return key in self._entries

    def get(self, key: CacheKey) -> bytes | None:
        """The cached audio for `key` (now most recently used), or None."""
        with self._lock:
            pcm = self._entries.get(key)
            if pcm is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return pcm

    def put(self, key: CacheKey, pcm: bytes) -> None:
        """Store `pcm`, evicting the least recently used entries; audio larger than the cache is not kept."""
        if len(pcm) > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= len(old)
            self._entries[key] = pcm
            self._bytes += len(pcm)
            while self._bytes > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= len(evicted)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


class CachedTts:
    """`engine` with a `TtsCache` in front; same name, voice and rate as the engine it wraps.

    Wrap the concrete engines, not a `FailoverTts`, so fallback audio is never stored under the
    online voice's key (`make_tts` does this).
    """

    def __init__(self, engine: TtsEngine, cache: TtsCache) -> None:
        self.engine = engine
        self.cache = cache
        self.name = engine.name
        self.voice = engine.voice
        self.sample_rate = engine.sample_rate
        # pieces being synthesized now: a message asking for one waits for it instead of starting
        # it again (a speculative `prepare` is usually still running when the reply is decided)
        self._inflight: dict[CacheKey, asyncio.Future[bytes]] = {}

    async def load(self) -> None:
        await self.engine.load()

    def key(self, text: str) -> CacheKey:
        return (self.name, self.voice, text)

    async def stream(self, text: str) -> AsyncIterator[bytes]:
        for piece in split_for_speech(text):
            pcm = await self._piece(piece)
            if pcm:
                yield pcm

    async def prepare(self, text: str, pieces: int | None = None) -> int:
        """Synthesize the first `pieces` pieces of `text` (None: all) into the cache ahead of need
        (the controller's likely reply while the pilot talks); returns how many were not cached."""
        made = 0
        for piece in split_for_speech(text)[:pieces]:
            key = self.key(piece)
            if key in self._inflight or self.cache.peek(key):
                continue
            await self._piece(piece)
            made += 1
        return made

    async def _piece(self, piece: str) -> bytes:
        """One piece from the cache, from a synthesis in flight, or synthesized now."""
        key = self.key(piece)
        pcm = self.cache.get(key)
        if pcm is not None:
            return pcm
        pending = self._inflight.get(key)
        if pending is not None:
            await asyncio.wait({pending})  # raises only if this task is cancelled
            if not pending.cancelled() and pending.exception() is None:
                return pending.result()
            # the other synthesis failed or was cancelled: this one tries on its own
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            pcm = await self.engine.synthesize(piece)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody waits
            raise
        finally:
            if self._inflight.get(key) is future:
                del self._inflight[key]
        if pcm:
            self.cache.put(key, pcm)
        future.set_result(pcm)
        return pcm

    async def synthesize(self, text: str) -> bytes:
        return b"".join([chunk async for chunk in self.stream(text)])

    def __repr__(self) -> str:
        return f"CachedTts({self.engine!r})"
