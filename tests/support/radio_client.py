"""The protocol-v1 WebSocket client for tests: `tooling.voicekit.RadioClient` (records every event
and audio frame in order, with arrival times), shared with the voice benchmark."""

from tooling.voicekit import RadioClient, Received

__all__ = ["RadioClient", "Received"]
