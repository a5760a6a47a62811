"""JSON messages within the data channel's size limit: long ones go as `fragment` messages.

An SCTP message larger than what the other side announced (`max-message-size` in its SDP; 64 KiB
when it says nothing, 256 KiB in today's browsers) is refused by the sender or breaks the channel,
and a decision with its trace can pass 64 KiB. So a JSON message over `MAX_MESSAGE_BYTES` (16 KiB,
the size every WebRTC stack has always accepted) is cut into pieces, each sent as

    {"type": "fragment", "id": 7, "index": 0, "count": 3, "data": "<a slice of the JSON text>"}

in order on the (ordered, reliable) channel; the receiver joins the `data` of `count` pieces with
the same `id` and reads the result as the message. Pure Python, no WebRTC import: the client
library and the browser client (static/js/webrtc.js) do the same.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

__all__ = ["MAX_MESSAGE_BYTES", "FragmentError", "Reassembler", "fragment"]

MAX_MESSAGE_BYTES = 16 * 1024
# A slice is escaped again inside the envelope (each `"` and `\` of the JSON text doubles), so a
# slice of at most half the limit, less the envelope, always fits.
_SLICE_BYTES = MAX_MESSAGE_BYTES // 2 - 256
MAX_FRAGMENTS = 512  # 4 MiB of JSON: no message of ours comes near; a bound for the receiver
_ids = itertools.count(1)


class FragmentError(ValueError):
    """A `fragment` message out of order, malformed, or past the bounds."""


def fragment(text: str, limit: int = MAX_MESSAGE_BYTES) -> Iterator[str]:
    """`text` itself when its UTF-8 fits in `limit` bytes, else its `fragment` messages."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        yield text
        return
    size = max(64, min(_SLICE_BYTES, limit // 2 - 256))
    pieces: list[str] = []
    start = 0
    while start < len(data):
        end = min(start + size, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:  # never cut inside a character
            end -= 1
        pieces.append(data[start:end].decode("utf-8"))
        start = end
    ident = next(_ids)
    for index, piece in enumerate(pieces):
        yield json.dumps(
            {"type": "fragment", "id": ident, "index": index, "count": len(pieces), "data": piece},
            separators=(",", ":"),
            ensure_ascii=False,
        )


class Reassembler:
    """Feed every received text message; get back whole messages (None while a fragmented one
    is incomplete)."""

    def __init__(self, max_fragments: int = MAX_FRAGMENTS) -> None:
        self.max_fragments = max_fragments
        self._id: int | None = None
        self._pieces: list[str] = []
        self._count = 0
        self.received = 0  # fragment messages received

    def feed(self, text: str) -> str | None:
        if not text.startswith('{"type":"fragment"'):
            return text
        try:
            envelope = json.loads(text)
            ident, index, count, data = envelope["id"], envelope["index"], envelope["count"], envelope["data"]
        except (ValueError, KeyError, TypeError) as exc:
            raise FragmentError(f"malformed fragment: {exc}") from exc
        self.received += 1
        if not isinstance(data, str) or not isinstance(count, int) or not 0 < count <= self.max_fragments:
            raise FragmentError("a fragment needs string data and a count of 1 to %d" % self.max_fragments)
        if index == 0:
            self._id, self._pieces, self._count = ident, [], count
        if ident != self._id or index != len(self._pieces) or count != self._count:
            self._id, self._pieces = None, []
            raise FragmentError(f"fragment {ident}/{index} out of order")
        self._pieces.append(data)
        if len(self._pieces) < count:
            return None
        whole = "".join(self._pieces)
        self._id, self._pieces = None, []
        return whole
