"""One pilot's live radio, whatever transport carries it (gateway/ws, gateway/webrtc adapt it).

- protocol.py: what the client sends (one model per message type); events.py: what the gateway
  sends (one model per event type, schema in docs/protocol-events.json, schema.py writes it);
- connection.py: a connection's protocol state and its way out (rate limits in limits.py, the
  bounded send queue in outbox.py, the transport contract in transport.py);
- session.py: the session attached to a connection, its decisions out; link.py its state;
- pipeline.py: the pilot's transmissions (audio in, recognition, the engine's decision);
  speculation.py: the likely reply synthesized ahead (from session start, and while the pilot talks);
- frequency.py: a named frequency its receivers are tuned to; playout.py: one receiver's
  controller messages on air; atis.py: the ATIS loop while tuned to an ATIS frequency.

Nothing here imports a transport: the arrows run from gateway/ws and gateway/webrtc to here.
"""
