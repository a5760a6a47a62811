"""Loader, registry, directory source and lint, driven by small YAML documents."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent, indent

import pytest

from engine.loader import (
    FlowLoadError,
    FlowLoadErrors,
    LintIssue,
    MemoryFlowSource,
    lint_flow,
    lint_registry,
    load_flow_text,
    load_registry,
)
from engine.models import FlowMode, Role, TransitionKind
from engine.registry import KNOWN_SCENARIO_VARIABLES, FlowRegistry, UnknownFlow
from gateway.flows_source import DirectoryFlowSource

CLEARANCE = dedent(
    """
    schema_version: "2"
    slug: clearance
    name: IFR clearance
    start_state: CD_READY
    end_states: [CD_DONE]
    states:
      CD_READY:
        role: pilot
        expect: "{{station_name}}, {{callsign_spoken}}, request IFR clearance to {{destination}}"
        transitions:
          - to: CD_ISSUE
            triggers: ["clearance|IFR"]
      CD_ISSUE:
        role: atc
        say: "{{callsign_spoken}}, cleared to {{destination}} via {{sid}}, squawk {{squawk}}"
        transitions: [{to: CD_READBACK}]
      CD_READBACK:
        role: pilot
        readback: [destination, sid, squawk]
        expect: "Cleared {{destination}} via {{sid}}, squawk {{squawk}}, {{callsign_spoken}}"
        transitions:
          - {kind: ok, to: CD_DONE}
          - {kind: bad, to: CD_ISSUE}
      CD_DONE:
        role: system
    """
)

RADIO_CHECK = dedent(
    """
    slug: radio_check
    entry_mode: interrupt
    interrupt: {triggers: ["radio check"], priority: 50}
    start_state: RC_CALL
    end_states: [RC_DONE]
    states:
      RC_CALL:
        role: pilot
        expect: "{{station_name}}, {{callsign_spoken}}, radio check"
        transitions: [{to: RC_REPLY}]
      RC_REPLY:
        role: atc
        say: "{{callsign_spoken}}, read you five"
        transitions: [{to: RC_DONE}]
      RC_DONE:
        role: system
    """
)


def registry_of(**texts: str) -> FlowRegistry:
    return load_registry(MemoryFlowSource({slug: dedent(text) for slug, text in texts.items()}))


def issues_of(registry: FlowRegistry, slug: str) -> list[LintIssue]:
    return lint_flow(registry.get(slug), registry, known_variables=KNOWN_SCENARIO_VARIABLES)


def errors(issues: list[LintIssue]) -> list[str]:
    return [str(i) for i in issues if i.severity == "error"]


def warnings(issues: list[LintIssue]) -> list[str]:
    return [str(i) for i in issues if i.severity == "warning"]


def tiny(slug: str, states: str, *, start: str = "A", ends: str = "[END]", extra: str = "") -> str:
    """A flow document around an indented `states:` body."""
    return f"slug: {slug}\nstart_state: {start}\nend_states: {ends}\n{extra}states:\n{indent(dedent(states), '  ')}"


# --------------------------------------------------------------------------- loading


def test_schema_v2_flow_loads_into_canonical_model() -> None:
    flow = load_flow_text(CLEARANCE, "flows/clearance.yaml", expected_slug="clearance")
    assert flow.slug == "clearance"
    assert flow.schema_version == "2"
    ready = flow.states["CD_READY"]
    assert ready.id == "CD_READY" and ready.role is Role.PILOT
    assert ready.utterance_tpl and "{{destination}}" in ready.utterance_tpl
    assert ready.transitions[0].triggers[0].pattern == "clearance|IFR"
    readback = flow.states["CD_READBACK"]
    assert readback.readback_required == ["destination", "sid", "squawk"]
    assert [t.kind for t in readback.transitions] == [TransitionKind.OK, TransitionKind.BAD]


def test_legacy_schema_v1_names_fold_into_transitions() -> None:
    text = dedent(
        """
        schema_version: "1"
        slug: taxi
        flags: {taxied: false}
        start_state: T_REQ
        end_states: [T_DONE]
        states:
          T_REQ:
            role: pilot
            utterance_tpl: "{{callsign_spoken}}, request taxi"
            next:
              - {to: T_ISSUE, label: taxi request, guard: "not flags.taxied"}
          T_ISSUE:
            role: atc
            say_tpl: "{{callsign_spoken}}, taxi to holding point {{holding_point}} via {{taxi_route}}"
            next: [T_RB]
          T_RB:
            role: pilot
            readback_required: [holding_point, taxi_route]
            utterance_tpl: "Holding point {{holding_point}} via {{taxi_route}}, {{callsign_spoken}}"
            ok_next: [T_DONE]
            bad_next: [{to: T_ISSUE}]
            timer_next: [{to: T_ISSUE, after_s: 20}]
            auto_transitions: [{to: T_DONE, guard: "telemetry.ias_kt > 30"}]
          T_DONE:
            role: system
        """
    )
    flow = load_flow_text(text, "flows/taxi.yaml", expected_slug="taxi")
    assert flow.schema_version == "1"
    req = flow.states["T_REQ"]
    assert req.utterance_tpl == "{{callsign_spoken}}, request taxi"
    assert [(t.kind, t.to, t.label, t.guard) for t in req.transitions] == [
        (TransitionKind.NEXT, "T_ISSUE", "taxi request", "not flags.taxied")
    ]
    issue = flow.states["T_ISSUE"]
    assert issue.say_tpl and issue.say_tpl.startswith("{{callsign_spoken}}, taxi")
    assert [(t.kind, t.to) for t in issue.transitions] == [(TransitionKind.NEXT, "T_RB")]
    rb = flow.states["T_RB"]
    assert rb.readback_required == ["holding_point", "taxi_route"]
    assert [(t.kind, t.to, t.after_s) for t in rb.transitions] == [
        (TransitionKind.OK, "T_DONE", None),
        (TransitionKind.BAD, "T_ISSUE", None),
        (TransitionKind.TIMER, "T_ISSUE", 20.0),
        (TransitionKind.AUTO, "T_DONE", None),
    ]
    registry = FlowRegistry([flow])
    assert issues_of(registry, "taxi") == []


def test_legacy_single_target_string_is_read_as_a_list() -> None:
    flow = load_flow_text(tiny("x", "  A: {role: atc, next: END}\n  END: {role: system}\n"), "x.yaml")
    assert [(t.kind, t.to) for t in flow.states["A"].transitions] == [(TransitionKind.NEXT, "END")]


def test_legacy_list_of_wrong_type_is_a_readable_error() -> None:
    with pytest.raises(FlowLoadError) as info:
        load_flow_text(tiny("x", "  A: {role: atc, next: [5]}\n  END: {}\n"), "flows/x.yaml")
    assert info.value.location == "states.A.next[0]"
    assert "expected a state id or a transition" in str(info.value)


@pytest.mark.parametrize("version", ['"1"', "1", '"2"', "2"])
def test_supported_schema_versions(version: str) -> None:
    flow = load_flow_text(f"schema_version: {version}\n" + tiny("x", "  A: {next: [END]}\n  END: {}\n"), "x.yaml")
    assert flow.schema_version == version.strip('"')


def test_missing_schema_version_reads_as_current() -> None:
    flow = load_flow_text(tiny("x", "  A: {next: [END]}\n  END: {}\n"), "x.yaml")
    assert flow.schema_version == "2"


@pytest.mark.parametrize("version", ['"3"', "0", '"v2"', "[1]", "true"])
def test_unknown_schema_version_is_rejected(version: str) -> None:
    text = tiny("x", "  A: {next: [END]}\n  END: {}\n") + f"schema_version: {version}\n"
    with pytest.raises(FlowLoadError) as info:
        load_flow_text(text, "flows/x.yaml")
    err = info.value
    assert err.location == "schema_version"
    assert "unsupported schema_version" in err.message and '"1", "2"' in err.message
    assert err.problems[0].line == 7
    assert str(err).startswith("flows/x.yaml:7: schema_version: unsupported")


def test_malformed_yaml_names_file_and_line() -> None:
    text = "slug: x\nstart_state: A\nstates:\n  A: {role: pilot\n  B: [\n"
    with pytest.raises(FlowLoadError) as info:
        load_flow_text(text, "flows/x.yaml")
    err = info.value
    assert err.source == "flows/x.yaml"
    assert err.problems[0].line is not None
    assert str(err).startswith(f"flows/x.yaml:{err.problems[0].line}: YAML error")


def test_duplicate_keys_are_rejected() -> None:
    text = tiny("x", "  A: {next: [END]}\n  A: {role: atc}\n  END: {}\n")
    with pytest.raises(FlowLoadError) as info:
        load_flow_text(text, "flows/x.yaml")
    assert "duplicate key 'A'" in str(info.value)
    assert info.value.problems[0].line == 6


@pytest.mark.parametrize(("text", "message"), [("", "empty flow document"), ("- a\n- b\n", "mapping at the top level")])
def test_documents_that_are_not_mappings(text: str, message: str) -> None:
    with pytest.raises(FlowLoadError, match=message):
        load_flow_text(text, "flows/x.yaml")


def test_wrong_types_name_the_field_and_line() -> None:
    text = dedent(
        """\
        slug: x
        start_state: A
        states:
          A:
            role: pilot
            transitions:
              - {kind: timer, to: A, after_s: ten}
          B:
            role: captain
            sayy: hello
        """
    )
    with pytest.raises(FlowLoadError) as info:
        load_flow_text(text, "flows/x.yaml")
    lines = str(info.value).splitlines()
    assert (
        "flows/x.yaml:7: states.A.transitions[0].after_s: Input should be a valid number, "
        "unable to parse string as a number (got 'ten')"
    ) in lines
    assert any(line.startswith("flows/x.yaml:9: states.B.role: Input should be 'pilot', 'atc' or 'system'") for line in lines)
    assert "flows/x.yaml:10: states.B.sayy: unknown field" in lines


def test_missing_required_field() -> None:
    with pytest.raises(FlowLoadError) as info:
        load_flow_text("slug: x\nstates: {A: {}}\n", "flows/x.yaml")
    assert "start_state: required field is missing" in str(info.value)


def test_slug_comes_from_the_file_name_and_must_match_it() -> None:
    body = "start_state: A\nend_states: [A]\nstates: {A: {}}\n"
    assert load_flow_text(body, "flows/tower.yaml", expected_slug="tower").slug == "tower"
    with pytest.raises(FlowLoadError, match="does not match the file name 'tower'"):
        load_flow_text("slug: ground\n" + body, "flows/tower.yaml", expected_slug="tower")


@pytest.mark.parametrize("slug", ["../etc/passwd", "Tower", "a/b", "_x", "-x", "a b", ".."])
def test_invalid_slugs_are_rejected(slug: str) -> None:
    body = f"slug: '{slug}'\nstart_state: A\nend_states: [A]\nstates: {{A: {{}}}}\n"
    with pytest.raises(FlowLoadError, match="invalid slug"):
        load_flow_text(body, "flows/x.yaml")


# --------------------------------------------------------------------------- registry and sources


def test_load_registry_collects_every_broken_flow() -> None:
    source = MemoryFlowSource({"clearance": CLEARANCE, "bad_yaml": "a: [", "bad_type": "slug: bad_type\nstates: 3\n"})
    with pytest.raises(FlowLoadErrors) as info:
        load_registry(source)
    assert sorted(e.source for e in info.value.errors) == ["flows/bad_type.yaml", "flows/bad_yaml.yaml"]

    collected: list[FlowLoadError] = []
    registry = load_registry(source, errors=collected)
    assert len(collected) == 2
    assert list(registry.flows) == ["clearance"]
    assert registry.source_of("clearance") == "flows/clearance.yaml"


def test_load_registry_rejects_path_like_slugs_without_reading_them() -> None:
    class Recording(MemoryFlowSource):
        def __init__(self) -> None:
            super().__init__({"clearance": CLEARANCE, "../secret": "x: 1"})
            self.read_slugs: list[str] = []

        def read(self, slug: str) -> tuple[str, str]:
            self.read_slugs.append(slug)
            return super().read(slug)

    source = Recording()
    found: list[FlowLoadError] = []
    registry = load_registry(source, errors=found)
    assert source.read_slugs == ["clearance"]
    assert [e.message for e in found] == ["invalid flow name '../secret': use lower case letters, digits, '_' and '-'"]
    assert "clearance" in registry


def test_registry_lookup_main_flow_and_interrupts() -> None:
    emergency = RADIO_CHECK.replace("radio_check", "emergency").replace("priority: 50", "priority: 90")
    registry = registry_of(clearance=CLEARANCE, radio_check=RADIO_CHECK, emergency=emergency)
    assert registry.main_flow == "clearance"
    assert registry.schema_version == "2"
    assert registry.get("clearance").slug == "clearance"
    with pytest.raises(UnknownFlow, match="unknown flow 'nope'"):
        registry.get("nope")
    assert [f.slug for f in registry.interrupt_flows()] == ["emergency", "radio_check"]
    assert len(registry) == 3 and "radio_check" in registry


def test_main_flow_defaults() -> None:
    a = tiny("alpha", "  A: {next: [END]}\n  END: {}\n")
    b = tiny("bravo", "  A: {next: [END]}\n  END: {}\n")
    assert registry_of(bravo=b, alpha=a).main_flow == "alpha"
    assert registry_of(alpha=a, ifr_departure=a.replace("alpha", "ifr_departure")).main_flow == "ifr_departure"
    linear = tiny("alpha", "  A: {next: [END]}\n  END: {}\n", extra="entry_mode: linear\n")
    assert registry_of(alpha=linear).main_flow is None
    explicit = load_registry(MemoryFlowSource({"alpha": a, "bravo": b}), main_flow="bravo")
    assert explicit.main_flow == "bravo"
    with pytest.raises(FlowLoadErrors, match="main flow 'zulu' is not loaded"):
        load_registry(MemoryFlowSource({"alpha": a}), main_flow="zulu")
    with pytest.raises(UnknownFlow):
        FlowRegistry([], main_flow="zulu")


def test_directory_source_lists_and_reads(tmp_path: Path) -> None:
    (tmp_path / "clearance.yaml").write_text(CLEARANCE, encoding="utf-8")
    (tmp_path / "radio_check.yml").write_text(RADIO_CHECK, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a flow", encoding="utf-8")
    source = DirectoryFlowSource(tmp_path)
    assert source.list() == ["clearance", "radio_check"]
    text, name = source.read("clearance")
    assert text == CLEARANCE and name == str(tmp_path / "clearance.yaml")
    registry = load_registry(source)
    assert registry.source_of("radio_check") == str(tmp_path / "radio_check.yml")
    assert lint_registry(registry) == []


def test_directory_source_refuses_path_traversal(tmp_path: Path) -> None:
    flows = tmp_path / "flows"
    flows.mkdir()
    (tmp_path / "secret.yaml").write_text("slug: secret\n", encoding="utf-8")
    source = DirectoryFlowSource(flows)
    for slug in ("../secret", "..", "/etc/passwd", "sub/flow"):
        with pytest.raises(ValueError):
            source.read(slug)


def test_directory_source_reports_bad_names_and_duplicates(tmp_path: Path) -> None:
    (tmp_path / "Bad Name.yaml").write_text(CLEARANCE, encoding="utf-8")
    (tmp_path / "twin.yaml").write_text("x: 1", encoding="utf-8")
    (tmp_path / "twin.yml").write_text("x: 1", encoding="utf-8")
    (tmp_path / "clearance.yaml").write_text(CLEARANCE, encoding="utf-8")
    found: list[FlowLoadError] = []
    registry = load_registry(DirectoryFlowSource(tmp_path), errors=found)
    messages = sorted(e.message for e in found)
    assert messages[0].startswith("cannot read flow: both twin.yaml and twin.yml")
    assert messages[1].startswith("invalid flow name 'Bad Name'")
    assert list(registry.flows) == ["clearance"]


def test_missing_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_registry(DirectoryFlowSource(tmp_path / "missing"))


# --------------------------------------------------------------------------- lint


def test_clean_flows_have_no_issues() -> None:
    registry = registry_of(clearance=CLEARANCE, radio_check=RADIO_CHECK)
    assert lint_registry(registry, KNOWN_SCENARIO_VARIABLES) == []


def test_issue_string_format() -> None:
    flow = CLEARANCE.replace('squawk {{squawk}}"\n', 'squawk {{squak}}"\n')
    assert flow != CLEARANCE
    issues = lint_registry(registry_of(clearance=flow))
    assert [str(i) for i in issues] == ["flows/clearance.yaml: CD_ISSUE.say_tpl: unknown variable 'squak'"]
    issue = issues[0]
    assert (issue.severity, issue.file, issue.flow, issue.state, issue.field) == (
        "error",
        "flows/clearance.yaml",
        "clearance",
        "CD_ISSUE",
        "say_tpl",
    )


def test_unknown_transition_targets() -> None:
    main = tiny(
        "main",
        """\
          A:
            role: atc
            transitions:
              - to: NOWHERE
              - flow: ghost
              - {flow: other, to: MISSING}
              - {flow: other, to: O_START}
              - {kind: next}
              - {kind: interrupt, to: END}
              - {kind: return}
              - {to: END}
          END: {}
        """,
    )
    other = tiny("other", "  O_START: {next: [END]}\n  END: {}\n", start="O_START", extra="entry_mode: linear\n")
    registry = registry_of(main=main, other=other)
    assert errors(issues_of(registry, "main")) == [
        "flows/main.yaml: A.transitions[0].to: unknown state 'NOWHERE'",
        "flows/main.yaml: A.transitions[1].flow: unknown flow 'ghost'",
        "flows/main.yaml: A.transitions[2].to: unknown state 'MISSING' in flow 'other'",
        "flows/main.yaml: A.transitions[4]: next transition without a target ('to' or 'flow')",
        "flows/main.yaml: A.transitions[5].flow: interrupt transition without a flow to enter",
    ]


def test_start_and_end_states_must_exist() -> None:
    registry = registry_of(x=tiny("x", "  A: {next: [END]}\n  END: {}\n", start="NOPE", ends="[END, GONE]"))
    found = errors(issues_of(registry, "x"))
    assert "flows/x.yaml: start_state: unknown state 'NOPE'" in found
    assert "flows/x.yaml: end_states[1]: unknown state 'GONE'" in found
    assert not any("unreachable" in line for line in found)  # no start: reachability is not judged


def test_unreachable_states_and_cross_flow_entries() -> None:
    main = tiny(
        "main",
        """\
          A: {next: [END], timer_next: [{to: T, after_s: 5}]}
          T: {auto_transitions: [{to: END}]}
          ISLAND: {next: [END]}
          END: {}
        """,
    )
    other = tiny(
        "other",
        "  A: {next: [{flow: main, to: ENTRY, mode: linear}]}\n  END: {}\n",
        extra="entry_mode: linear\n",
    )
    with_entry = main.replace("  ISLAND:", "  ENTRY: {next: [END]}\n  ISLAND:")
    registry = registry_of(main=with_entry, other=other)
    found = errors(issues_of(registry, "main"))
    assert found == ["flows/main.yaml: ISLAND: unreachable from start_state 'A'"]  # T via timer, ENTRY via other


def test_state_without_way_out_must_be_an_end_state() -> None:
    registry = registry_of(x=tiny("x", "  A: {role: atc, next: [STUCK, END]}\n  STUCK: {role: atc}\n  END: {}\n"))
    assert errors(issues_of(registry, "x")) == [
        "flows/x.yaml: STUCK.transitions: no transitions and not an end state: the flow stops here"
    ]


def test_invalid_regex_triggers() -> None:
    text = tiny(
        "x",
        """\
          A:
            role: pilot
            expect: "{{callsign}}"
            triggers: ["radio check("]
            transitions:
              - {to: END, triggers: ["[unclosed", "fine"]}
              - {to: END, triggers: [{regex: "(?P<x"}, {intent: wilco}, {intent: teleport}, {kind: intent}]}
          END: {}
        """,
    )
    issues = issues_of(registry_of(x=text), "x")
    assert [line.split(": invalid regex")[0] for line in errors(issues)] == [
        "flows/x.yaml: A.triggers[0]",
        "flows/x.yaml: A.transitions[0].triggers[0]",
        "flows/x.yaml: A.transitions[1].triggers[0]",
        "flows/x.yaml: A.transitions[1].triggers[3]: intent trigger without an intent name",
    ]
    assert len(warnings(issues)) == 1 and "unknown intent 'teleport'" in warnings(issues)[0]


def test_unknown_variables_in_every_template_field() -> None:
    text = tiny(
        "x",
        """\
          A:
            role: pilot
            expect: "{{callsing}} ready"
            transitions:
              - {to: B, utterance_tpl: "{{callsign}} {{rwy}}", updates: {cleared_runway: "{{runwy}}"}}
          B:
            role: atc
            say: "{{callsign_spoken}} {{twr_freq}}"
            frequency: "{{gnd_freq}}"
            handoff: {to: tower, freq: "{tower_frq}"}
            actions: [{set: {next_freq: "{{dep_freq}}", count: 3}}]
            transitions: [{to: END}]
          END: {}
        """,
        extra='policies: {correction_tpl: "{{callsign_spoken}}, negative, {{fixes}}"}\n',
    )
    assert errors(issues_of(registry_of(x=text), "x")) == [
        "flows/x.yaml: policies.correction_tpl: unknown variable 'fixes'",
        "flows/x.yaml: A.utterance_tpl: unknown variable 'callsing'",
        "flows/x.yaml: A.transitions[0].utterance_tpl: unknown variable 'rwy'",
        "flows/x.yaml: A.transitions[0].updates.cleared_runway: unknown variable 'runwy'",
        "flows/x.yaml: B.say_tpl: unknown variable 'twr_freq'",
        "flows/x.yaml: B.frequency: unknown variable 'gnd_freq'",
        "flows/x.yaml: B.handoff.freq: unknown variable 'tower_frq'",
        "flows/x.yaml: B.actions[0].set.next_freq: unknown variable 'dep_freq'",
    ]


def test_variables_declared_or_set_anywhere_are_known() -> None:
    setter = tiny(
        "setter",
        "  A: {actions: [{set: {gate_code: X1}}], next: [{to: END, updates: {pushback_time: '5'}}]}\n  END: {}\n",
    )
    user = tiny(
        "user",
        """\
          A:
            role: atc
            say: "{{callsign_spoken}} gate {{gate_code}} at {{pushback_time}}, wx {{local_wx}}"
            readback: [gate_code, local_wx]
            next: [END]
          END: {}
        """,
        extra="variables: {local_wx: CAVOK}\nentry_mode: linear\n",
    )
    registry = registry_of(setter=setter, user=user)
    assert issues_of(registry, "user") == []
    assert lint_flow(registry.get("user"), registry, known_variables=set()) != []  # nothing is known by default


def test_guards_bad_expressions_are_errors_unknown_names_warnings() -> None:
    text = tiny(
        "x",
        """\
          A:
            role: atc
            conditions: ["__import__('os')"]
            next:
              - {to: END, guard: "runway == '25R' and cleared and not flags.ready"}
              - {to: END, guard: "rnway == '25R' or vars.sqk == 1 or flags.nope or telemetry.altitude"}
              - {to: END, guard: "telemetry.altitude_ft >"}
            auto_transitions: [{to: END, triggers: [{telemetry: "telemetry.on_ground and open('x')"}]}]
          END: {}
        """,
        extra="flags: {cleared: false, ready: false}\n",
    )
    issues = issues_of(registry_of(x=text), "x")
    assert errors(issues) == [
        "flows/x.yaml: A.conditions[0]: invalid guard \"__import__('os')\": a function call is not allowed in a guard (column 1)",
        "flows/x.yaml: A.transitions[2].guard: invalid guard 'telemetry.altitude_ft >': syntax error: unexpected end of expression (column 24)",
        "flows/x.yaml: A.transitions[3].triggers[0]: invalid guard \"telemetry.on_ground and open('x')\": "
        "a function call is not allowed in a guard (column 25)",
    ]
    assert warnings(issues) == [
        "flows/x.yaml: A.transitions[1].guard: unknown name 'rnway' in guard (evaluates to None)",
        "flows/x.yaml: A.transitions[1].guard: unknown variable 'vars.sqk' in guard (evaluates to None)",
        "flows/x.yaml: A.transitions[1].guard: flag 'flags.nope' is never declared or set",
        "flows/x.yaml: A.transitions[1].guard: unknown telemetry 'telemetry.altitude'",
    ]


def test_readback_fields_must_be_known_variables() -> None:
    text = tiny("x", "  A: {role: pilot, expect: hi, readback: [runway, rwy], next: [END]}\n  END: {}\n")
    assert errors(issues_of(registry_of(x=text), "x")) == [
        "flows/x.yaml: A.readback_required[1]: readback field 'rwy' is not a known variable"
    ]


def test_timer_transitions_need_after_s() -> None:
    text = tiny(
        "x",
        "  A: {role: atc, transitions: [{kind: timer, to: END}, {kind: timer, to: END, after_s: -1}, "
        "{to: END, after_s: 3}]}\n  END: {}\n",
    )
    issues = issues_of(registry_of(x=text), "x")
    assert errors(issues) == [
        "flows/x.yaml: A.transitions[0].after_s: timer transition without after_s",
        "flows/x.yaml: A.transitions[1].after_s: negative delay -1.0",
    ]
    assert warnings(issues) == ["flows/x.yaml: A.transitions[2].after_s: ignored on a next transition"]


def test_pilot_states_without_example_phrase_warn() -> None:
    text = tiny(
        "x",
        """\
          A: {role: pilot, next: [B]}
          B: {role: pilot, next: [{to: END, utterance_tpl: "{{callsign}} wilco"}]}
          END: {}
        """,
    )
    issues = issues_of(registry_of(x=text), "x")
    assert errors(issues) == []
    assert warnings(issues) == [
        "flows/x.yaml: A.utterance_tpl: pilot state without an example phrase (expect / utterance_tpl)"
    ]


def test_interrupt_flows_need_triggers() -> None:
    no_block = tiny("alarm", "  A: {next: [END]}\n  END: {}\n", extra="entry_mode: interrupt\n")
    empty = tiny("alarm2", "  A: {next: [END]}\n  END: {}\n", extra="entry_mode: interrupt\ninterrupt: {priority: 5}\n")
    bad = tiny("alarm3", "  A: {next: [END]}\n  END: {}\n", extra='entry_mode: interrupt\ninterrupt: {triggers: ["(x"]}\n')
    stray = tiny("main", "  A: {next: [END]}\n  END: {}\n", extra='interrupt: {triggers: ["x"]}\n')
    registry = registry_of(alarm=no_block, alarm2=empty, alarm3=bad, main=stray)
    assert errors(issues_of(registry, "alarm")) == [
        "flows/alarm.yaml: interrupt.triggers: interrupt flow without interrupt.triggers can never be entered"
    ]
    assert len(errors(issues_of(registry, "alarm2"))) == 1
    assert errors(issues_of(registry, "alarm3"))[0].startswith("flows/alarm3.yaml: interrupt.triggers[0]: invalid regex")
    assert warnings(issues_of(registry, "main")) == ["flows/main.yaml: interrupt: ignored: entry_mode is not interrupt"]
    # interrupt flows without a priority sort with the default (100), ahead of priority 5
    assert [f.slug for f in registry.interrupt_flows()] == ["alarm", "alarm3", "alarm2"]
    assert all(f.entry_mode is FlowMode.INTERRUPT for f in registry.interrupt_flows())


def test_registry_level_issues() -> None:
    assert [str(i) for i in lint_registry(FlowRegistry([]))] == ["(registry): no flows found"]
    linear = tiny("x", "  A: {next: [END]}\n  END: {}\n", extra="entry_mode: linear\n")
    assert [str(i) for i in lint_registry(registry_of(x=linear))] == ["(registry): no flow has entry_mode: main"]


def test_hold_times_set_by_a_variable_must_be_declared_seconds() -> None:
    """`hold_s: "{{name}}"` lets a session set a trigger's hold; the flow declares the variable
    with a number of seconds, and anything else is refused at load or by lint."""
    states = """
        A:
          role: pilot
          expect: "airborne"
          transitions:
            - {kind: auto, to: END, triggers: [{telemetry: "not telemetry.on_ground", hold_s: "{{takeoff_hold_s}}"}]}
            - {kind: auto, to: END, triggers: [{telemetry: "telemetry.on_runway == False", hold_s: "{{vacate_s}}"}]}
            - {kind: auto, to: END, triggers: [{telemetry: "telemetry.vs_fpm > 500", hold_s: "{{nowhere_s}}"}]}
        END: {role: system}
    """
    registry = registry_of(x=tiny("x", states, extra="variables:\n  takeoff_hold_s: 2\n  vacate_s: soon\n"))
    assert errors(issues_of(registry, "x")) == [
        "flows/x.yaml: A.transitions[1].triggers[0].hold_s: hold_s variable 'vacate_s' must default to zero or more seconds, not 'soon'",
        "flows/x.yaml: A.transitions[2].triggers[0].hold_s: hold_s variable 'nowhere_s' must be declared in the flow's variables with a default",
    ]
    assert warnings(issues_of(registry, "x")) == []  # on_runway and vs_fpm are known telemetry
    for bad in ('"soon"', "-1", '"{{ not a name }}"'):
        text = tiny("y", f"A:\n  role: pilot\n  transitions:\n    - {{kind: auto, to: END, triggers: [{{telemetry: 'x', hold_s: {bad}}}]}}\nEND: {{role: system}}\n")
        with pytest.raises(FlowLoadErrors, match="hold_s"):
            registry_of(y=text)
