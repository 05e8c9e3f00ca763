"""``agentkit run`` showing its work and ``agentkit view``, on real stores.

The commands run in this process through ``main`` (:func:`tests.conftest.main_cli`), which
``python -m agentkit_core`` exits with; the warnings test runs a subprocess (a warning shows
once per process).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import main_cli
from tests.conftest import run_cli
from tests.view_runs import POLICY_PLUGIN

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("--tools", "tests.view_runs:CLI_TOOLS")


def agentkit(*args: str, **kwargs: Any) -> Any:
    return main_cli(*args, cwd=ROOT, **kwargs)


@pytest.fixture
def policy_site(make_site: Any) -> Path:
    """A site holding one plugin that asks before every transfer."""
    site = make_site("policy")
    site.add("agentkit-test-policy", {"policy": "akt_policy"}, {"akt_policy": POLICY_PLUGIN})
    return Path(site.path)


def test_run_prints_a_line_per_step_and_the_answer_alone_on_stdout() -> None:
    proc = agentkit("run", "look up ann", *TOOLS, "--model", "test")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("TestModel answer after 2 tool result(s)")
    steps = [line for line in proc.stderr.splitlines() if line.startswith("agentkit: [")]
    assert steps[0].startswith("agentkit: [1] model test calls lookup, transfer, ")
    assert "tokens" in steps[0]
    assert any(line.startswith("agentkit: [1]   tool lookup {") for line in steps)
    assert any(re.search(r"\[1\]   -> lookup: \d+ chars", line) for line in steps)
    assert steps[-1].startswith("agentkit: [2] model test answers")


def test_quiet_prints_only_the_answer() -> None:
    proc = agentkit("run", "look up ann", *TOOLS, "--model", "test", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and proc.stdout.startswith("TestModel answer")


def test_json_prints_the_whole_result() -> None:
    proc = agentkit("run", "look up ann", *TOOLS, "--model", "test", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {
        "run_id",
        "status",
        "stop_reason",
        "output",
        "usage",
        "pending",
        "transcript",
    }
    assert data["status"] == "done" and data["pending"] == []
    assert data["output"].startswith("TestModel answer")
    assert [m["role"] for m in data["transcript"]] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert data["usage"]["requests"] == 2


def test_a_suspended_run_says_what_waits_and_the_command_that_approves_it(
    policy_site: Path, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    proc = agentkit(
        "run", "pay bob", *TOOLS, "--model", "test", "--store", store, pythonpath=[policy_site]
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert "suspended: policy: a person approves transfers" in proc.stderr
    pending = [line for line in proc.stderr.splitlines() if "pending " in line]
    assert len(pending) == 1 and "transfer" in pending[0]
    approve = next(line for line in proc.stderr.splitlines() if "approve with:" in line)
    command = shlex.split(approve.split("approve with: ", 1)[1].split(" (--deny")[0])
    assert command[:2] == ["agentkit", "run"] and "--approve" in command
    # pasted as shown, with nothing added: it carries the tools and model the run needs
    again = agentkit(*command[1:], pythonpath=[policy_site])
    assert again.returncode == 0, again.stderr
    assert "TestModel answer" in again.stdout
    assert "unknown tool" not in again.stdout + again.stderr
    # the checkpointed run is viewable from its store
    run_id = command[command.index("--resume") + 1]
    page = tmp_path / "page.html"
    view = agentkit("view", run_id, "--store", store, "--out", str(page))
    assert view.returncode == 0, view.stderr
    assert view.stdout.strip() == str(page)
    text = page.read_text()
    assert text.count('<section class="turn') == 2
    assert "moved" in text  # the approved transfer's result


def test_a_finished_checkpointed_run_prints_its_id_and_the_view_command(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    proc = agentkit("run", "look up ann", *TOOLS, "--model", "test", "-q", "--store", store)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("TestModel answer")  # stdout holds the answer alone
    (line,) = proc.stderr.splitlines()
    assert line.startswith("agentkit: run ") and f"done, checkpointed in {store}" in line
    command = shlex.split(line.split(": ", 2)[2].removesuffix(" shows it"))
    assert command[:2] == ["agentkit", "view"]
    page = tmp_path / "page.html"
    view = agentkit(*command[1:], "--out", str(page))  # pasted as printed
    assert view.returncode == 0, view.stderr
    assert page.read_text().count('<section class="turn') == 2


def test_the_printed_store_url_is_masked() -> None:
    proc = agentkit("run", "hi", "--model", "test", "-q", "--store", "memory://ann:hunter2@x")
    assert proc.returncode == 0, proc.stderr
    assert "checkpointed in memory://ann:***@x" in proc.stderr and "hunter2" not in proc.stderr


def test_a_denied_call_is_refused_and_the_model_sees_it(policy_site: Path, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    first = agentkit(
        "run",
        "pay bob",
        *TOOLS,
        "--model",
        "test",
        "--store",
        store,
        "--json",
        pythonpath=[policy_site],
    )
    assert first.returncode == 1
    data = json.loads(first.stdout)
    assert data["status"] == "suspended"
    (call,) = data["pending"]
    second = agentkit(
        "run",
        "--store",
        store,
        "--resume",
        data["run_id"],
        "--deny",
        call["id"],
        *TOOLS,
        "--model",
        "test",
        "--json",
        pythonpath=[policy_site],
    )
    assert second.returncode == 0, second.stderr
    results = [m for m in json.loads(second.stdout)["transcript"] if m["role"] == "tool"]
    assert any("refused by a person" in m["content"] for m in results)


def held_run(policy_site: Path, store: str) -> tuple[str, str]:
    """A run of ``pay bob`` checkpointed in ``store``, held on its transfer: its id, the call's."""
    proc = agentkit(
        "run", "pay bob", *TOOLS, "--model", "test", "--store", store, "--json", "-q",
        pythonpath=[policy_site],
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    (call,) = data["pending"]
    return data["run_id"], call["id"]


@pytest.mark.parametrize("answer", ["--approve", "--deny"])
def test_a_resumed_run_prints_its_events(answer: str, policy_site: Path, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    run_id, call = held_run(policy_site, store)
    resumed = ("run", "--store", store, "--resume", run_id, answer, call, *TOOLS, "--events")
    proc = agentkit(*resumed, "--model", "test", pythonpath=[policy_site])
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    seqs = [event["seq"] for event in events]
    assert seqs == sorted(set(seqs)) and {event["run_id"] for event in events} == {run_id}
    assert events[0]["kind"] == "run_started" and events[-1]["kind"] == "run_finished"
    kinds = [event["kind"] for event in events]
    tool = [e for e in events if e["kind"].startswith("tool_") and e["call_id"] == call]
    ended = [(e["kind"], e.get("is_error")) for e in tool]
    (answered,) = [e for e in events if e["kind"] == "approval_answered"]
    assert answered["approved"] is (answer == "--approve")
    if answer == "--approve":
        assert ended == [("tool_started", None), ("tool_finished", False)]
    else:  # a refused call does not run, and still ends in its tool_finished
        assert ended == [("tool_finished", True)]
    assert kinds.index("approval_answered") < kinds.index("tool_finished")


def test_a_resumed_run_streams_its_answer_as_a_fresh_one_does(
    policy_site: Path, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    run_id, call = held_run(policy_site, store)
    resumed = ("run", "--store", store, "--resume", run_id, "--approve", call, *TOOLS)
    proc = agentkit(*resumed, "--model", "test", pythonpath=[policy_site])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("TestModel answer") == 1  # streamed, not printed again
    assert f"agentkit: call {call} approved by person" in proc.stderr.splitlines()


def test_a_suspended_run_without_a_store_says_how_to_keep_it(policy_site: Path) -> None:
    proc = agentkit("run", "pay bob", *TOOLS, "--model", "test", pythonpath=[policy_site])
    assert proc.returncode == 1
    assert "was not checkpointed" in proc.stderr and "--store" in proc.stderr


def test_trace_then_view(tmp_path: Path) -> None:
    trace, page = tmp_path / "t.jsonl", tmp_path / "t.html"
    proc = agentkit("run", "look up ann", *TOOLS, "--model", "test", "-q", "--trace", str(trace))
    assert proc.returncode == 0, proc.stderr
    view = agentkit("view", str(trace), "--out", str(page))
    assert view.returncode == 0, view.stderr
    text = page.read_text()
    assert text.count('<section class="turn') == 2
    assert 'data-call-id="call_0_lookup"' in text and 'data-call-id="call_1_transfer"' in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("view", "no-such-trace.jsonl"), "is not a trace file"),
        (("run", "--resume", "abc"), "--resume needs --store"),
        (("run", "x", "--approve", "c1"), "pass --resume RUN_ID"),
        (
            ("run", "--store", "memory://", "--resume", "r", "--approve", "a", "--deny", "a"),
            "both approved and denied: a",
        ),
        (("run", "task", "--store", "memory://", "--resume", "r"), "drop the TASK"),
        (("run", "x", "--trace", "/no/such/dir/t.jsonl"), "cannot write the trace file"),
    ],
)
def test_bad_options_are_one_line_errors(args: tuple[str, ...], message: str) -> None:
    proc = agentkit(*args, "--model", "test") if args[0] == "run" else agentkit(*args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_view_of_an_unknown_run_names_it(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    proc = agentkit("view", "nope", "--store", store, "--out", str(tmp_path / "x.html"))
    assert proc.returncode == 2
    assert f"run 'nope' has no checkpoint in {store};" in proc.stderr


@pytest.mark.parametrize("store", ["memory://ann:hunter2@x", "sqlite:///{tmp}/runs.db"])
def test_resuming_an_unknown_run_names_the_store_by_its_masked_url(
    store: str, tmp_path: Path
) -> None:
    store = store.format(tmp=tmp_path)
    proc = agentkit("run", "--store", store, "--resume", "nope", "--model", "test")
    assert proc.returncode == 2, proc.stderr
    shown = store.replace("hunter2", "***")
    assert f"cannot resume run 'nope': it has no checkpoint in {shown}; " in proc.stderr
    assert "<" not in proc.stderr and "hunter2" not in proc.stderr  # no object repr


SLEEPY_PLUGIN = """
import time, warnings
from agentkit_core import hookimpl


@hookimpl
def agentkit_before_tool_call(ctx, call):
    time.sleep(0.6)  # blocks the event loop past 5 x Hooks.slow


@hookimpl
def agentkit_after_tool_call(ctx, call, result):
    warnings.warn("a library's notice\\nover two lines", FutureWarning)
"""


def test_warnings_are_one_agentkit_line_each(make_site: Any) -> None:
    site = make_site("sleepy")
    site.add("agentkit-test-sleepy", {"sleepy": "akt_sleepy"}, {"akt_sleepy": SLEEPY_PLUGIN})
    proc = run_cli(
        "run",
        "look up ann",
        "--tools",
        "tests.view_runs:CLI_TOOLS",
        "--model",
        "test",
        "-q",
        pythonpath=[Path(site.path), ROOT],
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert all(line.startswith("agentkit: warning: ") for line in lines), proc.stderr
    slow = [line for line in lines if "SlowHookWarning" in line or "plugin 'sleepy'" in line]
    assert len(slow) == 1 and "before_tool_call of plugin 'sleepy'" in slow[0]
    assert "agentkit: warning: FutureWarning: a library's notice over two lines" in lines
