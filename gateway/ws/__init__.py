"""The radio over a WebSocket (`WS /v1/radio`): a thin adapter over gateway/radio."""
