"""A pilot in a process of its own that keys the mic over WebRTC and talks until it is killed.

    python -m tests.support.webrtc_pilot http://127.0.0.1:PORT

Prints one JSON line once it is mid-transmission (`session_id`, `resume_token`, audio frames the
gateway received are the test's business), then goes on sending audio. tests/test_webrtc.py
kills it with SIGKILL: a peer that vanishes without closing anything, as a crashed plugin does.
"""

from __future__ import annotations

import asyncio
import json
import sys

import numpy as np

from gateway.client.webrtc import WebRTCRadioClient

RATE = 48000


def tone(seconds: float) -> bytes:
    """A warbling tone: sound the gateway's recognizer gets, nothing it needs to understand."""
    t = np.arange(int(RATE * seconds)) / RATE
    return (8000 * np.sin(2 * np.pi * (300 + 200 * np.sin(2 * np.pi * 3 * t)) * t)).astype(np.int16).tobytes()


async def main(url: str) -> None:
    client = await WebRTCRadioClient.connect(url, ping_every_s=0.5)
    started = await client.start(flow="clearance", seed=7)
    await client.ptt_down()
    await client.mic.write(tone(1.0))
    await client.mic.drained()
    print(json.dumps({"session_id": started["session_id"], "resume_token": started["resume_token"]}), flush=True)
    while True:  # talk on until killed
        await client.mic.write(tone(1.0))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
