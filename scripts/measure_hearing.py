"""Measure whisper's n-best, word confidence cost and prompt bias on wrong readbacks (not a test).

Usage (from the repository root): PYTHONPATH=. python scripts/measure_hearing.py [--quick]

Synthesizes readbacks where one value differs from the expected one (piper pilot voice through
the radio effect at levels 3-5, and espeak-ng en-us, a voice the product does not speak with),
transcribes each with the biased prompt and without, and counts how often the heard value is
the expected one instead of the spoken one. Also times decoding with and without n-best scores
and token probabilities, and prints the n-best score margins of right and wrong readbacks.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import sys
import time

import numpy as np

from engine.phraseology import normalize_transcript
from gateway.audio.resample import resample
from gateway.speech.stt.base import SttContext
from gateway.speech.stt.whisper import WhisperEngine, build_prompt
from gateway.speech.tts.espeak import EspeakTts
from tooling.voicekit import pilot_pcm

# (expected phrase as templates render it, vocabulary values, right readback, wrong readback,
#  expected value as normalized, spoken wrong value as normalized)
CASES = [
    ("DLH359, runway 25R, cleared for takeoff", ["25R"], "Runway 25R, cleared for takeoff, DLH359", "Runway 25L, cleared for takeoff, DLH359", "25 r", "25 l"),
    ("Runway 07L, cleared to land, BAW12", ["07L"], "Runway 07L, cleared to land, BAW12", "Runway 07R, cleared to land, BAW12", "07 l", "07 r"),
    ("Climb flight level 120, DLH359", ["FL120"], "Climb flight level 120, DLH359", "Climb flight level 100, DLH359", "120", "100"),
    ("Climb flight level 240, AFR44", ["FL240"], "Climb flight level 240, AFR44", "Climb flight level 230, AFR44", "240", "230"),
    ("QNH 1004, DLH359", ["1004"], "QNH 1004, DLH359", "QNH 1005, DLH359", "1004", "1005"),
    ("QNH 1013, BAW12", ["1013"], "QNH 1013, BAW12", "QNH 1012, BAW12", "1013", "1012"),
    ("QNH 1004, AFR44", ["1004"], "QNH 1004, AFR44", "QNH 1014, AFR44", "1004", "1014"),
    ("Squawk 4721, DLH359", ["4721"], "Squawk 4721, DLH359", "Squawk 4712, DLH359", "4721", "4712"),
    ("Squawk 7352, BAW12", ["7352"], "Squawk 7352, BAW12", "Squawk 7362, BAW12", "7352", "7362"),
    ("Turn left heading 270, DLH359", ["270"], "Turn left heading 270, DLH359", "Turn left heading 250, DLH359", "270", "250"),
    ("Fly heading 090, AFR44", ["090"], "Heading 090, AFR44", "Heading 080, AFR44", "090", "080"),
    ("Contact tower 118.7, DLH359", ["118.7"], "Tower 118.7, DLH359", "Tower 118.9, DLH359", "118.7", "118.9"),
    ("Contact ground 121.8, BAW12", ["121.8"], "Ground 121.8, BAW12", "Ground 121.9, BAW12", "121.8", "121.9"),
    ("Contact departure 125.35, AFR44", ["125.35"], "Departure 125.35, AFR44", "Departure 125.25, AFR44", "125.35", "125.25"),
    ("Descend altitude 4000 feet, DLH359", ["4000"], "Descend altitude 4000 feet, DLH359", "Descend altitude 3000 feet, DLH359", "4000", "3000"),
    ("Turn right heading 300, BAW12", ["300"], "Turn right heading 300, BAW12", "Turn left heading 300, BAW12", "right", "left"),
    ("Information Bravo, QNH 1019, DLH359", ["B", "1019"], "Information Bravo, QNH 1019, DLH359", "Information Charlie, QNH 1019, DLH359", "bravo", "charlie"),
    ("Reduce speed 180 knots, AFR44", ["180"], "Speed 180 knots, AFR44", "Speed 170 knots, AFR44", "180", "170"),
    ("Climb flight level 80, DLH359", ["FL80"], "Climb flight level 80, DLH359", "Descend flight level 80, DLH359", "climb", "descend"),
    ("Hold short runway 27, BAW12", ["27"], "Holding short runway 27, BAW12", "Holding short runway 22, BAW12", "27", "22"),
]
TELEPHONY = {"DLH359": "Lufthansa", "BAW12": "Speedbird", "AFR44": "Air France"}


def context_of(case) -> SttContext:
    expected, values = case[0], case[1]
    call = next(c for c in TELEPHONY if c in expected)
    return SttContext(expected_phrases=[expected], vocabulary=[TELEPHONY[call], call, *values], speaker="m")


_espeak = EspeakTts()


def espeak_pcm(phrase: str) -> bytes:
    from engine.phraseology import speak_text

    pcm = asyncio.run(_espeak.synthesize(speak_text(phrase)))
    pad = np.zeros(3200, dtype=np.int16).tobytes()
    return pad + resample(pcm, _espeak.sample_rate, 16000) + pad


VOICES = {
    "piper-l3": lambda p: pilot_pcm(p, radio_level=3, seed=3),
    "piper-l4": lambda p: pilot_pcm(p, radio_level=4, seed=4),
    "piper-l5": lambda p: pilot_pcm(p, radio_level=5, seed=5),
    "espeak": espeak_pcm,
}


def heard_value(text: str, expected: str, wrong: str) -> str:
    norm = " " + re.sub(r"[^\w. ]", " ", normalize_transcript(text)) + " "
    norm = norm.replace(" right ", " r ").replace(" left ", " l ")
    exp = expected.replace("right", "r").replace("left", "l")
    wr = wrong.replace("right", "r").replace("left", "l")
    e, w = f" {exp} " in norm, f" {wr} " in norm
    return "expected" if e and not w else "spoken" if w and not e else "both" if e and w else "other"



def decode(engine: WhisperEngine, pcm: bytes, prompt: str | None, *, beam: int, nbest: int, align: str | None):
    """Like WhisperEngine._decode_window, with n-best scores and an optional align pass
    ("prompt": conditioned on the prompt, "plain": on the start sequence only)."""
    import ctranslate2
    from faster_whisper.tokenizer import Tokenizer
    from faster_whisper.transcribe import get_suppressed_tokens

    from gateway.audio.pcm import pcm_to_float32

    model = engine._model
    samples = pcm_to_float32(pcm)
    t0 = time.perf_counter()
    window = -(-(len(samples) + 16000) // 8000) * 8000
    padded = np.zeros(window, dtype=np.float32)
    padded[: len(samples)] = samples
    features = model.feature_extractor(padded, padding=0)[:, : window // 160]
    tok = Tokenizer(model.hf_tokenizer, False, task="transcribe", language="en")
    start = [*tok.sot_sequence, tok.no_timestamps]
    tokens = ([tok.sot_prev, *tok.encode(" " + prompt.strip())] if prompt else []) + start
    view = ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None], dtype=np.float32))
    if align:
        view = model.model.encode(view, to_cpu=False)
    r = model.model.generate(
        view, [tokens], beam_size=beam, num_hypotheses=nbest, return_scores=True,
        max_length=len(tokens) + 12 + int(8 * len(samples) / 16000), suppress_blank=True,
        suppress_tokens=list(get_suppressed_tokens(tok, [-1])), return_no_speech_prob=True,
    )[0]
    seqs = [[t for t in s if t < tok.eot] for s in r.sequences_ids]
    probs = None
    if align and seqs[0]:
        a = model.model.align(view, tokens if align == "prompt" else start, [seqs[0]], [window // 160])[0]
        probs = list(zip([tok.decode([t]) for t in seqs[0]], a.text_token_probs))
    elapsed = time.perf_counter() - t0
    return [tok.decode(s).strip() for s in seqs], list(r.scores), probs, elapsed


def value_prob(probs, value_words: set[str]) -> float | None:
    """Lowest probability among tokens that start a value word."""
    got = [p for t, p in probs or [] if t.strip().lower().strip(",.") in value_words]
    return min(got) if got else None


VALUE_WORDS = {"zero", "one", "two", "three", "tree", "four", "five", "fife", "six", "seven", "eight", "nine", "niner",
               "left", "right", "climb", "descend", "bravo", "charlie", "decimal"}


def main() -> None:
    quick = "--quick" in sys.argv
    engine = WhisperEngine(num_workers=1)
    engine.load()
    cases = CASES[:5] if quick else CASES
    heard = {"prompt": [], "none": []}
    timing: dict[str, list[float]] = {}
    rows = []
    for case in cases:
        prompt = build_prompt(context_of(case))
        for voice, make in VOICES.items():
            for kind, phrase in (("right", case[2]), ("wrong", case[3])):
                pcm = make(phrase)
                out = {}
                for mode, p, beam, nb, al in (
                    ("base", prompt, 2, 1, None), ("nbest2", prompt, 2, 2, None), ("nbest3", prompt, 3, 3, None),
                    ("align-prompt", prompt, 2, 2, "prompt"), ("align-plain", prompt, 2, 2, "plain"), ("none", None, 2, 2, None),
                ):
                    out[mode] = decode(engine, pcm, p, beam=beam, nbest=nb, align=al)
                    timing.setdefault(mode, []).append(out[mode][3])
                if kind == "wrong":
                    heard["prompt"].append(heard_value(out["base"][0][0], case[4], case[5]))
                    heard["none"].append(heard_value(out["none"][0][0], case[4], case[5]))
                rows.append((case, voice, kind, out))
        print(".", end="", flush=True)
    print()
    for label, results in heard.items():
        counts = {k: results.count(k) for k in ("spoken", "expected", "both", "other")}
        print(f"wrong readbacks, prompt={label}: n={len(results)} heard {counts}")
    for mode, ts in timing.items():
        print(f"decode {mode}: median {statistics.median(ts) * 1000:.0f} ms, mean {statistics.mean(ts) * 1000:.0f} ms, n={len(ts)}")
    print("per clip: kind voice | best heard | n-best (beam 2/3) score margins and heard values | lowest value-token prob (prompt / plain)")
    for case, voice, kind, out in rows:
        best = heard_value(out["base"][0][0], case[4], case[5]) if kind == "wrong" else heard_value(out["base"][0][0], case[4], case[4] + "#")
        alts = []
        for mode in ("nbest2", "nbest3"):
            texts, scores = out[mode][0], out[mode][1]
            alts.append(" ".join(f"{scores[0] - s:.2f}:{heard_value(t, case[4], case[5])[:3]}" for t, s in zip(texts[1:], scores[1:])))
        vp, vq = value_prob(out["align-prompt"][2], VALUE_WORDS), value_prob(out["align-plain"][2], VALUE_WORDS)
        print(f"  {kind:5} {voice:8} {case[3 if kind == 'wrong' else 2][:38]:38} | {best:8} | {alts[0]:14} | {alts[1]:26} | "
              f"{vp if vp is None else round(vp, 3)} / {vq if vq is None else round(vq, 3)} | {out['base'][0][0]!r}")


if __name__ == "__main__":
    main()
