"""An Agent and ``agentkit run`` on ``openai:...`` models, served by the local wire server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from agentkit_model_openai import OpenAIModel

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ModelDeadlineExceeded
from agentkit_core import ToolCall
from agentkit_core import open_checkpointer
from agentkit_core.plugin import FAILED

ROOT = Path(__file__).resolve().parents[3]


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name
    """
    return {"Paris": "sunny, 21C", "Rome": "cloudy, 18C"}[city]


async def test_agent_runs_a_tool_turn_and_answers(
    server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.json("error_429.json", status=429, headers={"Retry-After": "0.3"})
    server.json("tool_calls.json")
    server.json("plain.json")
    agent = Agent("weather", "openai:test-model", "Be brief.", [get_weather], hooks=Hooks())
    result = await agent.run("Weather in Paris and Rome?")
    assert result.output == "The capital of France is Paris."
    assert result.usage.input_tokens == 81 + 24
    limited, first, second = (r.json() for r in server.received)
    assert limited == first  # the default retry middleware sent the same request again
    assert first["model"] == "test-model"
    assert first["tools"][0]["function"]["name"] == "get_weather"
    assert first["tools"][0]["function"]["parameters"]["properties"]["city"]["type"] == "string"
    assert second["messages"][-3:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_Wx1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                },
                {
                    "id": "call_Wx2",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
                },
            ],
        },
        {"role": "tool", "content": "sunny, 21C", "tool_call_id": "call_Wx1"},
        {"role": "tool", "content": "cloudy, 18C", "tool_call_id": "call_Wx2"},
    ]
    assert server.received[1].at - server.received[0].at >= 0.3
    assert result.transcript[-1] == Message.assistant("The capital of France is Paris.")
    assert ToolCall("call_Wx1", "get_weather", '{"city": "Paris"}') in (
        result.transcript[-4].tool_calls
    )


def test_cli_run_with_an_openai_model(server: Any) -> None:
    server.sse("calculate_call.sse")  # agentkit run streams its model calls
    server.sse("answer_42.sse")
    env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-cli"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentkit_core",
            "run",
            "What is 6 * 7?",
            "--model",
            "openai:x",
            "--tools",
            "examples.tools:TOOLS",
            "--temperature",
            "0.2",
            "--max-tokens",
            "300",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "6 * 7 is 42.\n"
    assert "TestModel" not in proc.stderr
    first, second = (r.json() for r in server.received)
    assert first["model"] == "x"
    for body in (first, second):
        assert (body["temperature"], body["max_completion_tokens"]) == (0.2, 300)
    assert server.received[0].headers["authorization"] == "Bearer sk-cli"
    assert "calculate" in {t["function"]["name"] for t in first["tools"]}
    assert first["messages"][-1] == {"role": "user", "content": "What is 6 * 7?"}
    tool_result = second["messages"][-1]
    assert (tool_result["role"], tool_result["tool_call_id"]) == ("tool", "call_Ca1")
    assert "42" in tool_result["content"]


def test_cli_run_settings_go_over_the_files_key_by_key(server: Any, tmp_path: Path) -> None:
    server.sse("answer_42.sse")
    config = tmp_path / "agentkit.toml"
    config.write_text("[kit]\n[kit.settings]\ntemperature = 0.9\ntop_p = 0.5\n")
    env = {
        **os.environ,
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": "sk-cli",
        "AGENTKIT_CONFIG": str(config),
    }
    argv = ["run", "What is 6 * 7?", "--model", "openai:x", "--temperature", "0.2"]
    proc = subprocess.run(
        [sys.executable, "-m", "agentkit_core", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    [body] = (r.json() for r in server.received)
    assert (body["temperature"], body["top_p"]) == (0.2, 0.5)


async def test_agent_run_stream_retries_a_429_and_streams_each_call(
    server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    server.json("error_429.json", status=429, headers={"Retry-After": "0.2"})
    server.sse("whole_tool_calls.sse")
    server.sse("plain.sse")
    agent = Agent("weather", "openai:llama3.2", "Be brief.", [get_weather], hooks=Hooks())
    events = [event async for event in agent.run_stream("Weather in Paris and Rome?")]
    kinds = [e.kind for e in events]
    # each whole call is told as its chunk arrives, and comes complete at the stream's end
    assert kinds[:5] == ["tool_call_delta", "tool_call_delta", "tool_call", "tool_call", "done"]
    assert "".join(e.text for e in events if e.kind == "text") == "The capital of France is Paris."
    assert kinds[-2:] == ["done", "result"]
    result = events[-1].result
    assert result is not None and result.output == "The capital of France is Paris."
    bodies = [r.json() for r in server.received]
    assert len(bodies) == 3 and all(b["stream"] is True for b in bodies)
    assert bodies[0] == bodies[1]
    assert [m["content"] for m in bodies[2]["messages"][-2:]] == ["sunny, 21C", "cloudy, 18C"]
    assert server.received[1].at - server.received[0].at >= 0.2


async def test_a_stream_of_keepalives_forever_ends_at_the_deadline_and_is_checkpointed(
    server: Any, tmp_path: Path, pm
) -> None:
    server.sse("whole_tool_calls.sse")  # turn 1: a tool turn, checkpointed RUNNING
    server.keepalives(0.05)  # turn 2: the stream opens, then only ": keep-alive", forever
    model = OpenAIModel("test-model", base_url=server.url, timeout=1.0)
    cp = await open_checkpointer(f"sqlite:///{tmp_path}/runs.db", manager=pm)
    agent = Agent(
        "weather",
        model,
        "Be brief.",
        [get_weather],
        hooks=Hooks(),
        checkpointer=cp,
        model_deadline=1.5,
    )
    started = time.monotonic()
    with pytest.raises(
        ModelDeadlineExceeded, match=r"'openai:test-model' gave no answer within 1\.5 s"
    ):
        async for _ in agent.run_stream("Weather in Paris and Rome?", ctx=agent.new_context("ka")):
            pass
    assert time.monotonic() - started < 6  # each comment reset the 1 s read timeout; not this
    failed = await cp.resume("ka", include_terminal=True)
    assert failed is not None and failed.status == FAILED
    assert [m.role for m in failed.state["transcript"]][-3:] == ["assistant", "tool", "tool"]
    await cp.aclose()
