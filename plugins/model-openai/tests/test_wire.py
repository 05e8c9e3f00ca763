"""The Chat Completions converters: wire -> Message -> wire returns the input unchanged."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from agentkit_model_openai import WIRE
from agentkit_model_openai import message_from_openai
from agentkit_model_openai import message_to_openai
from agentkit_model_openai import messages_from_openai
from agentkit_model_openai import messages_to_openai
from agentkit_model_openai import usage_from_openai
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import decode_state
from agentkit_core.plugin import encode_state
from agentkit_core.testing import json_values

text = st.text(max_size=20)
json_value = json_values(text=text, floats=False, max_leaves=6)


def maybe(key: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``{key: value}`` or nothing."""
    return st.one_of(st.just({}), values.map(lambda v: {key: v}))


text_part = st.builds(lambda t: {"type": "text", "text": t}, text)
user_part = st.one_of(
    text_part,
    st.builds(
        lambda url, detail: {"type": "image_url", "image_url": {"url": url, **detail}},
        text,
        maybe("detail", st.sampled_from(["auto", "low", "high"])),
    ),
    st.builds(
        lambda data, fmt: {"type": "input_audio", "input_audio": {"data": data, "format": fmt}},
        text,
        st.sampled_from(["wav", "mp3"]),
    ),
    st.builds(lambda fid: {"type": "file", "file": {"file_id": fid}}, text),
)
assistant_part = st.one_of(text_part, st.builds(lambda t: {"type": "refusal", "refusal": t}, text))
ids = st.sampled_from(["", "call_0", "x"])
call_id = st.one_of(st.just({}), st.builds(lambda i: {"id": i}, ids))
function_call = st.builds(
    lambda i, kind, name, args, extra: {
        **i,
        **kind,
        "function": {"name": name, "arguments": args, **extra},
    },
    call_id,
    st.sampled_from([{}, {"type": "function"}]),
    st.sampled_from(["search", "read", ""]),
    st.one_of(text, st.just("{}"), st.just('{"q": "x"}')),
    maybe("strict", st.booleans()),
)
custom_call = st.builds(
    lambda i, name, data: {**i, "type": "custom", "custom": {"name": name, "input": data}},
    call_id,
    st.sampled_from(["patch", "sql"]),
    text,
)
tool_calls = st.one_of(
    st.just({}),
    st.just({"tool_calls": None}),
    st.just({"tool_calls": []}),
    st.lists(st.one_of(function_call, custom_call), min_size=1, max_size=3).map(
        lambda calls: {"tool_calls": calls}
    ),
)


def message(role: str, content: st.SearchStrategy[Any], *extras: st.SearchStrategy[Any]) -> Any:
    return st.builds(
        lambda c, *more: {"role": role, **c, **{k: v for e in more for k, v in e.items()}},
        content,
        *extras,
    )


content_key = st.builds(lambda c: {"content": c}, st.one_of(text, st.lists(text_part, max_size=2)))
wire_messages = st.one_of(
    message("system", content_key, maybe("name", text)),
    message("developer", content_key, maybe("name", text)),
    message(
        "user",
        st.builds(lambda c: {"content": c}, st.one_of(text, st.lists(user_part, max_size=3))),
        maybe("name", text),
    ),
    message(
        "assistant",
        st.one_of(
            st.just({}),
            st.just({"content": None}),
            st.just({"content": ""}),
            st.builds(lambda c: {"content": c}, text),
            st.builds(lambda c: {"content": c}, st.lists(assistant_part, max_size=2)),
        ),
        tool_calls,
        maybe("refusal", st.one_of(st.none(), text)),
        maybe("name", text),
        maybe("audio", st.one_of(st.none(), st.builds(lambda i: {"id": i}, text))),
        maybe("function_call", st.one_of(st.none(), st.just({"name": "f", "arguments": "{}"}))),
    ),
    message(
        "tool",
        content_key,
        st.builds(lambda i: {"tool_call_id": i}, ids),
        maybe("name", text),
    ),
).flatmap(lambda m: maybe("x_vendor", json_value).map(lambda extra: {**m, **extra}))


@settings(max_examples=500, deadline=None)
@given(wire_messages)
def test_wire_to_message_to_wire_returns_the_input(data: dict[str, Any]) -> None:
    assert message_to_openai(message_from_openai(data)) == data


@settings(max_examples=200, deadline=None)
@given(st.lists(wire_messages, max_size=5))
def test_a_transcript_survives_a_checkpoint_and_comes_back_the_same(
    data: list[dict[str, Any]],
) -> None:
    transcript = decode_state(encode_state(messages_from_openai(data)))
    assert messages_to_openai(transcript) == data


def test_what_the_issue_names_stays_as_it_was() -> None:
    calls = [{"id": "", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    for data in [
        {"role": "assistant", "content": "", "tool_calls": calls},  # "" stays "", not null
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "assistant", "tool_calls": calls},  # no content key at all
        {"role": "assistant", "content": "ok", "tool_calls": []},  # [] is kept
        {"role": "assistant", "content": "ok", "tool_calls": [{**calls[0], "type": "custom"}]},
        {"role": "developer", "content": "be brief", "name": "ops"},
        {"role": "tool", "content": [{"type": "text", "text": "r"}], "tool_call_id": "c"},
    ]:
        message = message_from_openai(data)
        assert message_to_openai(message) == data
    assert message_from_openai({"role": "assistant", "tool_calls": calls}).tool_calls[0].id == ""


def test_two_equal_calls_in_different_shapes_keep_their_places() -> None:
    call = {"function": {"name": "search", "arguments": "{}"}}
    data = {
        "role": "assistant",
        "tool_calls": [{"id": "", "type": "function", **call}, call],
    }
    assert message_to_openai(message_from_openai(data)) == data


def test_a_message_agentkit_built_is_written_the_usual_way() -> None:
    calls = (ToolCall("c1", "f", '{"a": 1}'),)
    assert message_to_openai(Message.assistant("", calls)) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
        ],
    }
    # a tool result's name is agentkit's own; the wire's tool message has none
    assert message_to_openai(Message.tool("c1", "r", name="f")) == {
        "role": "tool",
        "content": "r",
        "tool_call_id": "c1",
    }


def test_an_edited_message_keeps_what_still_fits() -> None:
    wire_call = {"id": "k", "type": "custom", "custom": {"name": "patch", "input": "diff"}}
    plain = {"id": "p", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    message = message_from_openai(
        {"role": "assistant", "content": None, "tool_calls": [plain, wire_call], "refusal": None}
    )
    assert message.metadata[WIRE]["calls"][0]["wire"] == wire_call
    # drop the plain call: the custom one keeps its shape, the null content and refusal stay
    edited = dataclasses.replace(message, tool_calls=message.tool_calls[1:])
    assert message_to_openai(edited) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [wire_call],
        "refusal": None,
    }
    # change the custom call: it is written as a function call now
    changed = dataclasses.replace(message, tool_calls=(ToolCall("k", "patch", "other"),))
    assert message_to_openai(changed)["tool_calls"] == [
        {"id": "k", "type": "function", "function": {"name": "patch", "arguments": "other"}}
    ]
    # a developer message given new text is still a developer message
    dev = message_from_openai({"role": "developer", "content": "a"})
    assert message_to_openai(dataclasses.replace(dev, content="b")) == {
        "role": "developer",
        "content": "b",
    }


ARGS = '{"a": 1}'


def test_an_answer_keeps_only_what_a_request_may_carry_back() -> None:
    answer = {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "annotations": [],
        "reasoning_content": "thinking...",
        "audio": {"id": "a1"},
        "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}},
            {"id": "", "type": "function", "function": {"name": "g"}},
        ],
    }
    message = message_from_openai(answer, response=True)
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_0", "f", '{"a": 1}'),
        ("call_1", "g", "{}"),
    ]
    assert message_to_openai(message) == {
        "role": "assistant",
        "content": None,
        "audio": {"id": "a1"},
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "f", "arguments": '{"a": 1}'},
            },
            {"id": "call_1", "type": "function", "function": {"name": "g", "arguments": "{}"}},
        ],
    }


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ("hello", "a message must be a JSON object"),
        ({"role": "function", "content": "x"}, "unknown message role 'function'"),
        ({"role": "user", "content": 3}, "content must be a string, a list of parts or null"),
        ({"role": "user", "content": ["x"]}, "every content part must be a JSON object"),
        ({"role": "assistant", "tool_calls": {}}, "tool_calls must be a list"),
        ({"role": "assistant", "tool_calls": [{"id": "c"}]}, "tool call 0 has no function name"),
        ({"role": "tool", "content": "r", "tool_call_id": 7}, "tool_call_id must be a string"),
    ],
)
def test_a_malformed_message_is_named(data: Any, match: str) -> None:
    with pytest.raises(ProviderResponseError, match=match):
        message_from_openai(data)


def test_usage_counts_absent_fields_as_zero() -> None:
    assert usage_from_openai({"prompt_tokens": 3, "completion_tokens": None}) == Usage(3, 0, 1)
    assert usage_from_openai(None) == Usage(0, 0, 1)
