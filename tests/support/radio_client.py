"""The protocol-v1 WebSocket client for tests: `gateway.voicekit.RadioClient` (records every event
and audio frame in order, with arrival times), shared with the voice benchmark."""

from gateway.voicekit import RadioClient, Received

__all__ = ["RadioClient", "Received"]
