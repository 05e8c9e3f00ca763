"""The Gemini wire converters: transcripts to ``contents`` and back, settings, usage."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from agentkit_model_gemini import messages_from_gemini
from agentkit_model_gemini import messages_to_gemini
from agentkit_model_gemini import settings_to_gemini
from agentkit_model_gemini import usage_from_gemini
from google.genai import types
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.plugin import REASONING
from agentkit_core.plugin import decode_state
from agentkit_core.plugin import encode_state

MODEL = "gemini:gemini-3-pro-preview"

texts = st.text(max_size=12)
signatures = st.binary(min_size=1, max_size=12).map(lambda b: base64.b64encode(b).decode())
scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | texts
arguments = st.dictionaries(st.text(min_size=1, max_size=6), scalars, max_size=3)


def _image(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def _file(data_url: str) -> dict[str, Any]:
    return {"type": "file", "file": {"file_data": data_url}}


b64_data = st.binary(max_size=8).map(lambda b: base64.b64encode(b).decode())
media = st.one_of(
    b64_data.map(lambda d: _image(f"data:image/png;base64,{d}")),
    st.sampled_from(["https://example.com/a.png", "gs://bucket/b.jpg"]).map(_image),
    b64_data.map(lambda d: {"type": "input_audio", "input_audio": {"data": d, "format": "wav"}}),
    b64_data.map(lambda d: _file(f"data:application/pdf;base64,{d}")),
)


@st.composite
def user_message(draw: st.DrawFn) -> Message:
    if draw(st.booleans()):
        return Message.user(draw(texts))
    return Message.user(({"type": "text", "text": draw(texts)}, draw(media)))


@st.composite
def assistant_turn(draw: st.DrawFn, first_call: int) -> list[Message]:
    """An assistant message (with its reasoning when it has any) and the results of its calls."""
    generated = draw(st.booleans())
    names = draw(st.lists(st.sampled_from(["get_weather", "get_time", "f"]), max_size=3))
    calls = [
        ToolCall(
            f"call_{i}" if generated else f"fc_{first_call + i}",
            name,
            json.dumps(draw(arguments), ensure_ascii=False),
        )
        for i, name in enumerate(names)
    ]
    # the parts in the order the API sent them: thoughts, text pieces, calls, in any order
    kinds = draw(st.lists(st.sampled_from(["thought", "text"]), max_size=4))
    order = draw(st.permutations(kinds + ["call"] * len(calls)))
    entries: list[dict[str, Any]] = []
    pieces: list[str] = []
    call_index = 0
    for position, kind in enumerate(order):
        entry: dict[str, Any]
        if kind == "call":
            entry = {"call": calls[call_index].id}
            call_index += 1
        elif kind == "thought":
            entry = {"thought": draw(texts)}
        else:
            piece = draw(texts)
            pieces.append(piece)
            entry = {"text": len(piece)}
        # a piece ends where its signature is, or where another kind of part starts
        same_next = position + 1 < len(order) and order[position + 1] == kind != "call"
        if same_next or draw(st.booleans()):
            entry["signature"] = draw(signatures)
        entries.append(entry)
    message = Message.assistant("".join(pieces), calls)
    if any("thought" in e or "signature" in e for e in entries):
        message.metadata[REASONING] = {"model": MODEL, "parts": entries}
    if generated and calls:
        message.metadata["gemini"] = {"generated_ids": [c.id for c in calls]}
    results = [
        Message.tool(c.id, draw(texts), name=c.name, is_error=draw(st.booleans())) for c in calls
    ]
    if results and draw(st.booleans()):
        first = results[0]
        content = ({"type": "text", "text": draw(texts) + "x"}, draw(media))
        results[0] = Message.tool(first.tool_call_id or "", content, name=first.name)
    return [message, *results]


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    messages = [Message.system(draw(texts)) for _ in range(draw(st.integers(0, 2)))]
    for turn in range(draw(st.integers(1, 4))):
        messages.append(draw(user_message()))
        if draw(st.booleans()):
            messages.extend(draw(assistant_turn(turn * 10)))
    return messages


def _with_metadata(messages: list[Message]) -> list[tuple[Message, dict[str, Any]]]:
    return [(m, m.metadata) for m in messages]


@settings(max_examples=150, deadline=None)
@given(transcripts())
def test_every_transcript_goes_to_the_wire_and_back_unchanged(messages: list[Message]) -> None:
    system, contents = messages_to_gemini(messages, model=MODEL)
    back = messages_from_gemini(system, contents, model=MODEL)
    assert _with_metadata(back) == _with_metadata(messages)
    # the SDK takes the wire form as it is, and the reasoning survives the state encoder
    for content in contents:
        types.Content.model_validate(content)
    assert decode_state(json.loads(json.dumps(encode_state(back)))) == back


@settings(max_examples=60, deadline=None)
@given(transcripts())
def test_the_sdk_reads_back_what_it_was_given(messages: list[Message]) -> None:
    """Through the SDK's own types (signatures as bytes) the turn reads back the same."""
    system, contents = messages_to_gemini(messages, model=MODEL)
    typed = [types.Content.model_validate(c).model_dump(exclude_none=True) for c in contents]
    back = messages_from_gemini(system, typed, model=MODEL)
    assert _with_metadata(back) == _with_metadata(messages)


def test_an_edited_message_keeps_its_thoughts_and_its_call_signatures() -> None:
    call = ToolCall("fc_1", "f", "{}")
    message = Message.assistant("edited by a hook", [call])
    message.metadata[REASONING] = {
        "model": MODEL,
        "parts": [
            {"text": 3, "signature": "AAAA"},
            {"thought": "plan"},
            {"call": "fc_1", "signature": "QkJC"},
        ],
    }
    _, [content] = messages_to_gemini([message], model=MODEL)
    assert content["parts"] == [
        {"text": "plan", "thought": True},
        {"text": "edited by a hook"},
        {"function_call": {"name": "f", "args": {}, "id": "fc_1"}, "thought_signature": "QkJC"},
    ]


def test_a_later_system_message_becomes_a_user_turn() -> None:
    system, contents = messages_to_gemini(
        [Message.system("a"), Message.user("q"), Message.system("b")], model=MODEL
    )
    assert system == {"parts": [{"text": "a"}]}
    assert contents[1] == {"role": "user", "parts": [{"text": "b"}]}


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (Message.user(({"type": "video", "url": "x"},)), "'video' content part"),
        (
            Message.user(({"type": "image_url", "image_url": {"url": "data:image/png,raw"}},)),
            "not base64",
        ),
        (Message.tool("nobody", "r"), "no tool name"),
        (Message.assistant("", [ToolCall("c", "f", "[1]")]), "not a JSON object"),
        (Message.assistant("", [ToolCall("c", "f", "{bad")]), "not JSON"),
    ],
)
def test_what_gemini_cannot_take_is_a_config_error_naming_the_message(
    message: Message, error: str
) -> None:
    with pytest.raises(ConfigError, match=error) as caught:
        messages_to_gemini([Message.user("q"), message], model=MODEL)
    assert "messages[1]" in str(caught.value)


def test_settings_map_to_the_config_and_unknown_keys_are_refused() -> None:
    config = settings_to_gemini(
        {"seed": 3, "presence_penalty": 0.5, "parallel_tool_calls": False, "tool_choice": "none"},
        tools=False,
    )
    assert config == {"seed": 3, "presence_penalty": 0.5}  # tool_choice only with tools
    with pytest.raises(ConfigError, match=r"'temprature'.*extra_body"):
        settings_to_gemini({"temprature": 1}, tools=False)  # type: ignore[typeddict-unknown-key]


def test_usage_counts_thoughts_as_output_and_tool_prompts_as_input() -> None:
    meta = {
        "prompt_token_count": 100,
        "cached_content_token_count": 60,
        "candidates_token_count": 10,
        "thoughts_token_count": 30,
        "tool_use_prompt_token_count": 5,
    }
    assert usage_from_gemini(meta) == Usage(105, 40, 1, 60, 0, 30)
    assert usage_from_gemini(None) == Usage(requests=1)
