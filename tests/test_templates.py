"""Templates: both brace styles, visible missing values, formatters, no attribute access."""

from __future__ import annotations

from typing import Any

from engine.templates import RenderResult, render, template_vars

VARS = {"callsign_spoken": "Lufthansa three five niner", "runway": "25R", "squawk": "4721", "qnh": 1013}


def test_double_and_single_braces_render() -> None:
    result = render("{{callsign_spoken}}, runway {runway}, squawk {{ squawk }}", VARS)
    assert result == RenderResult("Lufthansa three five niner, runway 25R, squawk 4721", [])
    assert result.ok


def test_double_brace_is_matched_before_single() -> None:
    assert template_vars("{{runway}}") == ["runway"]
    assert render("{{runway}}", VARS).text == "25R"  # not "{25R}"


def test_template_vars_are_unique_and_ordered() -> None:
    assert template_vars("{{b}} {a} {{ b }} {{c}}") == ["b", "a", "c"]
    assert template_vars("no variables here") == []
    assert template_vars(None) == []
    assert template_vars("") == []


def test_missing_variables_are_marked_and_reported() -> None:
    result = render("{{callsign_spoken}}, contact {{tower_freq}}, {{tower_freq}} {{sid}}", VARS)
    assert result.text == "Lufthansa three five niner, contact [tower_freq?], [tower_freq?] [sid?]"
    assert result.missing == ["tower_freq", "sid"]
    assert not result.ok


def test_none_value_counts_as_missing_but_empty_and_zero_render() -> None:
    result = render("[{{a}}|{{b}}|{{c}}]", {"a": None, "b": "", "c": 0})
    assert result.text == "[[a?]||0]"
    assert result.missing == ["a"]


def test_formatter_receives_name_and_value() -> None:
    seen: list[tuple[str, Any]] = []

    def spoken(name: str, value: Any) -> str:
        seen.append((name, value))
        return f"<{name}:{value}>"

    result = render("QNH {{qnh}}, {{missing}}", VARS, formatter=spoken)
    assert result.text == "QNH <qnh:1013>, [missing?]"
    assert seen == [("qnh", 1013)]  # never called for missing values


def test_no_attribute_access_or_format_spec_tricks() -> None:
    tpl = "{runway.__class__} {runway!r} {runway:>10} {0} {} {{ runway.upper }} {__class__}"
    result = render(tpl, VARS)
    # nothing but plain names is a variable; `{__class__}` is a plain (missing) name, not an attribute
    assert result.text == "{runway.__class__} {runway!r} {runway:>10} {0} {} {{ runway.upper }} [__class__?]"
    assert template_vars(tpl) == ["__class__"]


def test_unbalanced_and_spaced_single_braces_stay_literal() -> None:
    assert render("{{ runway }", VARS).text == "{{ runway }"
    assert render("{ runway }", VARS).text == "{ runway }"
    assert render("{{{runway}}}", VARS).text == "{25R}"


def test_empty_template() -> None:
    assert render(None, VARS) == RenderResult("", [])
    assert render("", VARS).text == ""


def test_non_string_values_use_str() -> None:
    assert render("{{alt}} ft, {{ok}}", {"alt": 5000, "ok": True}).text == "5000 ft, True"
