"""A usage count a broken or hostile server sends that is no count (negative) is a
ProviderResponseError naming the field, never a usage that lifts a token or cost budget; two
function calls with one id are refused, and a made-up id never takes an earlier sent one."""

from __future__ import annotations

import pytest
from agentkit_model_gemini import GeminiModel
from agentkit_model_gemini import messages_from_gemini
from agentkit_model_gemini import usage_from_gemini
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Message
from agentkit_core import Usage
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.testing import WireServer


async def test_a_negative_count_on_the_wire_is_refused(server: WireServer) -> None:
    candidate = {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    usage = {"promptTokenCount": -1_000_000, "candidatesTokenCount": 2}
    server.answer({"candidates": [candidate], "usageMetadata": usage})
    model = GeminiModel("gemini-2.5-flash", base_url=server.url, api_key="test-key")
    with pytest.raises(ProviderResponseError, match="prompt_token_count is not a token count"):
        await model.request(ModelRequest((Message.user("hi"),)))


@given(st.integers(), st.integers(0, 10**6))
def test_a_count_is_taken_only_when_zero_or_more(prompt: int, output: int) -> None:
    meta = {"prompt_token_count": prompt, "candidates_token_count": output}
    try:
        usage = usage_from_gemini(meta)
    except ProviderResponseError:
        assert prompt < 0
        return
    assert (usage.input_tokens, usage.output_tokens) == (prompt, output)


def test_a_null_count_is_zero_as_every_provider_reads_it() -> None:
    meta = {"prompt_token_count": None, "candidates_token_count": 2, "total_token_count": None}
    assert usage_from_gemini(meta) == Usage(0, 2, 1)
    with pytest.raises(ProviderResponseError, match=r"usage_metadata\.total_token_count is not"):
        usage_from_gemini({"prompt_token_count": 1, "total_token_count": True})


def _call(id_: str | None) -> dict[str, object]:
    call: dict[str, object] = {"name": "f", "args": {}}
    return {"function_call": call if id_ is None else {**call, "id": id_}}


def test_two_function_calls_with_one_id_are_refused() -> None:
    turn = {"role": "model", "parts": [_call("g1"), _call("g1")]}
    with pytest.raises(ValueError, match=r"parts\[1\]\.function_call\.id 'g1' repeats"):
        messages_from_gemini(None, [turn], model="gemini:gemini-2.5-flash")


@given(st.lists(st.sampled_from([None, "call_0", "call_1", "call_2", "x"]), max_size=6))
def test_no_two_calls_ever_share_an_id(ids: list[str | None]) -> None:
    """A made-up id skips the sent ones; a sent id that repeats any earlier one is refused."""
    turn = {"role": "model", "parts": [_call(i) for i in ids]}
    try:
        [message] = messages_from_gemini(None, [turn], model="gemini:gemini-2.5-flash")
    except ValueError as exc:
        assert "repeats an earlier call's id" in str(exc)
        sent = [i for i in ids if i is not None]
        assert sent and (len(set(sent)) < len(sent) or None in ids)
        return
    made = [c.id for c in message.tool_calls]
    assert len(set(made)) == len(made) == len(ids)
    assert [m for m, i in zip(made, ids, strict=True) if i is not None] == [
        i for i in ids if i is not None
    ]
