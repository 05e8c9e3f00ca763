"""The wire conversion: any transcript agentkit holds that the Messages API accepts goes to the
wire form and back without loss, reasoning and text-block shapes included."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest
from agentkit_model_anthropic import MAX_BREAKPOINTS
from agentkit_model_anthropic import WIRE
from agentkit_model_anthropic import AnthropicModel
from agentkit_model_anthropic import messages_from_anthropic
from agentkit_model_anthropic import messages_to_anthropic
from agentkit_model_anthropic import settings_to_anthropic
from agentkit_model_anthropic import system_to_anthropic
from agentkit_model_anthropic import usage_from_anthropic
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.plugin import REASONING
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import ToolSpec
from agentkit_core.testing import json_values

ME = "anthropic:claude-sonnet-4-5"

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
values = json_values(
    text=texts, keys=names, integers=st.integers(-1000, 1000), floats=False, max_leaves=6
)
arguments = st.dictionaries(names, values, max_size=3).map(
    lambda d: json.dumps(d, ensure_ascii=False)
)
text_part = texts.map(lambda t: {"type": "text", "text": t})
image_part = st.sampled_from(["image/png", "image/jpeg"]).map(
    lambda m: {"type": "image", "source": {"type": "base64", "media_type": m, "data": "iVBORw0K"}}
)
parts = st.lists(text_part | image_part, min_size=1, max_size=3).map(tuple)
thinking_block = st.one_of(
    st.builds(
        lambda t, s: {"type": "thinking", "thinking": t, "signature": s},
        texts,
        st.from_regex(r"[A-Za-z0-9+/]{8,24}", fullmatch=True),
    ),
    st.from_regex(r"[A-Za-z0-9+/]{8,24}", fullmatch=True).map(
        lambda d: {"type": "redacted_thinking", "data": d}
    ),
)
citation = {"type": "char_location", "cited_text": "x", "document_index": 0,
            "start_char_index": 0, "end_char_index": 1}  # fmt: skip


@st.composite
def assistant(draw: Any, ids: list[int]) -> Message:
    """An answer as the API can give it: text blocks, then tool_use blocks, thinking anywhere."""
    # the API refuses an empty text block in a request, so none is generated
    text_blocks = draw(
        st.lists(texts.filter(bool).map(lambda t: {"type": "text", "text": t}), max_size=2)
    )
    if text_blocks and draw(st.booleans()):
        text_blocks[0]["citations"] = [citation]
    calls = []
    for _ in range(draw(st.integers(0, 2))):
        ids[0] += 1
        calls.append(ToolCall(f"toolu_{ids[0]:04d}", draw(names), draw(arguments)))
    content: list[dict[str, Any]] = [*text_blocks]
    content += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": json.loads(c.arguments)}
        for c in calls
    ]
    for block in draw(st.lists(thinking_block, max_size=2)):
        content.insert(draw(st.integers(0, len(content))), block)
    message = Message.assistant("".join(b["text"] for b in text_blocks), calls)
    thinking = [
        (i, b) for i, b in enumerate(content) if b["type"] in ("thinking", "redacted_thinking")
    ]
    if thinking:
        message.metadata[REASONING] = {
            "model": ME,
            "blocks": [b for _, b in thinking],
            "at": [i for i, _ in thinking],
        }
    if len(text_blocks) > 1 or any("citations" in b for b in text_blocks):
        message.metadata[WIRE] = {"text": text_blocks}
    return message


@st.composite
def transcripts(draw: Any) -> list[Message]:
    ids = [0]
    out = [Message.system(t) for t in draw(st.lists(texts.filter(bool), max_size=2))]
    for _ in range(draw(st.integers(1, 4))):
        out.append(Message.user(draw(texts | parts)))
        answer = draw(assistant(ids))
        out.append(answer)
        for call in answer.tool_calls:
            content = draw(texts | st.lists(text_part, min_size=1, max_size=2).map(tuple))
            out.append(Message.tool(call.id, content, name=call.name, is_error=draw(st.booleans())))
    return out


@settings(max_examples=80, deadline=None)
@given(transcripts())
def test_any_transcript_goes_to_the_wire_and_back(transcript: list[Message]) -> None:
    system, count = system_to_anthropic(transcript)
    wire = messages_to_anthropic(transcript[count:], model=ME)
    json.dumps(wire)  # the body is plain JSON
    back = messages_from_anthropic(system, wire, model=ME)
    assert back == transcript
    assert [m.metadata for m in back] == [m.metadata for m in transcript]
    # the API's rules: roles alternate per turn kind, results follow their calls in one turn
    for before, after in itertools.pairwise(wire):
        if before["role"] == "assistant" and any(
            b["type"] == "tool_use" for b in before["content"]
        ):
            assert after["role"] == "user"
            assert [b["type"] for b in after["content"]] == ["tool_result"] * len(
                [b for b in before["content"] if b["type"] == "tool_use"]
            )


@settings(max_examples=60, deadline=None)
@given(transcripts(), st.integers(0, 5), st.booleans())
def test_cache_breakpoints_stay_within_the_limit(
    transcript: list[Message], own: int, tools: bool
) -> None:
    """Whatever the transcript and the caller's own marks: at most four marks in all (unless
    the caller alone put more), ours first at the end of the prefix, never on thinking."""
    marked = {"type": "text", "text": "doc", "cache_control": {"type": "ephemeral"}}
    transcript = [*transcript, Message.user(tuple(dict(marked) for _ in range(own)))]
    spec = ToolSpec("f", "", {"type": "object"})
    request = ModelRequest(tuple(transcript), tools=(spec,) if tools else ())
    before = copy.deepcopy(request)
    body = AnthropicModel("claude-sonnet-4-5", api_key="k").body(request)
    blocks = [*body.get("tools", []), *body.get("system", [])]
    blocks += [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    marks = [b for b in blocks if "cache_control" in b]
    assert len(marks) <= max(MAX_BREAKPOINTS, own)
    assert not [b for b in marks if b.get("type") in ("thinking", "redacted_thinking")]
    prefix = body.get("system") or body.get("tools")
    if prefix and own < MAX_BREAKPOINTS:
        assert "cache_control" in prefix[-1]
    # the marks are on the body's own copies: the request and its parts are unchanged
    assert request == before
    assert [m.content for m in request.messages] == [m.content for m in before.messages]


def test_reasoning_of_another_model_is_not_sent() -> None:
    answer = Message.assistant("hi")
    answer.metadata[REASONING] = {
        "model": "anthropic:claude-opus-4-1",
        "blocks": [{"type": "thinking", "thinking": "t", "signature": "s"}],
        "at": [0],
    }
    assert messages_to_anthropic([answer], model=ME) == [
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    ]


def test_an_edited_answer_is_written_from_its_fields() -> None:
    answer = Message.assistant("new text")
    answer.metadata[WIRE] = {"text": [{"type": "text", "text": "old ", "citations": []}]}
    [turn] = messages_to_anthropic([answer], model=ME)
    assert turn["content"] == [{"type": "text", "text": "new text"}]


def test_later_system_messages_and_openai_images() -> None:
    transcript = [
        Message.system("S"),
        Message.user(({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}},)),
        Message.system("a reminder"),
    ]
    system, count = system_to_anthropic(transcript)
    assert (system, count) == ([{"type": "text", "text": "S"}], 1)
    assert messages_to_anthropic(transcript[1:], model=ME) == [
        {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "AAA"},
                }
            ],
        },
        {"role": "user", "content": "a reminder"},
    ]


def test_what_the_api_cannot_take_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="type 'input_audio'"):
        messages_to_anthropic([Message.user(({"type": "input_audio"},))], model=ME)
    with pytest.raises(ConfigError, match=r"'call_1' .* not a JSON object"):
        messages_to_anthropic([Message.assistant("", [ToolCall("call_1", "f", "[1]")])], model=ME)
    with pytest.raises(ProviderResponseError, match=r"content\[0\] is a block of type 'audio'"):
        messages_from_anthropic(
            [], [{"role": "assistant", "content": [{"type": "audio"}]}], model=ME
        )


def test_usage_counts_cached_tokens_as_input() -> None:
    data = {
        "input_tokens": 10,
        "cache_creation_input_tokens": 200,
        "cache_read_input_tokens": 3000,
        "output_tokens": 50,
        "output_tokens_details": {"thinking_tokens": 20},
    }
    assert usage_from_anthropic(data) == Usage(3210, 50, 1, 3000, 200, 20)
    with pytest.raises(ProviderResponseError, match=r"usage\.input_tokens"):
        usage_from_anthropic({"input_tokens": "ten"})
    path = r"usage\.output_tokens_details\.thinking_tokens is not a token count: 1\.5$"
    with pytest.raises(ProviderResponseError, match=path):
        usage_from_anthropic({"output_tokens_details": {"thinking_tokens": 1.5}})


def test_settings() -> None:
    assert settings_to_anthropic(
        {"temperature": 0.5, "top_k": 40, "seed": 1, "reasoning_effort": "minimal"}, tools=False
    ) == {"temperature": 0.5, "top_k": 40, "output_config": {"effort": "low"}}
    assert settings_to_anthropic({"reasoning_effort": "none"}, tools=False) == {
        "thinking": {"type": "disabled"}
    }
    assert settings_to_anthropic({"tool_choice": "none"}, tools=False) == {}
    with pytest.raises(ConfigError, match=r"'temprature'.*extra_body"):
        settings_to_anthropic({"temprature": 1}, tools=False)  # type: ignore[typeddict-unknown-key]
