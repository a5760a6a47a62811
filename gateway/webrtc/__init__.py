"""The radio over WebRTC (aiortc): signalling over HTTP, Opus tracks both ways, protocol v1 on a
data channel, feeding the same `RadioConnection` as the WebSocket (docs/protocol-v1.md, "WebRTC").

`signaling` (routes and the peer registry), `peer` (one peer connection as a transport), `tracks`
(the paced controller track, the microphone's conversion), `fragments` (JSON within the SCTP
message size; pure, shared with the client library).
"""
