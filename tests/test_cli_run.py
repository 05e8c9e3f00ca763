"""`agentkit run` on the built-in TestModel and the example tools.

Every error is one line on stderr with exit code 2, never a traceback; kit settings come from
the project's agentkit.toml, with the command line on top. The commands run in this process
through ``main``, which ``python -m agentkit_core`` exits with; the tests of usage errors, an
unexpected exception's traceback, a tools module's import and disabled plugins run subprocesses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import PluginManager
from agentkit_core.cli import main
from tests.conftest import main_cli

ROOT = Path(__file__).resolve().parent.parent


def agentkit(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    """``agentkit ARGS`` in this process (:func:`tests.conftest.main_cli`)."""
    return main_cli(*args, cwd=cwd, **env)


def in_a_process(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    """``agentkit ARGS`` in a subprocess: what the shell sees (exit code, stderr, imports)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKIT_")}
    full["PYTHONPATH"] = str(ROOT)  # examples.tools and tests.cli_types, from any directory
    full.update(env)
    return subprocess.run(
        [sys.executable, "-m", "agentkit_core", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=full,
    )


def one_error(proc: subprocess.CompletedProcess[str], *parts: str) -> str:
    """The run failed with exit code 2 and one error line (no traceback) holding ``parts``.

    The demo notice and the run's step lines (``agentkit: [turn] ...``) are not errors.
    """
    lines = [
        line
        for line in proc.stderr.splitlines()
        if "demo run" not in line and not line.startswith("agentkit: [")
    ]
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(lines) == 1 and "error: " in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


def test_run_without_a_model_says_so_and_uses_the_tools() -> None:
    proc = agentkit("run", "What is 6 * 7?", "--tools", "examples.tools:TOOLS")
    assert proc.returncode == 0, proc.stderr
    assert "demo run on the built-in TestModel" in proc.stderr
    assert proc.stdout.startswith("TestModel answer after 4 tool result(s)")
    assert "calculate" in proc.stdout


def test_run_with_typed_output_prints_json() -> None:
    proc = agentkit("run", "plan", "--output", "tests.cli_types:Plan")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"subject", "steps"}


def test_bad_tool_spec_is_a_clear_error() -> None:
    one_error(agentkit("run", "x", "--tools", "examples.tools:NOPE"), "'examples.tools' has no")
    one_error(agentkit("run", "x", "--tools", "examples.tools"), "is not MODULE:ATTR")


@pytest.mark.parametrize(
    ("source", "raised"),
    [
        ("raise RuntimeError('boom')\n", "RuntimeError: boom"),
        ("def broken(:\n", "SyntaxError"),
        ("import no_such_module_here\n", "cannot import 'exploding'"),
    ],
)
def test_a_tools_module_that_fails_to_import_is_one_line(
    source: str, raised: str, tmp_path: Path
) -> None:
    (tmp_path / "exploding.py").write_text(source)
    proc = in_a_process("run", "x", "--model", "test", "--tools", "exploding:TOOLS", cwd=tmp_path)
    one_error(proc, "--tools 'exploding:TOOLS'", raised)


@pytest.mark.parametrize("task", ["", "   ", "\n\t"])
def test_an_empty_task_is_refused(task: str) -> None:
    one_error(agentkit("run", task, "--model", "test"), "the task is empty")


def test_max_turns_advice_is_in_the_cli_spelling() -> None:
    proc = agentkit(
        "run", "x", "--model", "test", "--tools", "examples.tools:TOOLS", "--max-turns", "1"
    )
    line = one_error(proc, "--max-turns 1", "pass a larger --max-turns")
    assert "max_turns=" not in line


@pytest.mark.parametrize("value", ["0", "-3", "many", "1.5"])
def test_a_bad_max_turns_is_a_usage_error(value: str) -> None:
    proc = agentkit("run", "x", "--model", "test", f"--max-turns={value}")
    one_error(proc, "argument --max-turns", repr(value), "see agentkit run --help")


def test_an_empty_agentkit_model_names_the_variable() -> None:
    one_error(agentkit("run", "x", AGENTKIT_MODEL=""), "AGENTKIT_MODEL is set but empty")


def test_a_builtin_output_type_does_not_ask_for_installed_flavours() -> None:
    line = one_error(agentkit("run", "x", "--model", "test", "--output", "builtins:int"))
    assert "no installed schema flavour accepts <class 'int'>" in line
    assert "agentkit-schema-pydantic" not in line  # it is installed


def test_a_disabled_plugin_is_not_reported_as_missing() -> None:
    proc = in_a_process(
        "run", "x", "--model", "openai:gpt-4o-mini", AGENTKIT_DISABLE_PLUGINS="openai"
    )
    line = one_error(proc, "plugin 'openai' (agentkit-model-openai) is installed but disabled")
    assert "AGENTKIT_DISABLE_PLUGINS" in line
    proc = in_a_process("run", "x", "--compactor", "keep", AGENTKIT_DISABLE_PLUGINS="truncation")
    one_error(proc, "disabled plugins are not imported", "truncation (in the deny-list")


@pytest.mark.parametrize(
    ("table", "typo", "words"),
    [
        (
            '[kit]\ncompactor = "truncation"\n[kit.compactor_options]\nmax_tokns = 5\n',
            "unknown key 'max_tokns' in [kit.compactor_options] in {file} (compactor "
            "'truncation'); did you mean 'max_tokens'?",
            "agentkit.toml",
        ),
        (  # the guard plugins build through a lazy **options wrapper
            '[tool.agentkit.kit]\nguards = ["max-input"]\n'
            "[tool.agentkit.kit.guard_options.max-input]\nmax_tokns = 5\n",
            "unknown key 'max_tokns' in [tool.agentkit.kit.guard_options.max-input] in {file} "
            "(guard 'max-input'); did you mean 'max_tokens'?",
            "pyproject.toml",
        ),
        (
            '[kit]\nguards = ["denylist"]\n[kit.guard_options.denylist]\ntrems = ["x"]\n',
            "unknown key 'trems' in [kit.guard_options.denylist] in {file} (guard 'denylist'); "
            "did you mean 'terms'?",
            "agentkit.toml",
        ),
    ],
)
def test_a_plugin_option_typo_in_the_file_names_the_key_the_file_and_the_nearest(
    table: str, typo: str, words: str, tmp_path: Path
) -> None:
    file = tmp_path / words
    file.write_text(table)
    line = one_error(agentkit("run", "x", "--model", "test", cwd=tmp_path))
    assert typo.format(file=file) in line
    assert "unexpected" not in line and "TypeError" not in line


def test_compactor_by_name() -> None:
    proc = agentkit("run", "What is 6 * 7?", "--model", "test", "--compactor", "truncation")
    assert proc.returncode == 0, proc.stderr
    one_error(
        agentkit("run", "x", "--model", "test", "--compactor", "nope"),
        "no compactor named 'nope' is installed",
        "truncation",
    )


def test_kit_settings_come_from_agentkit_toml(tmp_path: Path) -> None:
    (tmp_path / "agentkit.toml").write_text(
        '[kit]\nmodel = "test"\nmax_turns = 1\ncompactor = "truncation"\n'
        "compactor_options = { max_tokens = 2000 }\n"
    )
    proc = agentkit("run", "x", "--tools", "examples.tools:TOOLS", cwd=tmp_path)
    one_error(proc, "--max-turns 1")  # the file's max_turns
    assert "demo run" not in proc.stderr  # the file's model
    proc = agentkit("run", "x", "--tools", "examples.tools:TOOLS", "--max-turns", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr  # the command line wins
    # the file's compactor_options were for truncation; they are not handed to another one
    proc = agentkit("run", "x", "--max-turns", "3", "--compactor", "sliding-window", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = agentkit("run", "x", "--model", "nope:x", cwd=tmp_path)
    one_error(proc, "no model named 'nope'")


def test_the_environment_model_replaces_the_files(tmp_path: Path) -> None:
    (tmp_path / "agentkit.toml").write_text('[kit]\nmodel = "nope:x"\n')
    one_error(agentkit("run", "x", cwd=tmp_path), "no model named 'nope'")
    proc = agentkit("run", "x", cwd=tmp_path, AGENTKIT_MODEL="test")
    assert proc.returncode == 0, proc.stderr


def test_a_bad_kit_setting_in_the_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "agentkit.toml").write_text('[kit]\nmodel = "test"\ncompactr = "truncation"\n')
    one_error(agentkit("run", "x", cwd=tmp_path), "compactr")
    (tmp_path / "agentkit.toml").write_text('[kit]\nmodel = "test"\ncompactor = "nope"\n')
    one_error(agentkit("run", "x", cwd=tmp_path), "no compactor named 'nope'")


def test_kit_settings_under_tool_agentkit_in_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.agentkit.kit]\nmodel = "test"\nmax_turns = 1\n'
    )
    one_error(
        agentkit("run", "x", "--tools", "examples.tools:TOOLS", cwd=tmp_path), "--max-turns 1"
    )


def test_usage_errors_are_one_line() -> None:
    one_error(in_a_process("run"), "agentkit: error: the task is empty")
    one_error(in_a_process("run", "--max-turns", "0"), "agentkit run: error: argument --max-turns")
    one_error(in_a_process("nope"), "invalid choice: 'nope'", "see agentkit --help")
    one_error(in_a_process("plugins", "show"), "see agentkit plugins show --help")


def test_an_unexpected_exception_is_one_line_unless_asked(tmp_path: Path) -> None:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "boom.py").write_text(
        "from agentkit_core import hookimpl\n"
        "def run(args):\n"
        "    raise RuntimeError('the disk is on fire')\n"
        "@hookimpl\n"
        "def agentkit_register_commands(cli):\n"
        "    cli.add_parser('boom').set_defaults(func=run)\n"
    )
    (tmp_path / "agentkit.toml").write_text('plugins_dir = "plugins"\nload = ["boom"]\n')
    one_error(in_a_process("boom", cwd=tmp_path), "RuntimeError: the disk is on fire", "unexpected")
    proc = in_a_process("boom", cwd=tmp_path, AGENTKIT_TRACEBACK="1")
    assert proc.returncode == 1 and "Traceback" in proc.stderr


TOKENS = st.sampled_from(
    ["run", "plugins", "list", "show", "check", "new", "hooks", "--json", "--model", "test",
     "--max-turns", "0", "2", "--tools", "x:y", "examples.tools:TOOLS", "--output", "--prompt",
     "--compactor", "truncation", "compactor", "task", "", "-", "--", "--help-me", "é"]
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(argv=st.lists(TOKENS, max_size=6))
def test_any_command_line_returns_a_code_and_never_raises(argv: list[str]) -> None:
    cwd, path = os.getcwd(), list(sys.path)
    with tempfile.TemporaryDirectory() as scratch:  # `plugins new` may write into it
        os.chdir(scratch)
        try:
            code = main(argv, manager=PluginManager(entry_points=False))
        finally:
            os.chdir(cwd)
            sys.path[:] = path  # --tools puts the working directory on it
    assert code in (0, 1, 2)


def test_a_setting_out_of_range_is_one_line() -> None:
    proc = agentkit("run", "x", "--model", "test", "--max-tokens", "0")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "agentkit: error: max_tokens in agentkit run's --temperature/--max-tokens must be an "
        "integer from 1, got 0 (int)"
    ]
    assert proc.stdout == ""


def test_run_with_a_session_records_it_and_resume_continues_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/sessions.db"
    first = agentkit("run", "hello", "--model", "test", "--session", url)
    assert first.returncode == 0, first.stderr
    [line] = [ln for ln in first.stderr.splitlines() if ln.startswith("agentkit: session ")]
    session = line.split()[-1]
    second = agentkit("run", "again", "--model", "test", "--session", url, "--resume", session)
    assert second.returncode == 0, second.stderr
    assert "agentkit: session" not in second.stderr  # a new session's id only
    export = agentkit("sessions", "export", session, "--store", url)
    assert export.returncode == 0, export.stderr
    items = [json.loads(ln) for ln in export.stdout.splitlines()]
    assert [i["kind"] for i in items] == ["header", "user", "response", "user", "response"]
    assert items[0]["body"]["model"] == "test"
    assert [i["body"]["message"]["content"] for i in items if i["kind"] == "user"] == [
        "hello",
        "again",
    ]


def test_run_resume_errors_name_what_is_missing(tmp_path: Path) -> None:
    alone = agentkit("run", "x", "--model", "test", "--resume", "abc")
    assert alone.returncode == 2
    assert "--resume needs --store URL" in alone.stderr and "or --session URL" in alone.stderr
    url = f"sqlite:///{tmp_path}/sessions.db"
    missing = agentkit("run", "x", "--model", "test", "--session", url, "--resume", "abc")
    assert missing.returncode == 2
    assert f"no session 'abc' in {url}" in missing.stderr


BLANKS = st.sampled_from(["", " ", "\t", "\n", "\u3000", " \u2003 "])


def _blank_command_lines(url: str) -> list[tuple[list[str], str]]:
    """Command lines, each with one option given as ``{}`` (blank), and that option."""
    run = ["run", "x", "--model", "test"]
    return [
        (["run", "x", "--model", "{}"], "--model"),
        ([*run, "--session", url, "--resume", "{}"], "--resume"),
        ([*run, "--session", "{}"], "--session"),
        (["run", "--model", "test", "--store", url, "--resume", "{}"], "--resume"),
        (["run", "--model", "test", "--store", "{}", "--resume", "r"], "--store"),
        ([*run, "--tools", "{}"], "--tools"),
        ([*run, "--mcp", "{}"], "--mcp"),
        ([*run, "--compactor", "{}"], "--compactor"),
        ([*run, "--trace", "{}"], "--trace"),
        ([*run, "--attach", "{}"], "--attach"),
        (["chat", "--model", "test", "--session", url, "--resume", "{}"], "--resume"),
        (["chat", "--model", "test", "--session", "{}"], "--session"),
        (["sessions", "list", "--store", "{}"], "--store"),
    ]


@settings(max_examples=30, deadline=None)
@given(blank=BLANKS, which=st.integers(0, 12))
def test_an_option_given_blank_is_refused_not_read_as_left_out(blank: str, which: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        url = f"sqlite:///{scratch}/sessions.db"
        argv, flag = _blank_command_lines(url)[which]
        argv = [blank if word == "{}" else word for word in argv]
        # a store in the environment: --store "" must not fall back to it
        env = {"AGENTKIT_SESSION_STORE": url, "AGENTKIT_MODEL": "test"}
        proc = agentkit(*argv, cwd=Path(scratch), **env)  # a file a blank names lands there
        one_error(proc, f"{flag} was given an empty value ({blank!r})", "leave it out")
        assert proc.stdout == ""
        assert not Path(scratch, "sessions.db").exists()  # nothing opened, nothing recorded


def test_resume_given_empty_does_not_start_a_new_session(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/sessions.db"
    first = agentkit("run", "hello", "--model", "test", "--session", url)
    assert first.returncode == 0, first.stderr
    again = agentkit("run", "more", "--model", "test", "--session", url, "--resume", "")
    one_error(again, "--resume was given an empty value ('')")
    listed = agentkit("sessions", "list", "--store", url)
    assert len(listed.stdout.splitlines()) == 1  # no second session was started
