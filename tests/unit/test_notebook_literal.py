"""A share's source goes into its notebook as a Python literal that reads back exactly (the measured
kernel's hash is computed from it), as a raw triple-quoted string whenever one can hold it."""

from __future__ import annotations

import ast

import pytest

from server.notebook.build import _literal


@pytest.mark.parametrize(
    "text",
    [
        "def f(x):\n    return x\n",
        "s = r'\\d+\\n'\nprint('''x''')\n",
        "ends with a quote '",
        "ends with a backslash \\",
        "windows\r\nline ends\r\n",
        "a \\N{BULLET} and \\u2022 and é\n",
        'doc = """triple"""\n',
    ],
)
def test_a_source_literal_reads_back_exactly(text):
    literal = _literal(text)
    assert ast.literal_eval(literal) == text


def test_a_plain_file_reads_like_itself():
    assert _literal("def f(x):\n    return x\n") == "r'''def f(x):\n    return x\n'''"
