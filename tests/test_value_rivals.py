"""A frequency written short is confirmed only where its rival, the last digit said twice, is not
what the audio says (engine/value_rivals.py): held-out seed 114 by voice, 136.550 said ("point fife
fife") for 136.500, written "point five" in every hearing and accepted. And a clearance limit heard
as issued only where no other city is: held-out seed 119, "to Oslo" written "to Dusseldorf"."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.hearing import ValueCheck
from engine.models import ReadbackResult
from engine.value_check import FLOOR, MARGIN, apply_checks
from engine.value_query import query
from engine.value_rivals import (
    CITY_TEMPOS,
    LIMIT_RIVALS,
    RIVAL_SLACK,
    RIVAL_TEMPOS,
    rival_allows,
    rival_value,
    short_frequencies,
    written_short,
)
from engine.value_words import words_of
from gateway.speech.stt.whisper import WhisperEngine
from gateway.speech.stt.whisper_scoring import TEMPOS
from gateway.speech.stt.whisper_scoring import check_values as score_values
from tests.support.pilot_audio import espeak_pcm

WHOLE = st.integers(118, 136).map(str)
DECIMALS = st.text("0123456789", min_size=3, max_size=3)
DIGIT_WORDS = "zero one two three four five six seven eight nine".split()


@given(whole=WHOLE, decimals=DECIMALS, cut=st.integers(1, 3))
def test_a_frequency_is_written_short_only_below_three_decimals_ending_in_no_zero(
    whole: str, decimals: str, cut: int
) -> None:
    """Short: fewer than three decimals, the issued ones padded with zeros, the last no zero (a
    zero said twice says the same frequency). Its rival differs from it in the next decimal only."""
    value, word = f"{whole}.{decimals}", f"{whole}.{decimals[:cut]}"
    issued_short = decimals[cut:] == "0" * (3 - cut)
    assert written_short(word, value) == (cut < 3 and issued_short and decimals[cut - 1] != "0")
    if written_short(word, value):
        rival = rival_value(value, cut)
        assert rival != value and rival[: len(word)] == word and rival[len(word)] == decimals[cut - 1]
    assert not written_short(f"{whole}.{decimals}", value)  # all three decimals: nothing lost
    assert not written_short(whole, value)  # no decimals written: another rule (no decimal word)


@given(whole=WHOLE, first=st.sampled_from("123456789"), hearings=st.permutations([0, 1, 2]))
def test_the_rival_is_tried_in_the_shortest_hearing_that_wrote_it_short(
    whole: str, first: str, hearings: list[int]
) -> None:
    value = f"{whole}.{first}00"
    spoken = " ".join(DIGIT_WORDS[int(d)] for d in whole)
    short = f"tower {spoken} decimal {DIGIT_WORDS[int(first)]} runway zero seven"
    full = f"tower {spoken} decimal {DIGIT_WORDS[int(first)]} zero zero runway zero seven"
    garbled = f"tower {spoken} decimal. I've I've runway zero seven"
    transcripts = [(short, full, garbled)[i] for i in hearings]
    fields = {"tower_freq": ("frequency", value), "runway": ("runway", "07C")}
    assert short_frequencies(transcripts, fields) == {"tower_freq": short}
    assert short_frequencies([full, garbled], fields) == {}
    looped = f"{short}. {short}"  # whisper's loop (seed 103): nothing is said after its first copy
    assert short_frequencies([looped, *transcripts], fields) == {"tower_freq": short}


def test_the_rival_is_asked_in_that_hearings_words_against_the_value_said_once() -> None:
    fields = {"tower_freq": ("frequency", "136.500")}
    heard = "Roger tower one three six point. I've I've runway zero seven centers."
    short = "Roger tower one three six point five runway zero seven center."
    asked = query(heard, fields, rivals={"tower_freq": short})
    assert asked is not None
    rivals = [h for h in asked.hypotheses if h.rival]
    assert len(rivals) == 1 and all(h.value == "136.550" and not h.appended for h in rivals)
    # said once as the recognizer wrote it (seed 106: in another spelling a right "decimal seven"
    # scored its rival +2.2, as written -7.9): at most the decimal word spelt otherwise
    against, written = rivals[0].against, words_of(short)
    assert len(against) == len(written) and sum(a != w for a, w in zip(against, written, strict=True)) <= 1
    for h in rivals:
        last = h.slots[-1]
        assert h.words[last.word] == h.words[last.word - 1] and h.slots[-2].word == last.word - 1
        # said once, in the short hearing's words: the rival's words less the doubled one
        assert h.against == [*h.words[: last.word], *h.words[last.word + 1 :]]
        assert "i've" not in h.against and h.against[:2] == ["roger", "tower"]
        assert h.against[-4:] == words_of(short)[-4:]
    plain = query(heard, fields)  # nothing written short: no rival asked
    assert plain is not None and not any(h.rival for h in plain.hypotheses)


def _rival(delta: float, tempo: float, lowest: float = -1.0) -> ValueCheck:
    """A rival check of 136.500 written short: 136.550, the last digit said twice."""
    return ValueCheck(
        field="tower_freq", value="136.550", margin=3.0, lowest=lowest, delta=delta, tempo=tempo, rival=True
    )


RIVALS = st.lists(st.tuples(st.floats(-30.0, 12.0), st.floats(-12.0, 0.0)), min_size=0, max_size=len(TEMPOS))


def _allowed(rivals: list[tuple[float, float]]) -> bool:
    """Scored at `RIVAL_TEMPOS` tempos at least, and at none said: within `RIVAL_SLACK` of the
    value said once with every symbol at `FLOOR` or likelier."""
    return len(rivals) >= RIVAL_TEMPOS and not any(d >= -RIVAL_SLACK and lo >= FLOOR for d, lo in rivals)


@given(deltas=RIVALS, margin=st.floats(MARGIN, 8.0))
def test_a_short_frequency_is_confirmed_only_where_its_rival_allows(
    deltas: list[tuple[float, float]], margin: float
) -> None:
    """The issued check passing, a value some hearing wrote short is confirmed only where its
    rival allows; a field no hearing wrote short ignores rival checks."""
    issued = ValueCheck(field="tower_freq", value="136.500", margin=margin, lowest=-1.0, delta=0.0)
    rivals = [_rival(d, TEMPOS[i], lowest=lo) for i, (d, lo) in enumerate(deltas)]
    rb = ReadbackResult(ok=False, fields={"tower_freq": "unsure"}, unsure=["tower_freq"])
    fields = {"tower_freq": ("frequency", "136.500")}
    allowed = _allowed(deltas)
    assert rival_allows("tower_freq", rivals, FLOOR) == allowed
    short, notes = apply_checks(rb, [issued, *rivals], fields, rivals={"tower_freq"})
    assert short.fields["tower_freq"] == ("ok" if allowed else "unsure")
    assert sum(1 for n in notes if n.get("rival")) == len(deltas)  # each rival in the trace
    plain, _ = apply_checks(rb, [issued, *rivals], fields)
    assert plain.fields["tower_freq"] == "ok"
    if not allowed:  # what the audio held against the issued value: its own check, no rival's
        assert short.margins == {"tower_freq": {"first in place": margin}}


@given(deltas=RIVALS)
def test_a_frequency_heard_right_but_written_short_is_confirmed_by_its_rival_alone(
    deltas: list[tuple[float, float]],
) -> None:
    """Heard as issued by the best transcript, only written short (`ReadbackResult.rivalled`): no
    check of the issued value is asked (it was heard), the rival alone decides; without rival
    checks (the recognizer could not check, or no CPU worker was free) it is asked again."""
    rivals = [_rival(d, TEMPOS[i], lowest=lo) for i, (d, lo) in enumerate(deltas)]
    rb = ReadbackResult(ok=False, fields={"tower_freq": "unsure"}, unsure=["tower_freq"], rivalled=["tower_freq"])
    result, notes = apply_checks(rb, rivals, {"tower_freq": ("frequency", "136.500")})
    allowed = _allowed(deltas)
    assert result.fields["tower_freq"] == ("ok" if allowed else "unsure") and result.ok == allowed
    assert ("tower_freq" in result.confirmed) == allowed
    assert any(n.get("by") == "rival" for n in notes) == allowed  # the trace says what confirmed it


def test_by_voice_a_frequency_written_short_is_rivalled_and_only_its_rival_is_asked() -> None:
    from engine.doubt import Doubt
    from engine.readback import ReadbackEvaluator
    from tooling.flow_scripts import SCRIPT_SCENARIO

    variables = {**SCRIPT_SCENARIO, "tower_freq": "136.500"}
    said = "Lufthansa three five niner, tower one three six decimal five"
    by_voice = ReadbackEvaluator().evaluate(["tower_freq"], variables, said, spoken=True)
    assert by_voice.fields == {"tower_freq": "unsure"} and by_voice.rivalled == ["tower_freq"]
    assert by_voice.why["tower_freq"].kind == Doubt.RIVALS and "rivals are checked" in by_voice.why["tower_freq"].text
    typed = ReadbackEvaluator().evaluate(["tower_freq"], variables, said)
    assert typed.ok and typed.rivalled == []
    full = ReadbackEvaluator().evaluate(["tower_freq"], variables, said + " zero zero", spoken=True)
    assert full.ok and full.rivalled == []
    fields = {"tower_freq": ("frequency", "136.500")}
    asked = query(said, fields, rivals={"tower_freq": said}, rivalled=["tower_freq"])
    assert asked is not None and asked.hypotheses and all(h.rival for h in asked.hypotheses)


def test_seed_114_the_rival_said_twice_keeps_136_550_from_being_accepted() -> None:
    """The checks the radio's chain made of held-out seed 114, index 172, at this fix (tiny.en):
    the issued value confirmed in place (margin 3.36), its rival likelier than said once at 0.83x,
    1.25x and 1.11x (+5.8, +10.1, +1.2)."""
    issued = ValueCheck(field="tower_freq", value="136.500", margin=3.356, lowest=-1.23, delta=3.381)
    recorded = zip((-2.205, 5.754, 10.133, 1.165), (-2.72, -1.311, -1.583, -2.107), TEMPOS, strict=True)
    rivals = [_rival(d, t, lowest=lo) for d, lo, t in recorded]
    rb = ReadbackResult(ok=False, fields={"tower_freq": "unsure"}, unsure=["tower_freq"])
    fields = {"tower_freq": ("frequency", "136.500")}
    assert apply_checks(rb, [issued], fields)[0].fields["tower_freq"] == "ok"  # before the fix
    assert apply_checks(rb, [issued, *rivals], fields, rivals={"tower_freq"})[0].fields["tower_freq"] == "unsure"


@pytest.mark.parametrize(("said", "allowed"), [("decimal five five", False), ("decimal five", True)])
def test_whisper_scores_the_rival_against_the_value_said_once(whisper: WhisperEngine, said: str, allowed: bool) -> None:
    """On real audio (espeak-ng, tiny.en): "decimal five five" said, the rival 136.550 is as
    likely as the short 136.5 or likelier; "decimal five" said, far less likely."""
    spoken = f"Scandinavian three seven two, tower one three six {said}, runway zero seven center"
    short = "Scandinavian three seven two, tower one three six decimal five, runway zero seven center"
    fields = {"tower_freq": ("frequency", "136.500")}
    asked = query(short, fields, rivals={"tower_freq": short})
    assert asked is not None
    checks = score_values(whisper, espeak_pcm(spoken), None, asked)
    rivals = [c for c in checks if c.rival]
    assert {c.tempo for c in rivals} == set(TEMPOS) and all(c.value == "136.550" for c in rivals)
    assert rival_allows("tower_freq", checks, FLOOR) == allowed, [(c.tempo, c.delta, c.lowest) for c in rivals]


def test_a_recorded_check_without_the_field_is_no_rival() -> None:
    """Voice runs recorded before the rival have checks without `rival`: read as checks of the
    issued value, so a frequency written short in them finds no rival and is asked again."""
    recorded = ValueCheck.model_validate(
        {"field": "tower_freq", "value": "136.500", "margin": 3.0, "lowest": -1.0, "delta": 0.0}
    )
    assert recorded.rival is False and not rival_allows("tower_freq", [recorded], FLOOR)


# The clearance limit: the prompt names the issued city, so it waits for its rivals (every other
# city the scenarios issue) scored without that name (engine/value_rivals.py).

CITY_CODES = {
    "EDDL": "Dusseldorf",
    "LOWW": "Vienna",
    "ENGM": "Oslo",
    "LIRF": "Rome",
    "LKPR": "Prague",
    "EGLL": "London",
}


def test_the_limit_rivals_are_the_cities_the_scenarios_issue() -> None:
    """`LIMIT_RIVALS` is the airport dataset's short name of each of `DESTINATIONS` (kept in
    the engine, which reads no dataset)."""
    from engine.airport import short_name
    from engine.scenario import DESTINATIONS
    from gateway.airports.repository import AirportRepository

    airports = AirportRepository()
    named = {short_name(a) for code in DESTINATIONS if (a := airports.get(code)) is not None}
    assert named == set(LIMIT_RIVALS) and len(LIMIT_RIVALS) == len(set(LIMIT_RIVALS))


@given(
    code=st.sampled_from(sorted(CITY_CODES)),
    before=st.lists(st.sampled_from(["cleared", "to", "via", "china", "eastern", "roger", "four"]), max_size=5),
    after=st.lists(st.sampled_from(["via", "colem", "squawk", "two", "wilco", "departure"]), max_size=5),
    alias=st.booleans(),
)
def test_each_other_city_is_tried_in_the_place_of_the_issued_one(
    code: str, before: list[str], after: list[str], alias: bool
) -> None:
    """For any transcript naming the issued city (or its alias) anywhere, the question holds one
    rival per other city of `LIMIT_RIVALS`, each the transcript with only that name changed,
    scored against the transcript as written without the prompt's name; the issued place (both
    Londons) is never its own rival. A transcript that names it nowhere asks nothing."""
    from engine.value_rivals import limit_rivals

    city = CITY_CODES[code]
    names = (city, "Heathrow") if code == "EGLL" else (city,)
    said = "Heathrow" if alias and code == "EGLL" else city
    heard = [*before, *words_of(said), *after]
    fields = {"destination": ("airport", code)}
    asked = query(" ".join(heard), fields, rivalled=["destination"], told={"destination": names})
    assert asked is not None
    rivals = asked.hypotheses
    assert [h.value for h in rivals] == limit_rivals(names) and city not in [h.value for h in rivals]
    written = [*before, *(w.capitalize() for w in words_of(said)), *after]
    for h in rivals:
        assert h.rival and h.unprompted and h.against == written and not h.slots
        assert h.words == [*before, *h.value.split(), *after]
    assert query(" ".join([*before, *after]), fields, rivalled=["destination"], told={"destination": names}) is None


def _city(delta: float, tempo: float, city: str = "Oslo") -> ValueCheck:
    return ValueCheck(field="destination", value=city, margin=0.0, lowest=0.0, delta=delta, tempo=tempo, rival=True)


@given(deltas=st.lists(st.floats(-40.0, 40.0), max_size=len(TEMPOS)))
def test_a_limit_heard_as_issued_is_accepted_only_where_no_rival_city_was_said(deltas: list[float]) -> None:
    """By voice the limit heard as issued is unsure (`rivalled`); the checks of its rival cities
    make it right only when scored at `CITY_TEMPOS` tempos at least (as recorded) and none within
    `RIVAL_SLACK` of the transcript as written. A wrong limit written as the issued city (seed
    119: Oslo +20 to +25 nats) stays unsure, at any tempo it was scored."""
    rb = ReadbackResult(ok=False, fields={"destination": "unsure"}, unsure=["destination"], rivalled=["destination"])
    checks = [_city(d, TEMPOS[i]) for i, d in enumerate(deltas)]
    result, _notes = apply_checks(rb, checks, {"destination": ("airport", "EDDL")})
    allowed = len(deltas) >= CITY_TEMPOS and all(d < -RIVAL_SLACK for d in deltas)
    assert result.fields["destination"] == ("ok" if allowed else "unsure")
    if any(d >= -RIVAL_SLACK for d in deltas):
        assert not result.ok


@given(typed=st.booleans(), told=st.booleans(), code=st.sampled_from(sorted(CITY_CODES)))
def test_by_voice_a_limit_heard_as_issued_is_rivalled_where_the_recognizer_was_told_it(
    typed: bool, told: bool, code: str
) -> None:
    """Heard as issued by a recognizer told the city (`Hearing.told`: whisper's prompt named it),
    the limit waits for its rivals; typed, or heard by one not told it (pocketsphinx, vosk, a
    recorded run), it is heard right as before."""
    from engine.readback import ReadbackEvaluator
    from tooling.flow_scripts import SCRIPT_SCENARIO

    variables = {**SCRIPT_SCENARIO, "destination": code, "destination_name": CITY_CODES[code]}
    said = f"cleared to {CITY_CODES[code]}, Lufthansa three five niner"
    result = ReadbackEvaluator().evaluate(["destination"], variables, said, spoken=not typed, told=told)
    if typed or not told:
        assert result.ok and result.rivalled == []
    else:
        assert result.fields == {"destination": "unsure"} and result.rivalled == ["destination"]


@pytest.mark.parametrize(
    ("issued", "said", "allowed"),
    [("Dusseldorf", "Vienna", False), ("Vienna", "Vienna", True), ("Prague", "Prague", True)],
)
def test_whisper_tells_the_limit_said_from_the_one_the_prompt_names(
    whisper: WhisperEngine, issued: str, said: str, allowed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On real audio (espeak-ng, tiny.en), under the radio's prompt naming the issued city:
    "cleared to Vienna" said and written "Dusseldorf" (seed 4's leak), the rival Vienna scored
    under the prompt naming every city alike is likelier than the transcript as written; the
    issued city said, no other city comes near it. Scoring only the rivals within reach
    (`_within_reach`) gives the verdict and the likeliest rival that scoring all twenty does."""
    prompt, rival_prompt, asked, pcm = _limit_written_as_issued(issued, said)
    assert issued in (prompt or "") and all(city in (rival_prompt or "") for city in LIMIT_RIVALS)
    checks = score_values(whisper, pcm, prompt, asked, rival_prompt=rival_prompt)
    assert {c.tempo for c in checks if c.rival} == {1.0}  # as recorded only (`CITY_TEMPOS`)
    best = {c.tempo: (c.value, c.delta) for c in checks if c.rival}
    assert rival_allows("destination", checks, FLOOR, CITY_TEMPOS) == allowed, best
    if not allowed:
        assert all(value == said for value, _delta in best.values()), best
    from gateway.speech.stt import whisper_scoring

    monkeypatch.setattr(whisper_scoring, "REACH_NATS", float("inf"))
    every = score_values(whisper, pcm, prompt, asked, rival_prompt=rival_prompt)
    assert rival_allows("destination", every, FLOOR, CITY_TEMPOS) == allowed
    for check in every:  # a rival left out was nowhere near: the one kept is the one said
        if check.rival and check.delta >= -RIVAL_SLACK:
            assert best[check.tempo] == (check.value, check.delta)


@given(code=st.sampled_from(sorted(CITY_CODES)))
def test_a_city_rival_is_scored_under_a_prompt_naming_every_place_alike(code: str) -> None:
    """The radio's prompt names the issued city alone; the prompt its rivals are scored under
    names none alone: every place of `rival_places` (the issued one's names among them, in
    alphabetical order) once, in a list after the digits, and otherwise the radio's wording
    without the city. Without the list whisper's prior for a long name decided (a right
    "Dusseldorf" in the product's own voice lost to Warsaw by 3.7 and 10.1 nats)."""
    import re

    from engine.value_rivals import limit_rivals
    from gateway.speech.stack import rival_places
    from gateway.speech.stt.base import SttContext
    from gateway.speech.stt.whisper_prompt import DIGITS_SENTENCE, build_prompt, rival_prompt, unprompted
    from tooling.flow_scripts import SCRIPT_SCENARIO

    city = CITY_CODES[code]
    names = (city, "Heathrow") if code == "EGLL" else (city,)
    aliases = list(names[1:])
    variables = {**SCRIPT_SCENARIO, "destination": code, "destination_name": city, "destination_aliases": aliases}
    places = rival_places(variables)
    # every airport's place is told (the departure's too: "Frankfurt Delivery")
    assert set(places) == {*limit_rivals(names), *names, "Frankfurt"} and list(places) == sorted(places, key=str.lower)
    context = SttContext(
        expected_phrases=[f"Cleared to {city} via COLEM 8V departure, squawk 2566"],
        vocabulary=[city],
        told=frozenset(w for n in (*names, "Frankfurt") for w in words_of(n)),
        places=places,
    )
    assert city in (build_prompt(context) or "")
    prompt = rival_prompt(context) or ""
    listed = f"{DIGITS_SENTENCE} Destinations {', '.join(places)}."
    assert prompt.startswith(listed)
    assert all(len(re.findall(rf"\b{place}\b", prompt)) == 1 for place in places), prompt
    unlisted = (build_prompt(unprompted(context)) or "").removeprefix(DIGITS_SENTENCE)
    assert prompt.removeprefix(listed) == unlisted
    assert rival_places({"callsign": "DLH359"}) == ()


@pytest.mark.parametrize(
    ("issued", "said"), [("Berlin", "Bremen"), ("Brussels", "Bristol"), ("Hamburg", "Hannover"), ("Berlin", "Berlin")]
)
def test_whisper_proposes_the_city_said_that_no_list_names(whisper: WhisperEngine, issued: str, said: str) -> None:
    """On real audio (espeak-ng, tiny.en): a city said that `LIMIT_RIVALS` does not hold, written as
    the issued one, is a rival all the same. Whisper's own likeliest other names at the city's place
    (`whisper_scoring._proposed`) are scored like the listed ones, and the one said wins by nats
    where the listed cities came within one of the slack at best ("Bremen" for Berlin: London
    -0.6). The issued city said, no proposal comes within the slack."""
    assert said not in LIMIT_RIVALS or said == issued
    prompt, rival_prompt, asked, pcm = _limit_written_as_issued(issued, said)
    checks = score_values(whisper, pcm, prompt, asked, rival_prompt=rival_prompt)
    best = max((c for c in checks if c.rival), key=lambda c: c.delta)
    if said == issued:
        assert rival_allows("destination", checks, FLOOR, CITY_TEMPOS), (best.value, best.delta)
    else:
        assert not rival_allows("destination", checks, FLOOR, CITY_TEMPOS)
        assert best.value not in LIMIT_RIVALS and best.delta > 3.0, (best.value, best.delta)


CODES_OF = {
    "Dusseldorf": "EDDL",
    "Vienna": "LOWW",
    "Prague": "LKPR",
    "Berlin": "EDDB",
    "Brussels": "EBBR",
    "Hamburg": "EDDH",
}


def _limit_written_as_issued(issued: str, said: str) -> tuple[str | None, str | None, Any, bytes]:
    """A clearance readback with `said` for the limit (espeak-ng) and written with `issued`, as the
    radio's prompt naming `issued` may write it: the radio's prompt, the rival prompt naming every
    listed city alike, the question of the limit's rivals, and the audio."""
    from gateway.speech.stt.base import SttContext
    from gateway.speech.stt.whisper_prompt import build_prompt
    from gateway.speech.stt.whisper_prompt import rival_prompt as rival_prompt_of

    context = SttContext(
        expected_phrases=[f"Cleared to {issued} via COLEM 8V departure, squawk 2566"],
        vocabulary=[issued],
        told=frozenset(words_of(issued)),
        places=tuple(sorted(LIMIT_RIVALS)),
    )
    written = f"Wizz Air niner fife, cleared to {issued}, squawking two five six six"
    spoken = f"Wizz Air niner fife, cleared to {said}, squawking two fife six six"
    fields = {"destination": ("airport", CODES_OF[issued])}
    asked = query(written, fields, rivalled=["destination"], told={"destination": (issued,)})
    assert asked is not None
    return build_prompt(context), rival_prompt_of(context), asked, espeak_pcm(spoken)
