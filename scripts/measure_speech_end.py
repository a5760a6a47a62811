"""Measure where `gateway.audio.vad.SpeechEnd` cuts the readback bench's recordings (not a test).

Usage (from the repository root):
    PYTHONPATH=. python scripts/measure_speech_end.py [--n 80] [--channel band|radio]
        [--snr 5,15] [--above-floor-db 3] [--mode 2] [--out FILE.json]

The recordings are the voice bench's own (`tooling.bench.readback_voice.pilot_recording`:
espeak-ng, flite and Kokoro pilots, headset noise at the given SNR, the VHF band or the full radio
effect). For each, the synthesizer's last sound (the last sample above 1 % of its peak, before
noise) is the end of the words; the cut must fall after it, or a word would be lost. Prints how
far after it the cut falls (minimum, 5th percentile, median), how many cuts fall before it, and
how much audio after the words the cut removes; `--out` writes every recording's row as JSON.
"""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

import numpy as np

import tooling.bench.readback_voice as voice
from gateway.audio.vad import SpeechEnd
from tooling.bench.readback import default_bench

LEAD_S = 0.3  # pilot_recording's silence before the words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=80)
    parser.add_argument("--seed", type=int, default=91)
    parser.add_argument("--channel", choices=("band", "radio"), default="band")
    parser.add_argument("--snr", default="15,30", help="MIN,MAX headset SNR in dB (the bench's: 15,30)")
    parser.add_argument("--above-floor-db", type=float, default=3.0)
    parser.add_argument("--mode", type=int, default=2, help="webrtcvad aggressiveness")
    parser.add_argument("--out")
    args = parser.parse_args()

    words_end: dict[str, float] = {}

    def tracked(speak: Any) -> Any:
        def speaking(*a: Any, **k: Any) -> Any:
            made = speak(*a, **k)
            loud = np.abs(np.frombuffer(made[0], np.int16).astype(np.float32))
            sounding = np.nonzero(loud > 0.01 * (loud.max() or 1.0))[0]
            words_end["s"] = LEAD_S + ((sounding[-1] + 1) / made[1] if sounding.size else 0.0)
            return made

        return speaking

    voice.speak_espeak = tracked(voice.speak_espeak)
    voice.speak_flite = tracked(voice.speak_flite)
    voice._speak_kokoro = tracked(voice._speak_kokoro)
    low, high = (float(v) for v in args.snr.split(","))
    voice.SNR_DB = (low, high)

    rows = []
    for case in default_bench().cases(args.n, args.seed, 0.3, forms="speech"):
        pcm, made = voice.pilot_recording(
            case.readback.text, random.Random(f"{args.seed}:{case.index}"), channel=args.channel
        )
        end = SpeechEnd(above_floor_db=args.above_floor_db, aggressiveness=args.mode)
        end.feed(pcm)
        cut_s = end.spoken_bytes(len(pcm)) / 32000
        rows.append(
            {
                "voice": made["voice"],
                "snr_db": made["snr_db"],
                "after_words_s": round(cut_s - words_end["s"], 3),
                "removed_s": round(len(pcm) / 32000 - cut_s, 3),
            }
        )
    after = np.array([r["after_words_s"] for r in rows])
    removed = np.array([r["removed_s"] for r in rows])
    print(f"{args.n} recordings, {args.channel}, SNR {low:g}-{high:g} dB", end=", ")
    print(f"floor {args.above_floor_db:g} dB, mode {args.mode}")
    print(f"  cut after the words: min {after.min():.3f} s", end=", ")
    print(f"p5 {np.percentile(after, 5):.3f} s, median {np.median(after):.3f} s")
    print(f"  cuts into the words: {int((after < 0).sum())}")
    print(f"  audio removed after the words: median {np.median(removed):.3f} s, max {removed.max():.3f} s")
    if args.out:
        with open(args.out, "w") as out:
            json.dump({"args": vars(args), "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
