"""Speech over plain HTTP: ``POST /api/atc/say`` (text to radio audio) and ``POST /api/atc/ptt``
(a recorded push-to-talk clip to text), for clients that do not use the WebSocket radio.

Both endpoints use the process's one `SpeechStack`, so they share the loaded models and worker
pools with the live sessions. Bodies carry base64 audio in JSON, so they get their own size limit
(``settings.max_audio_body_bytes``, 8 MiB) instead of the 64 KiB of the text API.

``/api/atc/say`` answers two client shapes:

- seed 000: ``{text, voice?, format?}`` -> ``{audio: base64, mimeType, voice, notes}``;
- the OpenSquawk web app: ``{text, level?, voice?, speed?, tag?, sessionId?, moduleId?,
  lessonId?, preNormalized?, format?}`` -> ``{success: true, text, normalized, level, voice,
  speed, audio: {mime, base64, size, ext}, notes}``. A body is in this shape when it has any of
  `OPENSQUAWK_SAY_KEYS` (the fields only that app sends).

The text is spoken in its ICAO form (`speak_text`: "118.7" -> "wun wun eight decimal seven"),
unless ``preNormalized`` says the client already did that (the app's own normalizer; speaking
its output through ours again could respell words). ``level`` (1-5) is the readability of the
server radio effect; without it the effect runs at ``settings.radio_level`` when
``settings.radio_effect`` is on. ``speed`` (0.5-2, clamped like the app does; 1 is normal) maps
to piper's ``length_scale = 1 / speed`` for the default voice; other engines and voices ignore it
and say so in ``notes``. ``voice``: one of ``GET /api/voices`` (its id, e.g. ``espeak:en-gb``), the
default voice's id or name, or ``default``; any other name (the app sends OpenAI names such as
``alloy``, seed 000's example ``"string"``) is not refused: the default voice speaks, and both
shapes say which voice was used (``voice``) and why (``notes``). ``format`` is ``mp3`` (default:
seed 000's ``audio/mpeg``; PyAV's FFmpeg build has the LAME encoder), ``wav`` or ``ogg`` (Opus);
``smallest`` (the app's word) means mp3.

``/api/atc/ptt`` takes ``{audio: base64, format?: wav|webm|ogg|mp3, mimeType?, expected?:
{phrase}, sessionId?, context?: {callsigns?}}`` and answers ``{success: true, transcription, duration_s}`` (seed 000 reads
``transcription`` only), plus ``hearing: {alternatives, cut_off, confidence}``: what the
recognizer was unsure of (`engine.models.Hearing`; a client that submits the transcription as a
transmission can judge a readback value only where every alternative agrees; an empty
transcription of a clip with speech in it has confidence 0). The container comes from ``format``, else from ``mimeType`` or a
``data:audio/...;base64,`` prefix, else FFmpeg probes it. ``expected.phrase`` biases the
recognizer towards what the pilot should say; it cannot make a wrong readback right (see
`gateway.speech.stt.base`). ``context.callsigns`` (nearby traffic, at most 50 callsigns such as
"DLH359") adds their telephony to the recognizer's vocabulary, so another aircraft's call is heard
as such; a value that is no callsign is a 422 ``validation_error`` naming it. No speech in the clip
gives an empty ``transcription``.

Errors use the gateway's JSON error shape: 422 ``validation_error`` for bad fields, 422
``bad_audio`` for audio that is not base64 or not decodable, 422 ``audio_too_long`` beyond
``settings.max_transmission_s``, 413 ``payload_too_large`` beyond the body limit, and 503
``speech_unavailable`` when the engines failed to load or are still loading after
`LOAD_WAIT_S` (a request that arrives during start-up waits for the load instead of failing).

Decoding, synthesis, the radio effect and encoding are CPU work; they run on the speech worker
pools, never on the event loop.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import io
import re
import zlib
from typing import Any

import av
import numpy as np
from pydantic import ConfigDict, Field, field_validator
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from engine.phraseology import speak_text
from gateway.wire import JsonBody, Traffic, json_int
from gateway.api.errors import ApiError, parse, read_json
from gateway.audio.codec import DecodeError, decode_audio
from gateway.audio.pcm import PcmError, duration_s, wav_bytes
from gateway.audio.radio import apply_radio
from gateway.audio.resample import resample
from gateway.settings import Settings
from gateway.speech.stack import SpeechStack, phrase_names, traffic_vocabulary
from gateway.speech.stt import base as stt_base
from gateway.audio.vad import contains_speech
from gateway.speech.stt.base import STT_SAMPLE_RATE, SttContext, SttError, transcribe_result
from gateway.speech.tts import base as tts_base
from gateway.speech.tts.base import TtsEngine, TtsError
from gateway.speech.tts.cache import CachedTts
from gateway.speech.tts.piper import PiperTts

MAX_SAY_CHARS = 1000
LOAD_WAIT_S = 30.0  # how long a request waits for engines that are still loading
MIN_SPEED, MAX_SPEED = 0.5, 2.0
# fields only the OpenSquawk web app sends: their presence selects its response shape
OPENSQUAWK_SAY_KEYS = frozenset({"level", "speed", "tag", "sessionId", "moduleId", "lessonId", "preNormalized"})

# format -> (mime type, file extension)
SAY_FORMATS: dict[str, tuple[str, str]] = {
    "wav": ("audio/wav", "wav"),
    "mp3": ("audio/mpeg", "mp3"),
    "ogg": ("audio/ogg", "ogg"),
}
PTT_FORMATS = ("wav", "webm", "ogg", "mp3")
DEFAULT_SAY_FORMAT = "mp3"  # seed 000: mimeType audio/mpeg
_MIME_FORMATS = {
    "audio/wav": "wav",
    "audio/wave": "wav",
    "audio/x-wav": "wav",
    "audio/vnd.wave": "wav",
    "audio/webm": "webm",
    "video/webm": "webm",
    "audio/ogg": "ogg",
    "application/ogg": "ogg",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
_DATA_URL = re.compile(r"^data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?:;[^,;]*)*;base64,", re.IGNORECASE)
_OPUS_RATE = 48_000
_MP3_BITRATE = 64_000
_OPUS_BITRATE = 32_000


# --------------------------------------------------------------------------- request bodies


class SayRequest(JsonBody):
    """Both `/api/atc/say` shapes; fields other clients send (moduleId, lessonId, ...) are ignored."""

    model_config = ConfigDict(extra="ignore", strict=True)

    text: str = Field(max_length=MAX_SAY_CHARS)
    voice: str | None = None
    level: json_int(ge=1, le=5) | None = None
    speed: float | None = Field(default=None, gt=0)
    tag: str | None = None
    sessionId: str | None = None  # camelCase: the web app's field names
    preNormalized: bool = False
    format: str | None = None

    @field_validator("text")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        text = text.strip()
        if not text:
            raise ValueError("text must not be empty")
        return text

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str | None) -> str | None:
        if value is None:
            return None
        fmt = value.strip().lower()
        fmt = "mp3" if fmt == "smallest" else fmt
        if fmt not in SAY_FORMATS:
            raise ValueError(f"format must be one of {', '.join(SAY_FORMATS)} (or 'smallest'), got {value!r}")
        return fmt


class Expected(JsonBody):
    model_config = ConfigDict(extra="ignore", strict=True)

    phrase: str | None = Field(default=None, max_length=MAX_SAY_CHARS)


class PttContext(JsonBody):
    """`context` of a push-to-talk clip: `callsigns` of nearby traffic bias the recognizer towards
    their telephony (`gateway.speech.stack.traffic_vocabulary`); other keys are ignored."""

    model_config = ConfigDict(extra="ignore", strict=True)

    callsigns: Traffic | None = None


class PttRequest(JsonBody):
    """`/api/atc/ptt` in the seed 000 and OpenSquawk shapes (moduleId, lessonId ignored)."""

    model_config = ConfigDict(extra="ignore", strict=True)

    audio: str
    format: str | None = None
    mimeType: str | None = None  # camelCase: the clients' field names
    expected: Expected | None = None
    sessionId: str | None = None
    context: PttContext | None = None

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        fmt = value.strip().lower()
        if fmt not in PTT_FORMATS:
            raise ValueError(f"format must be one of {', '.join(PTT_FORMATS)}, got {value!r}")
        return fmt


# --------------------------------------------------------------------------- audio helpers


def encode_audio(pcm: bytes, sample_rate: int, fmt: str) -> bytes:
    """`pcm` (PCM16 mono) as a complete file: WAV, MP3 (LAME) or Ogg Opus (48 kHz), via PyAV."""
    if fmt == "wav":
        return wav_bytes(pcm, sample_rate)
    if fmt == "mp3":
        codec, container, rate, bitrate = "libmp3lame", "mp3", sample_rate, _MP3_BITRATE
    elif fmt == "ogg":
        codec, container, rate, bitrate = "libopus", "ogg", _OPUS_RATE, _OPUS_BITRATE
        pcm = resample(pcm, sample_rate, rate)  # Opus runs at 8/12/16/24/48 kHz only
    else:
        raise ValueError(f"cannot encode audio as {fmt!r}")
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format=container) as output:
        stream = output.add_stream(codec, rate=rate, layout="mono")
        stream.bit_rate = bitrate
        frame = av.AudioFrame.from_ndarray(np.frombuffer(pcm, dtype="<i2").reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = rate
        for packet in stream.encode(frame):  # PyAV cuts the frame to the codec's frame size
            output.mux(packet)
        for packet in stream.encode(None):
            output.mux(packet)
    return buffer.getvalue()


def render_speech(pcm: bytes, sample_rate: int, level: int | None, fmt: str, seed: int) -> bytes:
    """The radio effect at readability `level` (None: clean), then the file in `fmt`."""
    if level is not None:
        pcm = apply_radio(pcm, sample_rate, level, seed=seed)
    return encode_audio(pcm, sample_rate, fmt)


def ptt_format(body: PttRequest) -> tuple[str, str | None]:
    """The base64 payload without a data-URL prefix, and the container to decode it as.

    ``format`` wins, then the data URL's or ``mimeType``'s type ("audio/webm;codecs=opus" ->
    webm); None lets FFmpeg probe (e.g. Safari's audio/mp4).
    """
    payload = body.audio.strip()
    mime = body.mimeType
    match = _DATA_URL.match(payload)
    if match:
        payload = payload[match.end() :]
        mime = mime or match.group("mime")
    if body.format:
        return payload, body.format
    if mime:
        return payload, _MIME_FORMATS.get(mime.split(";")[0].strip().lower())
    return payload, None


def decode_base64(payload: str) -> bytes:
    """The bytes of standard base64 (whitespace allowed) or a clear `bad_audio` error."""
    compact = "".join(payload.split())
    if not compact:
        raise ApiError(422, "bad_audio", "audio is empty", "audio")
    try:
        data = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(422, "bad_audio", "audio is not valid base64", "audio") from None
    if not data:
        raise ApiError(422, "bad_audio", "audio is empty", "audio")
    return data


def radio_quality(level: int | None) -> str:
    """The readability wording of a radio check."""
    if level is None:
        return "clean"
    return {5: "perfectly readable", 4: "readable", 3: "readable with difficulty", 2: "readable now and then", 1: "unreadable"}[level]


# --------------------------------------------------------------------------- endpoints


class SpeechApi:
    """The two endpoints bound to one `SpeechStack` and the gateway settings."""

    def __init__(self, speech: SpeechStack, settings: Settings, *, load_wait_s: float = LOAD_WAIT_S) -> None:
        self.speech = speech
        self.settings = settings
        self.load_wait_s = load_wait_s
        self._speed_variants: dict[float, TtsEngine] = {}

    async def ensure_ready(self) -> None:
        """Wait (bounded) for the engines to load; 503 `speech_unavailable` when they cannot."""
        if self.speech.ready:
            return
        try:
            await asyncio.wait_for(self.speech.load(), self.load_wait_s)
        except TimeoutError:
            raise ApiError(
                503, "speech_unavailable", f"speech engines are still loading after {self.load_wait_s:g} s; retry shortly"
            ) from None
        except Exception as exc:  # noqa: BLE001 (whatever broke the load is the reason to report)
            reason = self.speech.error or f"{type(exc).__name__}: {exc}"
            raise ApiError(503, "speech_unavailable", f"speech engines failed to load: {reason}") from None

    def engine_for_speed(self, speed: float) -> tuple[TtsEngine, str | None]:
        """The TTS engine speaking at `speed` (1 = normal), and a note when speed cannot be applied.

        Only piper has a speaking rate (``length_scale``); a variant per rate (rounded to 0.01)
        shares the loaded voice and the synthesis cache, keyed apart by its voice id.
        """
        engine = self.speech.tts
        if abs(speed - 1.0) < 0.005:
            return engine, None
        inner, cache = (engine.engine, engine.cache) if isinstance(engine, CachedTts) else (engine, None)
        if not isinstance(inner, PiperTts):
            return engine, f"speed is applied by the piper voice only; {engine.name} spoke at its normal rate"
        length_scale = round(1.0 / speed, 2)
        variant = self._speed_variants.get(length_scale)
        if variant is None:
            piper = PiperTts(inner.model_path, length_scale=length_scale)
            variant = CachedTts(piper, cache) if cache is not None else piper
            self._speed_variants[length_scale] = variant
        return variant, None

    def pick_voice(self, requested: str | None) -> tuple[str, str | None]:
        """The voice id that speaks for `requested`, and a note when it is not the one asked for."""
        default = self.speech.default_voice
        if requested is None or not requested.strip():
            return default, None
        name = requested.strip()
        if name.lower() in {"default", default.lower(), str(self.speech.tts.voice).lower()}:
            return default, None
        if name in {v["id"] for v in self.speech.voices()}:
            return name, None
        choices = ", ".join(v["id"] for v in self.speech.voices())
        return default, f"voice {name!r} is not a voice of this gateway ({choices}); the default {default!r} spoke"

    async def say(self, request: Request) -> JSONResponse:
        data = await read_json(request, self.settings.max_audio_body_bytes)
        body = parse(SayRequest, data)
        opensquawk = bool(OPENSQUAWK_SAY_KEYS & body.model_fields_set)
        normalized = body.text if body.preNormalized else speak_text(body.text).strip()
        if not normalized:
            raise ApiError(422, "validation_error", "text has nothing to speak", "text")
        level = body.level if body.level is not None else (self.settings.radio_level if self.settings.radio_effect else None)
        speed = min(MAX_SPEED, max(MIN_SPEED, body.speed)) if body.speed is not None else 1.0
        fmt = body.format or DEFAULT_SAY_FORMAT
        await self.ensure_ready()

        notes: list[str] = []
        voice_id, note = self.pick_voice(body.voice)
        if note:
            notes.append(note)
        if voice_id == self.speech.default_voice:
            engine, note = self.engine_for_speed(speed)
            if note:
                notes.append(note)
        else:
            engine = self.speech.tts_for(voice_id)
            if abs(speed - 1.0) >= 0.005:
                notes.append(f"speed is applied by the default voice only; {voice_id} spoke at its normal rate")
        configured = voice_id if voice_id != self.speech.default_voice else self.speech.tts.voice
        try:
            pcm = await engine.synthesize(normalized)
        except TtsError as exc:
            raise ApiError(500, "tts_failed", f"speech synthesis failed: {exc}") from None
        if not pcm:
            raise ApiError(422, "validation_error", "text has nothing to speak", "text")
        seed = zlib.crc32(normalized.encode("utf-8"))
        audio = await tts_base.run_cpu(render_speech, pcm, engine.sample_rate, level, fmt, seed)
        mime, ext = SAY_FORMATS[fmt]
        encoded = base64.b64encode(audio).decode("ascii")
        if not opensquawk:
            return JSONResponse({"audio": encoded, "mimeType": mime, "voice": voice_id, "notes": notes})
        result: dict[str, Any] = {
            "success": True,
            "text": body.text,
            "normalized": normalized,
            "level": level,
            "radioQuality": radio_quality(level),
            "voice": configured,
            "speed": speed,
            "audio": {"mime": mime, "base64": encoded, "size": len(audio), "ext": ext},
            "notes": notes,
        }
        return JSONResponse(result)

    async def ptt(self, request: Request) -> JSONResponse:
        data = await read_json(request, self.settings.max_audio_body_bytes)
        body = parse(PttRequest, data)
        payload, container = ptt_format(body)
        raw = decode_base64(payload)
        try:
            pcm = await stt_base.run_cpu(_decode, raw, container)
        except (DecodeError, PcmError) as exc:
            what = f"{container} audio" if container else "audio"
            raise ApiError(422, "bad_audio", f"cannot decode the {what}: {exc}", "audio") from None
        length = duration_s(pcm, STT_SAMPLE_RATE)
        limit = self.settings.max_transmission_s
        if length > limit:
            raise ApiError(
                422, "audio_too_long", f"the recording is {length:.1f} s long; the limit is {limit:g} s", "audio"
            )
        await self.ensure_ready()
        context = ptt_context(body)
        try:
            result = await transcribe_result(self.speech.stt, pcm, context)
        except SttError as exc:
            raise ApiError(500, "stt_failed", f"speech recognition failed: {exc}") from None
        text = result.text.strip()
        hearing = result.hearing
        if not text and await stt_base.run_cpu(contains_speech, pcm):
            hearing = hearing.model_copy(update={"confidence": 0.0})  # speech, but no word recognized
        return JSONResponse(
            {
                "success": True,
                "transcription": text,
                "duration_s": round(length, 3),
                "hearing": hearing.model_dump(mode="json"),
            }
        )


def ptt_context(body: PttRequest) -> SttContext:
    """What the recognizer expects of a push-to-talk recording: the expected phrase's wording,
    its callsign, nearby traffic's, and any SID it names offered among others (`phrase_names`)."""
    phrase = body.expected.phrase if body.expected else None
    phrases = [phrase] if phrase and phrase.strip() else []
    return SttContext(
        expected_phrases=phrases,
        vocabulary=traffic_vocabulary(body.context.callsigns or []) if body.context else [],
        speaker=body.sessionId,
        callsign=_callsign_in(phrase),
        names=phrase_names(phrases),
    )


def _decode(raw: bytes, container: str | None) -> bytes:
    return decode_audio(raw, STT_SAMPLE_RATE, container_format=container)


def routes(speech: SpeechStack, settings: Settings, *, load_wait_s: float = LOAD_WAIT_S) -> list[BaseRoute]:
    """``POST /api/atc/say`` and ``POST /api/atc/ptt`` bound to `speech`."""
    api = SpeechApi(speech, settings, load_wait_s=load_wait_s)

    async def voices(request: Request) -> JSONResponse:
        """Controller voices a radio session may choose (`session.start` `voice`)."""
        return JSONResponse({"default": speech.default_voice, "voices": speech.voices()})

    return [
        Route("/api/atc/say", api.say, methods=["POST"]),
        Route("/api/atc/ptt", api.ptt, methods=["POST"]),
        Route("/api/voices", voices, methods=["GET"]),
    ]


# --------------------------------------------------------------------------- CORS


def cors_middleware(settings: Settings) -> Middleware:
    """CORS for browser pages on `settings.cors_origins` (put it first: outermost, so errors carry it).

    The gateway binds to loopback by default and uses no cookies or credentials, so ``["*"]`` is
    the default: a local page or the OpenSquawk web app can probe ``/health`` and post speech.
    A public page calling ``http://127.0.0.1`` also asks Chrome's Private Network Access
    preflight (``Access-Control-Request-Private-Network``), which ``allow_private_network`` answers.
    """
    return Middleware(
        CORSMiddleware,
        allow_origins=settings.cors_origins,
        allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
        allow_headers=["*"],
        allow_private_network=True,
        max_age=600,
    )


def _callsign_in(phrase: str | None) -> str | None:
    """The pilot's own callsign as said ("Lufthansa 359"), from the expected phrase ("DLH359,
    request taxi"): the recognizer's prompt carries it whole (it says who talks; the phrase's
    values it never carries, see `gateway.speech.stt.whisper.build_prompt`)."""
    if not phrase or not phrase.strip():
        return None
    from engine.phraseology import callsign_telephony, extract

    found = extract("callsign", phrase)
    return callsign_telephony(found[0]) if found else None
