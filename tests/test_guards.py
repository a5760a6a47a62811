"""Guards: allow-listed expressions, safe failure on data, rejection of everything else."""

from __future__ import annotations

import pytest

from engine.guards import MAX_GUARD_LENGTH, Guard, GuardError, compile_guard, guard_names

TELEMETRY = {"on_ground": False, "altitude_ft": 1200, "ias_kt": 160, "squawk": "4721"}


def ev(expr: str, variables: dict | None = None, flags: dict | None = None, telemetry: dict | None = None) -> bool:
    return compile_guard(expr).evaluate(variables or {}, flags or {}, telemetry or {})


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("not telemetry.on_ground and telemetry.altitude_ft > 400", True),
        ("telemetry.on_ground or telemetry.ias_kt < 100", False),
        ("telemetry.altitude_ft >= 1200 and telemetry.altitude_ft <= 1200", True),
        ("1000 < telemetry.altitude_ft < 1500", True),
        ("1000 < telemetry.altitude_ft < 1100", False),
        ("telemetry.altitude_ft - 200 == 1000", True),
        ("telemetry.altitude_ft / 2 == 600", True),
        ("telemetry.altitude_ft * 2 + 1 == 2401", True),
        ("-telemetry.altitude_ft < 0", True),
        ("telemetry.squawk == '4721'", True),
        ("telemetry.squawk != '7700'", True),
        ("telemetry.squawk in ['7500', '7600', '7700']", False),
        ("telemetry.squawk not in ('7500', '7600', '7700')", True),
        ("'47' in telemetry.squawk", True),
        ("True", True),
        ("None", False),
        ("0", False),
    ],
)
def test_expressions_over_telemetry(expr: str, expected: bool) -> None:
    assert ev(expr, telemetry=TELEMETRY) is expected


def test_bare_names_resolve_in_variables_then_flags() -> None:
    assert ev("runway == '25R'", variables={"runway": "25R"})
    assert ev("cleared", flags={"cleared": True})
    # a variable shadows a flag of the same name
    assert not ev("cleared", variables={"cleared": False}, flags={"cleared": True})
    assert ev("flags.cleared", variables={"cleared": False}, flags={"cleared": True})
    assert ev("vars.runway == '25R'", variables={"runway": "25R"}, flags={"runway": "09"})
    assert not ev("vars.cleared", flags={"cleared": True})


def test_in_with_names_inside_the_list() -> None:
    assert ev("runway in [departure_runway, '09']", variables={"runway": "25R", "departure_runway": "25R"})
    assert not ev("runway in [departure_runway]", variables={"runway": "25R"})


def test_string_concatenation() -> None:
    assert ev("runway + 'L' == '25L'", variables={"runway": "25"})


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("missing == 1", False),
        ("missing != 1", False),
        ("missing < 1", False),
        ("missing >= 1", False),
        ("1 in missing", False),
        ("missing in [1, 2]", False),
        ("missing not in [1, 2]", False),
        ("missing is None", True),
        ("missing is not None", False),
        ("not missing", True),
        ("not flags.never_set", True),
        ("telemetry.altitude_ft > 400", False),  # no telemetry at all
        ("missing + 1 > 0", False),
        ("-missing < 0", False),
    ],
)
def test_missing_values_are_none_and_compare_false(expr: str, expected: bool) -> None:
    assert ev(expr) is expected


@pytest.mark.parametrize(
    "expr",
    [
        "runway < 3",  # str vs int
        "runway * 3 == '25R25R25R'",  # no string repetition
        "runway - 1 == 24",
        "1 in altitude",  # `in` on a number
        "altitude / 0 == 0",  # division by zero is None
        "-runway == runway",
    ],
)
def test_type_errors_are_false_not_exceptions(expr: str) -> None:
    assert ev(expr, variables={"runway": "25R", "altitude": 5000}) is False


def test_evaluate_accepts_none_mappings() -> None:
    assert compile_guard("x is None").evaluate(None, None, None) is True


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os')",
        "__import__('os').system('true')",
        "().__class__",
        "().__class__.__bases__[0].__subclasses__()",
        "open('x')",
        "[x for x in y]",
        "{x for x in y}",
        "(x for x in y)",
        "{k: 1 for k in y}",
        "lambda: 1",
        "(lambda: 1)()",
        "x[0]",
        "x[1:2]",
        "x.y",
        "telemetry.altitude_ft.real",
        "telemetry.__class__",
        "flags._private",
        "__builtins__",
        "_x",
        "a if b else c",
        "(y := 1)",
        "f'{x}'",
        "{'a': 1}",
        "{1, 2}",
        "x ** 2",
        "x // 2",
        "x % 2",
        "x << 1",
        "~x",
        "+x",
        "x is 1",
        "x is not y",
        "[1, 2]",
        "(1, 2)",
        "x == [1]",
        "b'bytes'",
        "1j",
        "...",
        "flags",
        "telemetry",
        "vars",
        "print(1)",
        "getattr(x, 'y')",
    ],
)
def test_attack_and_unsupported_strings_are_rejected(expr: str) -> None:
    with pytest.raises(GuardError):
        compile_guard(expr)


@pytest.mark.parametrize("expr", ["", "   ", "x ==", "1 +", "(("])
def test_syntax_errors_and_empty_expressions_are_rejected(expr: str) -> None:
    with pytest.raises(GuardError):
        compile_guard(expr)


def test_error_messages_name_the_problem_and_column() -> None:
    with pytest.raises(GuardError) as info:
        compile_guard("telemetry.on_ground and open('x')")
    err = info.value
    assert err.column == 25
    assert "function call" in str(err)
    assert "column 25" in str(err)
    assert err.expr == "telemetry.on_ground and open('x')"

    with pytest.raises(GuardError) as info:
        compile_guard("  x.y")
    assert info.value.column == 3
    assert "flags.<name>" in info.value.reason


def test_overlong_and_deeply_nested_expressions_are_rejected() -> None:
    with pytest.raises(GuardError):
        compile_guard("x or " * (MAX_GUARD_LENGTH // 5) + "x")
    with pytest.raises(GuardError):
        compile_guard("-" * (MAX_GUARD_LENGTH - 1) + "1")


def test_compiled_guards_are_cached_and_expose_names() -> None:
    guard = compile_guard("cleared and flags.ready and telemetry.on_ground and vars.runway == rwy")
    assert isinstance(guard, Guard)
    assert compile_guard("cleared and flags.ready and telemetry.on_ground and vars.runway == rwy") is guard
    assert guard.names == {"cleared", "rwy"}
    assert guard.var_names == {"runway"}
    assert guard.flag_names == {"ready"}
    assert guard.telemetry_names == {"on_ground"}


def test_guard_names_lists_variable_references_only() -> None:
    assert guard_names("runway == '25R' and flags.x and telemetry.on_ground and vars.sid") == {"runway", "sid"}
    with pytest.raises(GuardError):
        guard_names("open('x')")


def test_boolean_operators_short_circuit() -> None:
    # the right side would be False on its own; `or` must not need it, `and` must stop early
    assert ev("flags.a or missing > 1", flags={"a": True})
    assert not ev("flags.a and telemetry.altitude_ft > 1", flags={"a": False}, telemetry={"altitude_ft": 5})


def test_a_spurious_ast_system_error_is_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """CPython 3.11 can raise "AST constructor recursion depth mismatch" for a valid expression
    when another thread parses at the same moment (cpython#106905; seen once in the suite). That
    race cannot be staged on demand, so the parser fails once here as it did there."""
    import ast

    from engine import guards

    real = ast.parse
    expr = "telemetry.altitude_ft > 1234"  # not compiled before in this process: not cached
    failed: list[str] = []

    def racing(*args: object, **kwargs: object) -> ast.AST:
        if args and args[0] == expr and not failed:  # only our expression, only once
            failed.append(expr)
            raise SystemError("AST constructor recursion depth mismatch (before=126, after=149)")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(guards.ast, "parse", racing)
    guard = compile_guard(expr)
    assert failed == [expr]
    assert guard.evaluate({}, {}, {"altitude_ft": 2000}) is True
    assert guard.evaluate({}, {}, {"altitude_ft": 1000}) is False
