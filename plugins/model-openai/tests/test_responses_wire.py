"""The Responses API wire converters: a transcript to ``input`` items and back, and edits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentkit_model_openai import messages_from_responses
from agentkit_model_openai import messages_to_responses
from agentkit_model_openai import settings_to_responses
from agentkit_model_openai import usage_from_responses
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.plugin import REASONING
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import decode_state
from agentkit_core.plugin import encode_state

NAME = "openai-responses:o4-mini"
text = st.text(max_size=12)
ids = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
arguments = st.dictionaries(ids, st.integers() | text, max_size=3).map(json.dumps)
parts = st.lists(
    st.one_of(
        text.map(lambda t: {"type": "text", "text": t}),
        st.tuples(ids, st.sampled_from([None, "low", "high"])).map(
            lambda p: {
                "type": "image_url",
                "image_url": {"url": f"https://x/{p[0]}.png", **({"detail": p[1]} if p[1] else {})},
            }
        ),
        ids.map(lambda f: {"type": "file", "file": {"file_id": f"file-{f}"}}),
    ),
    min_size=1,
    max_size=3,
).map(tuple)
content = text | parts


@st.composite
def assistant_turn(draw: st.DrawFn) -> list[Message]:
    """An assistant message (text, calls, maybe reasoning in the API's output shape) and a
    result for each of its calls, named after the call as the wire recovers it."""
    calls = [
        ToolCall(f"call_{i}{draw(ids)}", draw(ids), draw(arguments))
        for i in range(draw(st.integers(0, 3)))
    ]
    said = draw(text)
    message = Message.assistant(said, calls)
    if draw(st.booleans()):
        output: list[dict[str, Any]] = [
            {
                "id": f"rs_{draw(ids)}",
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": t} for t in draw(st.lists(text))],
                "encrypted_content": draw(ids),
            }
        ]
        if said or not calls:
            output.append(
                {
                    "id": f"msg_{draw(ids)}",
                    "type": "message",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": said, "annotations": []}],
                }
            )
        output += [
            {
                "id": f"fc_{i}",
                "type": "function_call",
                "status": "completed",
                "call_id": c.id,
                "name": c.name,
                "arguments": c.arguments,
            }
            for i, c in enumerate(calls)
        ]
        message.metadata[REASONING] = {"model": NAME, "output": output}
    results = [Message.tool(c.id, draw(content), name=c.name) for c in calls]
    return [message, *results]


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    messages = [Message.system(draw(text))] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(1, 4))):
        # two assistant messages in a row read as one on this wire (the API sees them so too):
        # after an answer without calls comes the user's next message
        answered = bool(messages) and messages[-1].role == "assistant"
        if answered or draw(st.booleans()):
            messages.append(Message.user(draw(content)))
        messages += draw(assistant_turn())
    return messages


@settings(max_examples=150, deadline=None)
@given(transcripts())
def test_every_transcript_goes_to_the_wire_and_back_without_loss(messages: list[Message]) -> None:
    items = messages_to_responses(messages, model=NAME)
    json.dumps(items)  # the wire is JSON
    back = messages_from_responses(items, model=NAME)
    assert back == messages
    assert [m.metadata for m in back] == [m.metadata for m in messages]
    # what a checkpoint stores writes the same request
    restored = decode_state(encode_state({"m": messages}))["m"]
    assert messages_to_responses(restored, model=NAME) == items


def test_an_edited_message_keeps_what_still_matches() -> None:
    call = ToolCall("call_a", "f", "{}")
    kept = ToolCall("call_b", "g", '{"x": 1}')
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "E"}
    wire_b = {
        "id": "fc_b",
        "type": "function_call",
        "call_id": "call_b",
        "name": "g",
        "arguments": '{"x": 1}',
    }
    message = Message.assistant("", [call, kept])
    message.metadata[REASONING] = {
        "model": NAME,
        "output": [
            reasoning,
            {
                "id": "fc_a",
                "type": "function_call",
                "call_id": "call_a",
                "name": "f",
                "arguments": "{}",
            },
            wire_b,
        ],
    }
    edited = Message(
        "assistant",
        "Let me check.",
        (kept, ToolCall("call_c", "h", "{}")),
        metadata=message.metadata,
    )
    assert messages_to_responses([edited], model=NAME) == [
        reasoning,
        wire_b,  # unchanged: sent as the API returned it
        {"role": "assistant", "content": "Let me check."},
        {"type": "function_call", "call_id": "call_c", "name": "h", "arguments": "{}"},
    ]


def test_content_parts_and_bad_input_are_named() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://x/a.png"}}
    [item] = messages_to_responses(
        [Message.user(({"type": "text", "text": "hi"}, image))], model=NAME
    )
    assert item["content"] == [
        {"type": "input_text", "text": "hi"},
        {"type": "input_image", "image_url": "https://x/a.png", "detail": "auto"},
    ]
    with pytest.raises(ConfigError, match="'video_url' has no Responses API form"):
        messages_to_responses([Message.user(({"type": "video_url"},))], model=NAME)
    with pytest.raises(ProviderResponseError, match="item 0 of type 'web_search_call'"):
        messages_from_responses([{"type": "web_search_call"}], model=NAME)
    with pytest.raises(ProviderResponseError, match="item 0 has no call_id"):
        messages_from_responses([{"type": "function_call_output", "output": "x"}], model=NAME)


def test_usage_maps_cached_cache_write_and_reasoning_tokens() -> None:
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 30},
        "output_tokens": 50,
        "output_tokens_details": {"reasoning_tokens": 20},
    }
    assert usage_from_responses(usage) == Usage(100, 50, 1, 60, 30, 20)
    assert usage_from_responses(None) == Usage(requests=1)


def test_settings_map_and_ignore() -> None:
    assert settings_to_responses(
        {
            "max_tokens": 5,
            "top_p": 0.5,
            "stop": ["x"],
            "tool_choice": "auto",
            "reasoning_effort": "low",
            "extra_body": {"service_tier": "flex"},
        },
        tools=False,
    ) == {
        "max_output_tokens": 5,
        "top_p": 0.5,
        "reasoning": {"effort": "low"},
        "service_tier": "flex",
    }
