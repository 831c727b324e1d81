"""Spec parser: valid programs parse; every error names file, line and column."""

from __future__ import annotations

import pytest

from kernelmosaic.tasks.spec import SpecError, parse_spec

HEAD = "dim M, N, K\ninput A: f32[M, K]\ninput B: f32[K, N]\n"


def test_parses_declarations_and_statements() -> None:
    program = parse_spec(HEAD + "param alpha: f32 = -0.5\n# comment\nlet t[i, j] = sum(k, A[i, k] * B[k, j])\n"
                         "output C[i, j] = t[i, j] * alpha\n")
    assert [d.name for d in program.dims] == ["M", "N", "K"]
    assert [i.name for i in program.inputs] == ["A", "B"]
    assert program.params[0].default == -0.5
    assert [s.name for s in program.outputs] == ["C"]


def test_expression_may_wrap_inside_parentheses() -> None:
    program = parse_spec(HEAD + "output C[i, j] = sum(k,\n    A[i, k] * B[k, j])\n")
    assert program.outputs[0].name == "C"


@pytest.mark.parametrize(
    ("body", "line", "col", "needle"),
    [
        ("output C[i, j] = A[i, k] * B[k, j]\n", 4, 23, "index 'k' is neither on the left side"),
        ("output C[i, j] = sum(k, A[i, k] * B[k, j]) + i\n", 4, 46, "index variable 'i' cannot be used as a value"),
        ("output C[i, j] = foo(A[i, j])\n", 4, 18, "unknown function 'foo'"),
        ("output C[i] = A[i, j]\n", 4, 20, "index 'j' is neither"),
        ("output C[i, j] = A[i, j + 1]\n", 4, 25, "expected ',' or ']'"),
        ("output C[i, j] = A[i]\n", 4, 18, "has 2 dimension(s) but is indexed with 1"),
        ("output C[i, j] = sum(k, A[i, j])\n", 4, 22, "reduction index 'k' is not used"),
        ("output C[i, j, q] = A[i, j]\n", 4, 8, "index 'q' on the left side does not appear"),
        ("output C[i, j] = exp(A[i, j], 2)\n", 4, 18, "exp() takes 1 argument(s), got 2"),
        ("output C[i, j] = A[i, j] $ 2\n", 4, 26, "unexpected character '$'"),
        ("input D: f32[Q]\noutput C[i] = D[i]\n", 4, 14, "size 'Q' is not declared"),
        ("output C[i, j] = (A[i, j]\n", 5, 1, "expected ')'"),
    ],
)
def test_errors_point_at_line_and_column(body: str, line: int, col: int, needle: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(HEAD + body, "tasks/x/spec.km")
    err = info.value
    assert needle in err.message
    assert (err.line, err.col) == (line, col), str(err)
    assert str(err).startswith(f"tasks/x/spec.km:{line}:{col}: ")


def test_error_message_shows_the_line_with_a_caret() -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(HEAD + "output C[i, j] = bogus[i, j]\n")
    text = str(info.value)
    assert "output C[i, j] = bogus[i, j]" in text
    assert text.splitlines()[-1].index("^") == text.splitlines()[-2].index("bogus")


def test_missing_output_is_an_error() -> None:
    with pytest.raises(SpecError, match="declares no output"):
        parse_spec(HEAD)


def test_max_with_two_values_is_elementwise_and_with_an_index_is_a_reduction() -> None:
    program = parse_spec("dim N\ninput x: f32[N]\nparam c: f32 = 1.0\noutput m = max(i, x[i])\n"
                         "output y[i] = max(x[i], c)\n")
    first, second = program.outputs
    assert type(first.expr).__name__ == "Reduce"
    assert type(second.expr).__name__ == "Call"
