"""Typed contracts: hookspecs state their real types, and Kit's options are checked by mypy."""

from __future__ import annotations

import argparse
import collections.abc
import inspect
import re
import subprocess
import sys
import textwrap
import types
import typing
from pathlib import Path
from typing import Any

import pytest

import agentkit_core
import agentkit_core.plugin
from agentkit_core import Kit
from agentkit_core import KitOptions
from agentkit_core import hookspecs
from agentkit_core._hooks import FIELDS

SPECS = {n: f for n, f in vars(hookspecs).items() if n.startswith("agentkit_")}

P = typing.TypeVar("P")


class SubParsersAction(typing.Generic[P]):
    """argparse's class, subscriptable: the real one is generic only to type checkers."""


ARGPARSE = types.SimpleNamespace(
    _SubParsersAction=SubParsersAction, ArgumentParser=argparse.ArgumentParser
)


def _leaves(hint: Any) -> list[Any]:
    """Every type a hint is built from (``list[Message] | None`` -> list, Message, NoneType)."""
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    return [hint if origin is None else origin, *(x for a in args for x in _leaves(a))]


#: The public names of both doors, resolved (``vars(agentkit_core)`` holds only those used so
#: far: PEP 562).
PUBLIC = {
    name: getattr(door, name)
    for door in (agentkit_core, agentkit_core.plugin)
    for name in door.__all__
}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_hookspec_states_real_types(name: str) -> None:
    namespace = {
        **vars(collections.abc),
        **vars(hookspecs),
        **PUBLIC,
        "argparse": ARGPARSE,
    }
    hints = typing.get_type_hints(SPECS[name], globalns=namespace)
    params = set(inspect.signature(SPECS[name]).parameters)
    assert set(hints) == params | {"return"}, "every parameter and the return are annotated"
    for param, hint in hints.items():
        assert Any not in _leaves(hint), f"{name}({param}) says Any: {hint}"


def test_the_turn_hooks_receive_turn_info_and_before_tool_call_returns_decisions() -> None:
    namespace = {**vars(collections.abc), **vars(hookspecs), **PUBLIC}
    turn = typing.get_type_hints(SPECS["agentkit_should_stop_after_turn"], globalns=namespace)
    assert turn["turn"] is agentkit_core.TurnInfo
    before = typing.get_type_hints(SPECS["agentkit_before_turn"], globalns=namespace)
    assert before["info"] is agentkit_core.TurnInfo
    verdict = typing.get_type_hints(SPECS["agentkit_before_tool_call"], globalns=namespace)
    assert agentkit_core.ToolDecision in _leaves(verdict["return"])


def test_kit_options_name_every_contested_field_and_kit_documents_every_option() -> None:
    keys = set(KitOptions.__optional_keys__)
    assert set(FIELDS) <= keys
    documented = Kit.__doc__ or ""
    missing = [
        key
        for key in sorted(keys - set(FIELDS))
        if not re.search(rf"^ +(\w+, )*{key}(, \w+)*:", documented, re.M)
    ]
    assert missing == [], "Kit's docstring does not say what these options do"


MYPY_SNIPPET = """
from agentkit_core import Kit, KitOptions, RunContext, TurnInfo
from agentkit_core.plugin import ModelRequest

def stop(ctx: RunContext, turn: TurnInfo) -> str | None:
    return "enough" if turn.turn > 3 else None

def louder(request: ModelRequest) -> ModelRequest:  # a subset of the spec's arguments
    return request

ok = Kit(model="test", compactor="truncation", max_turns=4, should_stop_after_turn=stop,
         before_model_call=[louder])
options: KitOptions = {{"model": "test", "instructions": "Be brief."}}
also = Kit(**options)
{bad}
"""


def run_mypy(tmp_path: Path, bad: str) -> subprocess.CompletedProcess[str]:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(textwrap.dedent(MYPY_SNIPPET.format(bad=bad)), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(snippet)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_mypy_catches_a_misspelled_or_mistyped_kit_option(tmp_path: Path) -> None:
    bad = """
def three(ctx: RunContext, turn: TurnInfo) -> int:
    return 3

Kit(model="test", compactr="truncation")
Kit(model="test", max_turns="ten")
Kit(model="test", should_stop_after_turn=three)
typo: KitOptions = {"instruction": "Be brief."}
"""
    result = run_mypy(tmp_path, bad)
    lines = [ln for ln in result.stdout.splitlines() if ": error:" in ln]
    assert len(lines) == 4, result.stdout
    assert '"compactr"' in lines[0]
    assert '"max_turns"' in lines[1] and '"str"' in lines[1]
    assert '"should_stop_after_turn"' in lines[2]
    assert '"instruction"' in lines[3]


def test_mypy_accepts_the_correct_calls(tmp_path: Path) -> None:
    result = run_mypy(tmp_path, "")
    assert result.returncode == 0, result.stdout


def test_the_config_file_reader_and_kit_options_name_the_same_options() -> None:
    from agentkit_core import _config
    from agentkit_core import _kit_options

    assert set(_config.KIT_OPTIONS) == set(_kit_options.KIT_OPTIONS)
