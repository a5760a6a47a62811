"""Measure checking the issued values against the audio, on right readbacks asked again (not a test).

Usage (from the repository root, after a voice bench wrote REPORT):
    PYTHONPATH=. python scripts/measure_forced_choice.py reports/bench-readback-voice-seed9.json [LIMIT]

For the first LIMIT (default 30) right readbacks of REPORT that the current engine asks again,
the pilot's recording is made again (the bench's own seeded voice, noise and channel) and
whisper tiny.en scores, token by token (CTranslate2 `Whisper.align` on one encoding), the
pilot's *own words* against every text one word away: each digit word, phonetic letter or
runway side replaced by another of its class. That is an upper bound: the radio never has the
pilot's words, only a garbled transcript to build such a frame from. Prints, per readback, the
issued words' margin (log-probability) over the best neighbour and the CPU cost, then how many
margins clear 0, 0.5, 1, 2 and 3. Measured on seed 9 (2026-11-26): 16 of 30 above 0, 15 above 1,
about 94 candidates and 4.9 s of CPU per readback (docs/performance.md, "Tried and not shipped").
"""

from __future__ import annotations

import json
import math
import random
import sys
import time

import numpy as np

from engine.hearing import Hearing
from gateway.audio.pcm import pcm_to_float32
from gateway.speech.stt.whisper import WhisperEngine
from gateway.speech.stt.whisper_windows import max_new_tokens
from tooling.bench.readback import default_bench, verdict
from tooling.bench.readback_voice import pilot_recording, pilot_voices

DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
ICAO_DIGITS = {"tree": "three", "fife": "five", "niner": "nine", "fower": "four"}
SIDES = ["left", "right", "center"]
LETTERS = (
    "alfa bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec "
    "romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()


def neighbours(words: list[str]) -> list[list[str]]:
    """Every text one word away from `words`: a digit, letter or side replaced by another of its class."""
    out: list[list[str]] = []
    for i, word in enumerate(words):
        pool = next((p for p in (DIGITS, SIDES, LETTERS) if word in p), None)
        for other in pool or ():
            if other != word:
                out.append([*words[:i], other, *words[i + 1 :]])
    return out


def main(path: str, limit: int) -> None:
    import ctranslate2

    bench = default_bench()
    report = json.load(open(path))
    cases = bench.cases(report["n"], report["seed"], report["wrong_share"], forms="speech")
    voices = pilot_voices()
    engine = WhisperEngine()
    engine.load()
    tokenizer, model = engine.tokenizer(), engine._model.model
    margins: list[float] = []
    cpu_encode = cpu_align = candidates = 0.0
    for row in report["bias_on"]["transmissions"]:
        case = cases[row["index"]]
        if case.readback.mode != "correct":
            continue
        open_transcript = row.get("first_heard") if row.get("first_heard") != row["heard"] else None
        hearing = Hearing(confidence=row["confidence"], alternatives=row["alternatives"] or [], open_transcript=open_transcript)
        if verdict(bench.decide(case, row["heard"], hearing)[0]) != "say_again":
            continue
        if len(margins) >= limit:
            break
        rng = random.Random(f"{report['seed']}:voice:{case.index}")
        pcm, made = pilot_recording(case.readback.text, rng, voices, report.get("voices", {}).get("channel", "band"))
        samples = pcm_to_float32(pcm)
        words = [ICAO_DIGITS.get(w, w) for w in (w.strip(",.").lower() for w in case.readback.text.split())]
        texts = [words, *neighbours(words)]
        started = time.process_time()
        item = engine.window_input(samples, engine.prompt_tokens(None), max_new_tokens(len(samples)))
        encoded = np.array(model.encode(ctranslate2.StorageView.from_array(item.features[None])))
        encoded_at = time.process_time()
        tokens = [tokenizer.encode(" " + " ".join(t)) for t in texts]
        batch = ctranslate2.StorageView.from_array(np.repeat(encoded, len(tokens), axis=0))
        start = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
        results = model.align(batch, start, tokens, [item.features.shape[-1]] * len(tokens))
        aligned_at = time.process_time()
        scores = [sum(math.log(max(p, 1e-9)) for p in r.text_token_probs) for r in results]
        margin = scores[0] - max(scores[1:], default=-math.inf)
        margins.append(margin)
        cpu_encode += encoded_at - started
        cpu_align += aligned_at - encoded_at
        candidates += len(texts)
        print(f"{made['voice']:28s} margin {margin:7.2f}  candidates {len(texts):3d}  {case.readback.text}")
    n = len(margins)
    if not n:
        print("no right readback asked again in", path)
        return
    print(f"\n{n} readbacks: {candidates / n:.0f} candidates, encode {1000 * cpu_encode / n:.0f} ms, "
          f"align {1000 * cpu_align / n:.0f} ms of CPU per readback")
    for least in (0, 0.5, 1, 2, 3):
        print(f"issued words ahead by >= {least}: {sum(m >= least for m in margins)} of {n}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 30)
