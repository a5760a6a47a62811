"""Gateway settings from the environment (prefix ``LIVEFREQ_``), one place for every knob.

Only adapters read settings; the engine gets plain values. Paths default to the flows, browser
client and prompts shipped inside the package (gateway/resources.py), so ``livefreq serve`` works
from a clone and from an installed wheel alike.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from gateway import resources

# The checkout's root. Serving never reads it (an installed wheel has no checkout); only tooling
# that works on the repository's tests/ and reports/ does (benchmarks, corpus, load tester).
REPO_ROOT = Path(__file__).resolve().parents[1]


def default_sqlite_path() -> Path:
    """``$XDG_DATA_HOME/livefreq/livefreq.sqlite3`` (``~/.local/share/...``): user data, outside
    the checkout, the same file whatever directory the gateway is started from."""
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "livefreq" / "livefreq.sqlite3"


def default_node_id() -> str:
    """``hostname:pid``: unique among the gateway processes of one deployment."""
    return f"{socket.gethostname()}:{os.getpid()}"


class IceServer(BaseModel):
    """A STUN or TURN server for WebRTC peers, as RTCIceServer has it."""

    urls: str | list[str]
    username: str | None = None
    credential: str | None = None


class Settings(BaseSettings):
    """e.g. ``LIVEFREQ_PORT=9000 LIVEFREQ_FLOWS_DIR=/srv/flows livefreq serve``."""

    model_config = SettingsConfigDict(env_prefix="LIVEFREQ_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    flows_dir: Path = Field(default_factory=resources.flows_dir)
    static_dir: Path = Field(default_factory=resources.static_dir)
    default_flow: str | None = None  # None: the registry's main flow
    max_body_bytes: int = Field(default=65536, gt=0)
    log_level: str = "info"
    session_ttl_s: float = Field(default=7200.0, gt=0)  # idle time after which a session is dropped
    # where the gateway app keeps sessions and transcripts (gateway/store): "sqlite" survives
    # restarts (one gateway process per file); "redis" is shared by several gateway nodes;
    # "memory" forgets everything on exit. Only apps built by `create_app` open it; a
    # `RadioService` built on its own (chat, the in-process benchmark) keeps its sessions in
    # memory unless given a repository.
    store: Literal["memory", "sqlite", "redis"] = "sqlite"
    sqlite_path: Path = Field(default_factory=default_sqlite_path)  # directory created on open
    # FULL: one fsync per commit, a stored decision survives a power cut; NORMAL: survives a crash
    # of the process only, for disks with slow flushes (measured costs in gateway/store/sqlite.py)
    sqlite_synchronous: Literal["NORMAL", "FULL"] = "FULL"
    # the Redis store (gateway/store/redis.py): every node of one deployment uses the same URL,
    # prefix and time_scale; the prefix lets several deployments share one server
    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_prefix: str = "livefreq:"
    redis_timeout_s: float = Field(default=0.5, gt=0)  # per command: a stuck Redis fails fast (503)
    # this process among the nodes sharing a store: holder of its timer leases, sender of its
    # relayed decisions, shown by /health; unique per process (default hostname:pid)
    node_id: str = Field(default_factory=default_node_id, pattern=r"^\S+$")
    tick_interval_s: float = Field(default=0.25, gt=0)  # period of the background session clock
    time_scale: float = Field(default=1.0, gt=0, le=1000)  # >1 compresses controller waits (gateway/clock.py)

    # voice (gateway/speech): engines are loaded in the background at start-up; /health says when ready
    stt_engine: str = "whisper"  # whisper | sphinx | vosk
    tts_engine: str = "piper"  # piper | espeak | edge-tts (falls back to piper offline)
    tts_voice: str | None = None  # engine-specific voice name; None: the engine's default
    vosk_model_path: Path | None = Field(
        default=None, validation_alias=AliasChoices("vosk_model_path", "VOSK_MODEL_PATH", "LIVEFREQ_VOSK_MODEL_PATH")
    )
    radio_level: int = Field(default=4, ge=1, le=5)  # readability of the radio effect; 5 = clean
    radio_effect: bool = True
    speech_preload: bool = True  # load the speech models when the app starts
    tts_cache_mb: int = Field(default=128, ge=0)  # ~50 min of speech: a reply made ahead per session
    max_frame_bytes: int = Field(default=65536, gt=0)  # WebSocket binary frame limit (protocol v1)
    max_transmission_s: float = Field(default=30.0, gt=0)  # longer ptt/vox audio is cut there
    # hear a voice transmission the engine would not accept once more, in the radio's words only
    # (gateway/speech/rehearing.py); skipped while no worker of the CPU pool is idle, and where it
    # would end later than this many seconds after PTT release (the reply is due at 1 s); 0: no limit
    second_hearing: bool = True
    second_hearing_due_s: float = Field(default=0.85, ge=0)
    # then check a readback value still unsure in the audio (gateway/speech/checking.py), under the
    # same idle and due-time rules; off with the second hearing too
    value_checks: bool = True
    # and, where the engine would not accept the second hearing either, a third by whisper base
    # (gateway/speech/stt/whisper_bigger.py; the `bigger` extra, which `make install` installs)
    bigger_hearing: bool = True
    # ... where it ends within this many seconds of PTT release (0: no limit): it runs only where
    # the controller would otherwise say "say again" and the pilot repeat it all
    bigger_hearing_due_s: float = Field(default=1.5, ge=0)
    # and whisper base scoring the values still unsure after the third hearing (step 4 of
    # gateway/speech/hearing_chain.py); off: tiny.en's checks alone, for a paired comparison
    bigger_value_checks: bool = True
    # a readback the engine would accept before whisper base heard it is heard by base too, where a
    # worker stays free and it ends within bigger_hearing_due_s: a value base hears as another is
    # asked again (gateway/speech/rehearing.py `confirm_bigger`; off with the third hearing too)
    confirm_hearing: bool = True
    # ... and waiting its turn among the finals instead of needing a free worker (still not started
    # where it would end past bigger_hearing_due_s): under load a readback is then confirmed as on a
    # quiet frequency, at a capacity cost (measured in docs/performance.md, stop 66); off by default
    confirm_hearing_queued: bool = False
    # by voice, a clearance limit whisper's prompt named is heard right only once every other city
    # the scenarios issue is ruled out in the audio (engine/value_rivals.py): about 0.25 s of one
    # core a clearance readback, queued among the finals (`livefreq load --sessions 5`: 15 of 15
    # accepted at the first hearing, p95 884 ms; docs/performance.md, stop 55). Off
    # (LIVEFREQ_CITY_RIVALS=false): a wrong city whisper writes as the issued one is accepted
    city_rivals: bool = True
    audio_pacing: bool = True  # send controller audio at real time (blocking needs it); off: as fast as made
    # speech HTTP endpoints (gateway/api/speech.py): base64 audio in JSON bodies outgrows max_body_bytes
    max_audio_body_bytes: int = Field(default=8 * 1024 * 1024, gt=0)
    # origins allowed by CORS; "*" lets browser pages on other origins (the OpenSquawk web app
    # probing 127.0.0.1:8765-8770) call the local gateway
    cors_origins: list[str] = Field(default_factory=lambda: ["*"])

    # hardening (gateway/auth.py, gateway/radio/limits.py; docs/operations.md "Security"). Authentication is off
    # until API keys are configured: a local trainer needs no set-up.
    # keys: comma-separated entries, each a key or "sha256:<hex>" of one, optionally "label entry"
    api_keys: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)
    api_keys_file: Path | None = None  # one entry per line (as in api_keys), '#' comments
    # signs session tokens; None: a random secret kept in `auth_secret_file` (created 0600)
    auth_secret: SecretStr | None = None
    auth_secret_file: Path | None = None  # None: "auth-secret" beside sqlite_path
    session_token_ttl_s: float = Field(default=86400.0, gt=0)
    # browser origins allowed to open WS /v1/radio besides the gateway's own; "*": any. A request
    # without an Origin header (not a browser) is always allowed.
    ws_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    max_sessions: int = Field(default=1000, gt=0)  # stored sessions in all (503 too_many_sessions)
    max_sessions_per_key: int = Field(default=100, gt=0)  # per API key, when auth is on (429)
    # live voice sessions (radio connections with a session) this node admits; past it a new one is
    # refused with `too_many_sessions` (gateway/capacity.py): a number, "auto" (measured by a
    # self-test once the speech models are loaded) or "off" (no limit)
    voice_capacity: Annotated[int, Field(gt=0)] | Literal["auto", "off"] = "auto"
    # per WebSocket connection: token buckets for text messages and audio bytes; over-limit frames
    # are dropped with a `rate_limited` error, and `ws_abuse_drops` drops (forgiven one per
    # second) close the socket
    ws_messages_per_s: float = Field(default=50.0, gt=0)
    ws_messages_burst: int = Field(default=100, gt=0)
    ws_audio_bytes_per_s: int = Field(default=1_000_000, gt=0)  # ~10x real time at 48 kHz
    ws_audio_burst_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    ws_abuse_drops: int = Field(default=100, gt=0)
    # what a connection may hold for a client that reads too slowly (gateway/radio/outbox.py)
    ws_send_queue_bytes: int = Field(default=2 * 1024 * 1024, gt=0)
    ws_send_queue_droppable: int = Field(default=32, ge=0)  # partial transcripts and vad events

    # WebRTC (gateway/webrtc; protocol-v1.md "WebRTC"). STUN/TURN servers for peers beyond a LAN:
    # URLs ("stun:host:3478") or JSON objects {urls, username, credential}; none by default, so
    # an offline gateway never waits for a STUN server (host candidates serve a LAN)
    webrtc_ice_servers: Annotated[list[IceServer], NoDecode] = Field(default_factory=list)
    webrtc_max_peers: int = Field(default=200, gt=0)  # open peer connections (503 too_many_peers)
    # a peer that sends nothing on its data channel for this long is gone (the client pings)
    webrtc_liveness_s: float = Field(default=15.0, gt=0)
    # after ptt.up the mic stays open for this much more audio: the release overtakes the last words
    webrtc_ptt_tail_ms: int = Field(default=100, ge=0, le=1000)

    # supporting data (gateway/providers): weather, ATIS and flight plans. "offline" (default): no
    # network, generated weather (`source: "generated"`), no flight plans; "vatsim": VATSIM's
    # METAR service and data feed at these URLs ({icao} is replaced), falling back to generated
    # weather whenever they fail
    data_provider: Literal["offline", "vatsim"] = "offline"
    vatsim_metar_url: str = "https://metar.vatsim.net/{icao}"
    vatsim_data_url: str = "https://data.vatsim.net/v3/vatsim-data.json"
    provider_timeout_s: float = Field(default=3.0, gt=0)  # per request
    provider_retries: int = Field(default=2, ge=0, le=10)  # more attempts after a timeout, 429 or 5xx
    provider_backoff_s: float = Field(default=0.25, ge=0)  # first retry's wait, doubling (with jitter)
    metar_ttl_s: float = Field(default=300.0, gt=0)  # an airport's METAR is asked for again after this
    datafeed_ttl_s: float = Field(default=60.0, gt=0)  # the data feed (it changes every 15 s)
    provider_retry_after_s: float = Field(default=60.0, ge=0)  # after a failure, no new request for this long
    weather_wait_s: float = Field(default=2.0, ge=0)  # a new session waits this long for its METARs

    # the LLM router (gateway/llm, engine/router_llm.py; docs/manual.md "The LLM router"): asked only when
    # the deterministic router is ambiguous or below threshold, to choose among the surviving
    # candidates. Off unless `llm_url` is set: the deterministic router is the embedded default.
    llm_url: str | None = None  # an OpenAI-compatible API base, e.g. http://127.0.0.1:11434/v1 (Ollama)
    llm_model: str | None = None  # required with llm_url (llama.cpp's server accepts any name)
    llm_api_key: SecretStr | None = None  # sent as a bearer token (OpenAI; local servers need none)
    llm_temperature: float = Field(default=0.0, ge=0, le=2)
    llm_max_tokens: int = Field(default=256, gt=0)
    llm_timeout_s: float = Field(default=5.0, gt=0)  # the whole call; past it the fallback answers
    # auto: send the answer's JSON schema as response_format json_schema (OpenAI, vLLM, Ollama,
    # llama-server); if the server refuses it, as json_object with a schema (llama-cpp-python's
    # server); if that is refused too, plain prompts from then on. json_schema, json_object: always
    # that one; off: never a schema (gateway/llm/client.py)
    llm_structured_output: Literal["auto", "json_schema", "json_object", "off"] = "auto"
    llm_prompts_dir: Path = Field(default_factory=resources.llm_prompts_dir)  # system.txt and user.txt
    # when the LLM gives no usable answer: say_again (treat the words as not understood) or
    # deterministic (take what the deterministic router alone would take)
    llm_fallback: Literal["say_again", "deterministic"] = "say_again"
    # the briefing assistant (assistant/, gateway/api/assistant.py; docs/assistant.md): POST
    # /api/aviation-agent/chat[/stream]. One JSONL conversation log per day in assistant_log_dir.
    assistant_enabled: bool = True
    assistant_log_dir: Path | None = None  # None: "assistant-logs" beside sqlite_path
    assistant_max_message_chars: int = Field(default=2000, gt=0)
    assistant_rules_path: Path | None = None  # None: the copy shipped in assistant/data/rules.json
    # the assistant's LLM path (assistant/llm.py): on when llm_url/llm_model are set and this is
    # true; the planner asks the model for a plan, the formatter words (and streams) the answer.
    # Behaviour (prompts, temperature) is in assistant_llm_config, a JSON file with prompt files.
    assistant_llm: bool = True
    assistant_llm_timeout_s: float = Field(default=20.0, gt=0)  # one model call; past it: deterministic
    assistant_llm_config: Path | None = None  # None: assistant/prompts/config.json

    @field_validator("sqlite_path")
    @classmethod
    def _expand(cls, path: Path) -> Path:
        return path.expanduser()

    @field_validator("api_keys", "ws_origins", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        """``a,b`` in the environment (JSON lists work too)."""
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return [part.strip() for part in text.split(",") if part.strip()]
        return value

    @field_validator("webrtc_ice_servers", mode="before")
    @classmethod
    def _ice_servers(cls, value: Any) -> Any:
        """``stun:a:3478,turn:b`` or a JSON list of URLs and {urls, username, credential} objects."""
        if isinstance(value, str):
            text = value.strip()
            value = json.loads(text) if text.startswith("[") else [p.strip() for p in text.split(",") if p.strip()]
        if isinstance(value, list):
            return [{"urls": item} if isinstance(item, str) else item for item in value]
        return value

    @model_validator(mode="after")
    def _llm_model_given(self) -> "Settings":
        if self.llm_url and not self.llm_model:
            raise ValueError("LIVEFREQ_LLM_URL is set but LIVEFREQ_LLM_MODEL is not: name the model to ask")
        return self

    @property
    def auth_enabled(self) -> bool:
        return bool(self.api_keys) or self.api_keys_file is not None
