"""``[models.PREFIX]`` tables: a provider's options from the project file, checked, everywhere.

The model string ``"anthropic:claude-x"`` is built with the options of the file's
``[models.anthropic]`` table, checked against the settings the plugin registered; an unknown key
names the file and the nearest key. ``agentkit run`` reads the same table: the run below talks
to a local server the file points the provider at.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import PluginManager
from agentkit_core.plugin import resolve_model
from agentkit_core.testing import WireServer
from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent
ANTHROPIC = ROOT / "plugins" / "model-anthropic" / "tests" / "recordings"


def manager(tmp_path: Path, text: str) -> PluginManager:
    path = tmp_path / "agentkit.toml"
    path.write_text(text, encoding="utf-8")
    return PluginManager(config=path)


def test_a_models_table_reaches_the_provider(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    pm = manager(
        tmp_path,
        '[models.anthropic]\nbase_url = "http://127.0.0.1:9/x"\nmax_tokens = 77\ncache = false\n',
    )
    model: Any = resolve_model("anthropic:claude-test", manager=pm)
    assert (model.base_url, model.max_tokens) == ("http://127.0.0.1:9/x", 77)
    other: Any = resolve_model("openai:gpt-test", manager=pm)  # another prefix: untouched
    assert "127.0.0.1:9" not in other.base_url


def test_an_unknown_key_names_the_table_the_file_and_the_nearest_key(tmp_path: Path) -> None:
    pm = manager(tmp_path, "[models.anthropic]\nmax_token = 77\n")
    with pytest.raises(
        ConfigError, match=r"unknown key 'max_token' in \[models.anthropic\] in "
    ) as e:
        resolve_model("anthropic:claude-test", manager=pm)
    assert "did you mean 'max_tokens'?" in str(e.value) and "agentkit.toml" in str(e.value)


def test_a_value_of_the_wrong_kind_is_named(tmp_path: Path) -> None:
    pm = manager(tmp_path, '[models.gemini]\ntimeout = "soon"\n')
    with pytest.raises(ConfigError, match=r"timeout.*\[models.gemini\].*a number"):
        resolve_model("gemini:gemini-test", manager=pm)


@settings(max_examples=30, deadline=None)
@given(key=st.from_regex(r"[a-z][a-z_]{0,15}", fullmatch=True))
def test_no_key_outside_a_providers_settings_is_taken(key: str) -> None:
    from agentkit_model_openai import OpenAIOptions

    known = set(OpenAIOptions.__annotations__)
    pm = PluginManager(config=_file({"openai": {key: "x"}}))
    if key in known:
        return  # a known key with a string: checked by kind, not by name
    with pytest.raises(ConfigError, match=f"unknown key {key!r} in \\[models.openai\\]"):
        resolve_model("openai:gpt-test", manager=pm)


def _file(models: dict[str, dict[str, str]]) -> Path:
    import tempfile

    lines = []
    for prefix, table in models.items():
        lines.append(f"[models.{prefix}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    handle = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False, encoding="utf-8")
    with handle:
        handle.write("\n".join(lines) + "\n")
    return Path(handle.name)


def test_agentkit_run_builds_the_model_from_the_file(tmp_path: Path) -> None:
    server = WireServer(ANTHROPIC)
    try:
        server.json("plain.json")
        (tmp_path / "agentkit.toml").write_text(
            f'[models.anthropic]\nbase_url = "{server.url}"\nmax_tokens = 321\n', encoding="utf-8"
        )
        done = run_cli(
            "run",
            "Say hi",
            "--model",
            "anthropic:claude-test",
            "--quiet",
            cwd=tmp_path,
            ANTHROPIC_API_KEY="sk-test",
        )
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    [sent] = server.received
    assert sent.json()["max_tokens"] == 321 and sent.json()["model"] == "claude-test"
