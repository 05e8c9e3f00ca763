"""A corrupt entry under StoreBridge (a ``ctx.store``) is a DecodingError, never "no checkpoint".

The bridge used to read a version list that was not a list of numbers as empty (a resume
then started the run over, its stored progress ignored), hand back a record that named
another run, and raise bare JSONDecodeError/TypeError for a cut or reshaped record.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Checkpointer
from agentkit_core.plugin import DecodingError
from agentkit_core.plugin import StoreBridge
from agentkit_core.testing import DictStore

LIST = "agentkit/checkpoints/r/agent"
RECORD = f"{LIST}/1"


async def stored() -> tuple[DictStore, Checkpointer]:
    kv = DictStore()
    cp = Checkpointer(StoreBridge(kv))
    await cp.snapshot("r", {"done": 1})
    return kv, cp


def reshaped(text: str, **changes: object) -> str:
    return json.dumps({**json.loads(text), **changes})


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        (LIST, lambda t: "garbage"),
        (LIST, lambda t: '{"1": 1}'),
        (LIST, lambda t: '"1"'),
        (LIST, lambda t: '["1"]'),
        (LIST, lambda t: "[true]"),
        (LIST, lambda t: "5"),
        (RECORD, lambda t: t[: len(t) // 2]),
        (RECORD, lambda t: "[]"),
        (RECORD, lambda t: reshaped(t, extra=1)),
        (RECORD, lambda t: json.dumps({"run_id": "r"})),
        (RECORD, lambda t: reshaped(t, run_id="other", version=7)),
    ],
)
async def test_a_corrupt_entry_is_refused_by_name(key: str, bad: object) -> None:
    kv, cp = await stored()
    kv.data[key] = bad(kv.data[key])  # type: ignore[operator]
    with pytest.raises(DecodingError, match=r"StoreBridge over DictStore.*run 'r' is corrupt"):
        await cp.resume("r")


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), st.lists, max_leaves=5))
def test_a_version_list_is_read_whole_or_refused(value: object) -> None:
    import asyncio

    async def check() -> None:
        kv, cp = await stored()
        kv.data[LIST] = json.dumps(value)
        try:
            found = await cp.resume("r")
        except DecodingError:
            return
        # read as a list: then it named stored versions, never "nothing stored"
        assert isinstance(value, list) and all(type(v) is int and v > 0 for v in value)
        assert found is None or found.version in value

    asyncio.run(check())
