"""The denylist from a file, in a kit: refusals name the entry's line, never the term."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import agentkit_guard_denylist
import pytest
from agentkit_guard_denylist import Denylist
from agentkit_guard_denylist._normal import loose
from agentkit_guard_denylist._normal import normal
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import GuardBlocked
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core.plugin import GuardInput
from agentkit_core.plugin import Verdict
from agentkit_core.testing import ScriptedModel


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "denylist.txt"
    path.write_text(text, encoding="utf-8")
    return path


def manager() -> PluginManager:
    pm = PluginManager(entry_points=False)
    pm.register(agentkit_guard_denylist, name="denylist")
    return pm


async def test_a_kit_refuses_input_and_output_naming_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "# codenames\nNightjar\n\nre:\\bAcme-\\d+\\b\n")
    seen: list[Verdict] = []

    async def run(answer: str, task: str) -> None:
        kit = Kit(
            model=ScriptedModel([answer]),
            guards=["denylist"],
            guard_options={"denylist": {"path": str(path)}},
            manager=manager(),
            verdict_observer=seen.append,
        )
        await Agent.from_config(kit.config()).run(task)

    with pytest.raises(GuardBlocked, match=rf"matched the denylist entry at {path}:2") as err:
        await run("ok", "what is nightjar?")
    assert "nightjar" not in str(err.value).lower().replace(str(path).lower(), "")
    with pytest.raises(GuardBlocked, match=rf"blocked the output at turn/1: .*{path}:4"):
        await run("see ACME-42", "which ticket?")
    assert [(v.hook, v.verdict) for v in seen] == [("input", "block"), ("output", "block")]


def test_a_denied_term_in_the_instructions_is_an_error_from_the_kit(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="guard 'denylist' refused instructions/product"):
        Kit(
            model="test",
            instructions="Mention Nightjar.",
            guards=["denylist"],
            guard_options={"denylist": {"terms": ["nightjar"]}},
            manager=manager(),
        )


def test_terms_are_whole_words_in_any_case() -> None:
    guard = Denylist(terms=["cat"])
    assert guard.check_input(GuardInput("a CAT sat")).action == "block"
    assert guard.check_input(GuardInput("concatenate")).action == "allow"
    assert Denylist(terms=["cat"], output=False).check_output(Message.assistant("cat")).action == (
        "allow"
    )


def test_bad_configuration_is_refused_naming_where(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"denylist.txt:2 is not a regular expression"):
        Denylist(write(tmp_path, "fine\nre:(unclosed\n"))
    with pytest.raises(ConfigError, match="cannot read the denylist file"):
        Denylist(tmp_path / "missing.txt")
    for name in ("deny\x00list.txt", "\ud800.txt"):  # no file can be named so: not a ValueError
        with pytest.raises(ConfigError, match="cannot read the denylist file"):
            Denylist(name)
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ConfigError, match="cannot read the denylist file"):
        Denylist(tmp_path / "latin1.txt")
    with pytest.raises(ConfigError, match="has no entries"):
        Denylist()


def _reference(guard: Denylist, text: str) -> str | None:
    """The entry an alternation of every entry's own pattern names first: what
    ``combined`` must agree with."""
    plain = "|".join(f"(?P<e{i}>{e.pattern})" for i, e in enumerate(guard.entries))
    for form in (normal(text), loose(normal(text)), text):  # as the guard reads a text
        found = re.search(plain, form, re.IGNORECASE)
        if found is not None:
            return guard.entries[int(str(found.lastgroup)[1:])].where
    return None


def _named(guard: Denylist, text: str) -> str | None:
    decision = guard.check_input(GuardInput(text))
    return None if decision.action == "allow" else decision.reason.rsplit(" ", 1)[-1]


pieces = st.sampled_from(["cat", "Cat", "concat", "-", " ", "é", "x1", "ACME-123", "_", "ß", "."])
lines = st.one_of(
    st.sampled_from(["cat", "x1", "-dash", "dash-", "é", "ß", "a.b", "_u", "ſ"]),
    st.sampled_from([r"\bACME-\d{3,}\b", "con|cat", r"x\d", r"(c)at"]).map("re:".__add__),
)


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(lines, min_size=1, max_size=8), text=st.lists(pieces, max_size=12))
@example(entries=["cat", "re:(c)at"], text=["cat"])  # a term, then a pattern, at one place
@example(entries=["re:(c)at", "x1", "cat"], text=["x1 cat"])
@example(entries=["cat"], text=["concat"])
def test_the_combined_pattern_names_the_entry_each_entry_alone_would(
    entries: list[str], text: list[str]
) -> None:
    """Terms and regular expressions in any order: sharing a word boundary reorders nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        guard = Denylist(write(Path(tmp), "\n".join(entries) + "\n"))
    said = "".join(text)
    assert _named(guard, said) == _reference(guard, said)
