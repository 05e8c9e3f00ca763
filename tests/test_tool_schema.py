"""A function tool's JSON schema: what the annotations declare, and the docstring's descriptions.

The schema keeps every keyword pydantic emits for an ``Annotated[..., Field(...)]`` parameter
(the built-in TestModel calls a tool with its ``examples``), and parameter descriptions come
from Google, Sphinx and NumPy docstrings alike.
"""

from __future__ import annotations

import inspect
import keyword
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated
from typing import Any

import pydantic
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import Field

from agentkit_core import RunContext
from agentkit_core import tool

ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_demo_calls_its_tools_cleanly_and_answers() -> None:
    """The README's first command: every tool call succeeds, ``calculate`` gets ``6 * 7``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKIT_")}
    env["PYTHONPATH"] = str(ROOT)
    demo = ["run", "What is 6 * 7?", "--tools", "examples.tools:TOOLS"]
    proc = subprocess.run(
        [sys.executable, "-m", "agentkit_core", *demo],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert 'tool calculate {"expression": "6 * 7"}' in proc.stderr
    results = [line for line in proc.stderr.splitlines() if "  -> " in line]
    assert len(results) == 4, proc.stderr
    assert not any("error" in line for line in results), proc.stderr
    assert "error" not in proc.stdout.lower() and "Traceback" not in proc.stderr
    assert proc.stdout.startswith("TestModel answer after 4 tool result(s)")


def test_annotated_keywords_reach_the_schema() -> None:
    def book(
        room: Annotated[int, Field(ge=1, le=99, examples=[12])],
        code: Annotated[str, Field(pattern="^[A-Z]{3}$", title="Booking code")],
        when: Annotated[str, Field(json_schema_extra={"format": "date"})] = "2026-01-01",
        note: Annotated[str, Field(description="said in the annotation")] = "",
    ) -> str:
        """Book a room.

        Args:
            room: the room number
            note: said in the docstring
        """
        return "ok"

    props = tool(book).parameters["properties"]
    assert props["room"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 99,
        "examples": [12],
        "description": "the room number",
    }
    # a given title stays; the ones pydantic makes up from the name do not
    assert props["code"] == {"type": "string", "pattern": "^[A-Z]{3}$", "title": "Booking code"}
    assert props["when"] == {"type": "string", "format": "date", "default": "2026-01-01"}
    assert props["note"]["description"] == "said in the annotation"


def test_the_context_parameter_stays_out_of_the_schema() -> None:
    def look(ctx: RunContext, q: Annotated[str, Field(min_length=2)]) -> str:
        """Look."""
        return q

    made = tool(look)
    assert made.parameters["properties"] == {"q": {"type": "string", "minLength": 2}}


# ------------------------------------------------------------------ docstring styles

IDENT = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True).filter(
    lambda n: (
        not keyword.iskeyword(n)
        and not hasattr(pydantic.BaseModel, n)
        and not n.startswith("model_")
    )
)
WORD = st.from_regex(r"[A-Za-z][A-Za-z0-9,.'()-]{0,9}", fullmatch=True)
TEXT = st.lists(WORD, min_size=1, max_size=8).map(" ".join)
SUMMARY = TEXT.map(lambda t: t.rstrip(".") + ".")


def google(summary: str, params: dict[str, str]) -> str:
    lines = [f"    {name} (str): {text}" for name, text in params.items()]
    return f"{summary}\n\nArgs:\n" + "\n".join(lines) + "\n\nReturns:\n    the answer\n"


def sphinx(summary: str, params: dict[str, str]) -> str:
    lines = [f":param {name}: {text}" for name, text in params.items()]
    return f"{summary}\n\n" + "\n".join(lines) + "\n:returns: the answer\n"


def numpy(summary: str, params: dict[str, str]) -> str:
    lines = [f"{name} : str\n    {text}" for name, text in params.items()]
    return f"{summary}\n\nParameters\n----------\n" + "\n".join(lines) + "\n"


def function_with(params: list[str], doc: str) -> Callable[..., Any]:
    """A function taking ``params`` (all ``str``) whose docstring is ``doc``."""

    def fn(**kwargs: Any) -> str:
        return ""

    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, annotation=str) for p in params]
    )
    fn.__annotations__ = dict.fromkeys(params, str)
    fn.__doc__ = doc
    return fn


@settings(max_examples=60, deadline=None)
@given(
    style=st.sampled_from([google, sphinx, numpy]),
    summary=SUMMARY,
    params=st.dictionaries(IDENT, TEXT, min_size=1, max_size=4),
)
def test_every_docstring_style_gives_the_parameter_descriptions(
    style: Callable[[str, dict[str, str]], str], summary: str, params: dict[str, str]
) -> None:
    """Property: whatever the style, each parameter's description and the summary arrive."""
    made = tool(function_with(list(params), style(summary, params)))
    assert made.description == summary
    props = made.parameters["properties"]
    assert {name: props[name].get("description") for name in params} == params


@pytest.mark.parametrize("style", [google, sphinx, numpy])
def test_indented_docstrings_and_multi_line_descriptions(
    style: Callable[[str, dict[str, str]], str],
) -> None:
    doc = style("Move a file.", {"src": "where it is", "dst": "where it goes"})
    doc = doc.replace("where it goes", "where it goes,\n        once moved").replace("\n", "\n    ")
    made = tool(function_with(["src", "dst"], doc))
    props = made.parameters["properties"]
    assert props["src"]["description"] == "where it is"
    assert props["dst"]["description"] == "where it goes, once moved"
    assert made.description == "Move a file."


def test_importing_agentkit_core_leaves_the_docstring_parser_unloaded() -> None:
    """The parser is imported when a function tool is first built, not by ``import``."""
    probe = "import sys, agentkit_core; print('docstring_parser' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
