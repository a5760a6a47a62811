"""The speech stack of one gateway process: one STT engine, one TTS engine, loaded once.

Both the WebSocket radio and the speech HTTP endpoints (`/api/atc/say`, `/api/atc/ptt`) use the
same instances, so a model is in memory once and every session shares the worker pools. Models
load in the background at start-up: the text API answers at once, `/health` reports `ready` when
the voice is.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from dataclasses import dataclass, replace
from typing import Any

from engine import phraseology
from engine.identity import confusable
from engine.models import Session
from engine.phraseology.kinds import PROCEDURE_KINDS
from engine.scenario_values import sid_fixes
from engine.value_rivals import TOLD_KINDS, limit_rivals, place_names
from gateway.settings import Settings
from gateway.speech.stt.base import NameChoice, SttContext, SttEngine, start_engine, words_of
from gateway.speech.stt.factory import make_stt
from gateway.speech.tts.base import TtsEngine
from gateway.speech.tts.cache import TtsCache
from gateway.speech.tts.factory import make_tts

log = logging.getLogger("livefreq.speech")

# Variables whose values a pilot reads back or says: they bias recognition towards the scenario.
_VOCAB_KINDS = frozenset(
    {"runway", "frequency", "altitude", "flight_level", "heading", "squawk", "qnh", "sid", "star", "route", "designator", "letter"}
)


@dataclass(frozen=True, slots=True)
class Voice:
    """A controller voice a session may choose (`session.start` `voice`)."""

    id: str
    label: str
    engine: str
    options: tuple[tuple[str, Any], ...] = ()


# Extra voices offered beside the configured engine's own; espeak ones only where espeak-ng is installed.
EXTRA_VOICES: tuple[Voice, ...] = (
    Voice("piper:joe-fast", "Joe, busy frequency (piper, faster)", "piper", (("length_scale", 0.8),)),
    Voice("espeak:en-us", "US English (espeak-ng)", "espeak", (("voice", "en-us"),)),
    Voice("espeak:en-gb", "British English (espeak-ng)", "espeak", (("voice", "en-gb"),)),
)


class UnknownVoice(ValueError):
    pass


class SpeechStack:
    def __init__(self, settings: Settings, *, stt: SttEngine | None = None, tts: TtsEngine | None = None) -> None:
        self.settings = settings
        stt_options: dict[str, Any] = {}
        if settings.stt_engine.strip().lower() == "vosk":
            stt_options["model_path"] = settings.vosk_model_path
        if settings.stt_engine.strip().lower() == "whisper":
            stt_options["bigger"] = settings.bigger_hearing and settings.second_hearing
            stt_options["city_rivals"] = settings.city_rivals
        self.stt: SttEngine = stt or make_stt(settings.stt_engine, **stt_options)
        tts_options: dict[str, Any] = {"voice": settings.tts_voice} if settings.tts_voice else {}
        cache = TtsCache(max_bytes=settings.tts_cache_mb * 1024 * 1024) if settings.tts_cache_mb else None
        self.tts: TtsEngine = tts or make_tts(settings.tts_engine, cache=cache, **tts_options)
        self.ready = False
        self.error: str | None = None
        self._loading: asyncio.Task[None] | None = None
        self._cache = cache
        self.default_voice = f"{self.tts.name}:{self.tts.voice}"
        self._voices: dict[str, Voice] = {self.default_voice: Voice(self.default_voice, f"{self.tts.voice} ({self.tts.name}, default)", self.tts.name)}
        for voice in EXTRA_VOICES:
            if voice.engine == "espeak" and shutil.which("espeak-ng") is None:
                continue
            self._voices.setdefault(voice.id, voice)
        self._engines: dict[str, TtsEngine] = {self.default_voice: self.tts}

    def voices(self) -> list[dict[str, str]]:
        return [{"id": v.id, "label": v.label, "engine": v.engine} for v in self._voices.values()]

    def tts_for(self, voice_id: str | None) -> TtsEngine:
        """The engine speaking `voice_id` (None: the default); built once, shared by sessions."""
        if not voice_id or voice_id == self.default_voice:
            return self.tts
        voice = self._voices.get(voice_id)
        if voice is None:
            raise UnknownVoice(f"unknown voice {voice_id!r}; choose one of: {', '.join(self._voices)}")
        engine = self._engines.get(voice_id)
        if engine is None:
            engine = make_tts(voice.engine, cache=self._cache, **dict(voice.options))
            self._engines[voice_id] = engine
        return engine

    async def load(self) -> None:
        """Load both models (idempotent; concurrent callers share one load)."""
        if self.ready:
            return
        if self._loading is None:
            self._loading = asyncio.create_task(self._load(), name="livefreq-speech-load")
        await asyncio.shield(self._loading)

    async def _load(self) -> None:
        try:
            await asyncio.gather(start_engine(self.stt), self.tts.load())
        except Exception as exc:  # reported by /health and on every voice request
            self.error = f"{type(exc).__name__}: {exc}"
            log.error("speech engines failed to load: %s", self.error)
            raise
        self.ready = True
        log.info("speech ready: stt=%s tts=%s", self.stt.name, self.tts.name)

    def describe(self) -> dict[str, Any]:
        return {
            "stt": self.stt.name,
            "tts": self.tts.name,
            "voice": getattr(self.tts, "voice", None),
            "ready": self.ready,
            "error": self.error,
        }


def stt_context(session: Session, expected: list[str], lexicon: frozenset[str] = frozenset()) -> SttContext:
    """What the recognizer should expect now: the state's phrases, the callsign and the values
    issued; `lexicon` (the radio's words, `radio_lexicon`) allows a second, closed-vocabulary hearing."""
    variables = session.variables
    vocabulary: list[str] = []
    telephony = variables.get("callsign_spoken")
    if isinstance(telephony, str):
        vocabulary.append(telephony)
    for name, value in variables.items():
        if value is None or name.startswith("_"):
            continue
        if phraseology.kind_for_variable(name) in _VOCAB_KINDS:
            vocabulary.append(phraseology.display_value(phraseology.kind_for_variable(name), value))
    for key in ("airport_name", "destination_name"):
        if isinstance(variables.get(key), str):
            vocabulary.append(variables[key])
    vocabulary.extend(traffic_vocabulary(session.traffic))
    callsign = telephony if isinstance(telephony, str) and telephony.strip() else None
    if confusable(variables.get("callsign"), session.traffic):
        callsign = None  # who is talking is itself the value heard: ours is not named whole (its words stay)
    context = SttContext(
        expected_phrases=list(expected), vocabulary=vocabulary, speaker=session.session_id, callsign=callsign, lexicon=lexicon
    )
    said = {w for p in context.spoken_phrases() for w in words_of(p)}
    names = name_choices(variables, said)
    return replace(context, names=names, told=told_words(variables), places=rival_places(variables))


def told_words(variables: dict[str, Any]) -> frozenset[str]:
    """The words (lower case) of every name an airport variable's place goes by ("dusseldorf"):
    the prompt names the issued city alone (`name_choices`), so a city rival is scored without
    them (`SttContext.told`, engine/value_rivals.py)."""
    return frozenset(w for n in _told_names(variables) for w in words_of(n))


def rival_places(variables: dict[str, Any]) -> tuple[str, ...]:
    """The places a told city is weighed against (`value_rivals.limit_rivals`) and the names of
    every told place (the limit's, the departure airport's), in alphabetical order: named alike
    in the prompt a city rival is scored under (`SttContext.places`); none where no place is told."""
    issued = _told_names(variables)
    if not issued:
        return ()
    return tuple(sorted({*limit_rivals(issued), *issued}, key=str.lower))


def _told_names(variables: dict[str, Any]) -> list[str]:
    """Every name the place of an airport variable (`TOLD_KINDS`) goes by (`place_names`)."""
    places = [name for name in variables if phraseology.kind_for_variable(name) in TOLD_KINDS]
    return [n for name in places for n in place_names(name, variables)]


def name_choices(variables: dict[str, Any], said: set[str]) -> tuple[NameChoice, ...]:
    """The names a readback is judged on that the recognizer is offered alike (`SttContext.names`):
    a SID's fix among the airport's (`sid_fixes`), a STAR's, or a SID's where the session lists
    none, among an unknown airport's (`_alike`), offered where the expected phrases (`said`, their
    words) name the issued one, else only kept out of the vocabulary.

    The clearance limit's city is not among them, measured with `livefreq bench readback --mode
    voice --fields sid,destination` (seed 0, 150 readbacks, half of them bad): without it whisper
    could not write the city (right readbacks asked again 58 of 67), and offered among every
    destination ("Cleared to Amsterdam or Barcelona or ... Zurich") the longer prompt cost more
    than it gave (42 of 67, against 31 of 67 with the city named). docs/performance.md has the runs.
    Named alone, it made whisper write the issued city for another one said (seeds 4 and 119), so
    a limit heard as issued under it waits for its rivals (`told_words`, engine/value_rivals.py)."""
    out: list[NameChoice] = []
    listed = variables.get("sid_fixes")
    airport_sids = [str(f) for f in listed if f] if isinstance(listed, list | tuple) else []
    for name, value in variables.items():
        kind = phraseology.kind_for_variable(name)
        if value and kind in PROCEDURE_KINDS:
            fix = str(value).split(" ")[0]
            words = frozenset(words_of(fix))
            listed_here = airport_sids if kind == "sid" else []  # a STAR's fix is no departure's
            out.append(NameChoice(words, _alike(fix, listed_here) if words & said else ()))
    return tuple(out)


def _alike(fix: str, listed: list[str]) -> tuple[str, ...]:
    """`fix` among `listed`, or where nothing is listed among the SIDs of an airport the gateway
    does not know (`scenario_values.sid_fixes(None)`): never alone in the prompt."""
    return tuple(sorted({*(listed or sid_fixes(None)), fix.upper()}))


def phrase_names(phrases: list[str]) -> tuple[NameChoice, ...]:
    """`name_choices` for a hearing no session stands behind (`/api/atc/ptt`: an expected phrase
    only, no airport): each SID or STAR fix the phrases name, offered among the SIDs of an airport
    the gateway does not know (`scenario_values.sid_fixes(None)`), never alone. Named alone, the
    issued fix was the prompt's only name, and whisper wrote it for another one the pilot said."""
    out: list[NameChoice] = []
    for phrase in phrases:
        for kind in sorted(PROCEDURE_KINDS):
            for value in phraseology.extract(kind, phrase):
                fix = str(value).split(" ")[0]
                words = frozenset(words_of(fix))
                if words and all(choice.issued != words for choice in out):
                    out.append(NameChoice(words, _alike(fix, [])))
    return tuple(out)


def traffic_vocabulary(callsigns: list[str]) -> list[str]:
    """The words of nearby traffic's callsigns, so the recognizer can hear another aircraft call:
    the telephony of each airline callsign ("Lufthansa" of DLH359, the head of its `speak_callsign`).

    The wording only, as `gateway.speech.stt.base` explains: the flight numbers and the letters of
    registrations are ICAO words every context has already, and naming them here would bias
    whisper's prompt towards one value ("tree fife niner") over what the pilot said."""
    out: list[str] = []
    for code in callsigns:
        parsed = phraseology.parse_callsign(code)
        # registrations and unknown designators are spelled: phonetic letters, ICAO words already
        if parsed is not None and parsed.telephony and parsed.telephony not in out:
            out.append(parsed.telephony)
    return out
