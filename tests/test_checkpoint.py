"""The Checkpointer facade, store resolution and opening stores by URL."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest

from agentkit_core import Checkpointer
from agentkit_core import ConfigError
from agentkit_core import PluginError
from agentkit_core import PluginManager
from agentkit_core import UnknownNameError
from agentkit_core import open_checkpointer
from agentkit_core.plugin import DONE
from agentkit_core.plugin import FAILED
from agentkit_core.plugin import SUSPENDED
from agentkit_core.plugin import TAINTED
from agentkit_core.plugin import CheckpointPort
from agentkit_core.plugin import DecodingError
from agentkit_core.plugin import EncodingError
from agentkit_core.plugin import StoreBridge
from agentkit_core.plugin import StoredCheckpoint
from agentkit_core.plugin import VersionConflict
from agentkit_core.plugin import open_checkpoint_store
from agentkit_core.plugin import resolve_checkpointer
from agentkit_core.testing import CheckpointPortConformance
from agentkit_core.testing import DictStore
from agentkit_core.testing import make_test_ctx


class TestStoreBridgeConformance(CheckpointPortConformance):
    async def make_port(self, tmp_path: Path) -> CheckpointPort:
        return StoreBridge(DictStore())


@pytest.fixture
async def cp(pm) -> Any:
    checkpointer = await open_checkpointer("memory://", manager=pm)
    yield checkpointer
    await checkpointer.aclose()


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 3, 9, 0, tzinfo=timezone(timedelta(hours=2)))

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


async def test_the_clock_stamps_each_snapshot_in_utc(pm) -> None:
    clock = Clock()
    async with await open_checkpointer("memory://", clock=clock, manager=pm) as cp:
        first = await cp.snapshot("r", {"turn": 1})
        second = await cp.snapshot("r", {"turn": 2})
        assert first.created_at == datetime(2026, 12, 3, 7, 0, 1, tzinfo=UTC)
        assert second.created_at - first.created_at == timedelta(seconds=1)
        stored = await cp.port.get("r", "agent", 2)
        assert stored is not None and stored.created_at == "2026-12-03T07:00:02+00:00"
        read = await cp.resume("r")  # what a snapshot returns is what reading it gives
        assert read is not None and read.created_at == second.created_at
        assert read.created_at.tzinfo is second.created_at.tzinfo is UTC


async def test_a_naive_clock_is_refused(pm) -> None:
    async with await open_checkpointer(
        "memory://", clock=lambda: datetime(2026, 1, 1), manager=pm
    ) as cp:
        with pytest.raises(ConfigError, match=r"clock returned datetime.*aware datetime"):
            await cp.snapshot("r", {})
        assert await cp.list_versions("r") == []


async def test_an_unknown_status_is_refused(cp: Checkpointer) -> None:
    with pytest.raises(ConfigError, match=r"unknown checkpoint status 'paused'; use one of"):
        await cp.snapshot("r", {}, "paused")


async def test_secret_tainted_runs_are_never_written(cp: Checkpointer) -> None:
    async def elicitor(question: str, schema: Any, secret: bool) -> str:
        return "123456"

    ctx = make_test_ctx(elicitor=elicitor)
    await cp.snapshot("r", {"turn": 1}, ctx=ctx)
    await ctx.elicit("one-time code?", secret=True)
    skipped = await cp.snapshot("r", {"code": "123456"}, SUSPENDED, ctx=ctx)
    assert (skipped.version, skipped.state, skipped.metadata) == (
        0,
        None,
        {"skipped": "secret_taint"},
    )
    assert await cp.list_versions("r") == [1, 2]  # and a marker: the run never resumes
    marker = await cp.at_version("r", 2)
    assert marker is not None and (marker.status, marker.state) == (TAINTED, None)
    assert marker.terminal and await cp.resume("r") is None
    assert (await cp.snapshot("r", {"code": "123456"}, ctx=ctx)).version == 0
    assert await cp.list_versions("r") == [1, 2]  # one marker only


def stored(state: str, *, metadata: str = "{}", created_at: str = "") -> StoredCheckpoint:
    return StoredCheckpoint(
        "r", "agent", 1, "running", state, metadata, created_at or "2026-01-01T00:00:00+00:00"
    )


@pytest.mark.parametrize(
    ("record", "path", "message"),
    [
        (stored('{"a": [{"__agentkit__": "bytes", "b64": "%%"}]}'), 'state["a"][0]', "base64"),
        (stored("{oops"), "state", "not JSON"),
        (stored("{}", metadata='{"__agentkit__": "time"}'), "metadata", "has no 'iso'"),
        (stored("{}", created_at="last tuesday"), "created_at", "not an ISO-8601"),
    ],
)
async def test_a_corrupt_record_names_the_store_run_version_and_path(
    cp: Checkpointer, record: StoredCheckpoint, path: str, message: str
) -> None:
    assert await cp.port.put(record)
    with pytest.raises(DecodingError, match=message) as info:
        got = await cp.resume("r")
        assert got is not None
        got.state, got.metadata  # noqa: B018 - decoding is what raises
    error = info.value
    assert (error.run_id, error.version, error.path) == ("r", 1, path)
    assert error.store == "memory://"  # the URL it was opened with, not the port's repr
    assert str(error).startswith("memory://: version 1 of run 'r'")


async def test_messages_name_the_store_by_its_masked_url_or_the_ports_repr(pm) -> None:
    async with await open_checkpointer("memory://ann:hunter2@host", manager=pm) as opened:
        assert opened.store == "memory://ann:***@host"
        assert repr(opened) == "<Checkpointer memory://ann:***@host>"
    port = StoreBridge(DictStore())
    assert Checkpointer(port).store == repr(port)  # no URL given: the port names itself
    assert Checkpointer(port, url="postgresql://u:pw@h/db").store == "postgresql://u:***@h/db"


async def test_unencodable_state_or_metadata_writes_nothing(cp: Checkpointer) -> None:
    with pytest.raises(EncodingError, match=r'state\["when"\]: a \S*object is not encodable'):
        await cp.snapshot("r", {"when": object()})
    with pytest.raises(EncodingError, match=r'metadata\["x"\]: nan has no JSON form'):
        await cp.snapshot("r", {}, metadata={"x": float("nan")})
    assert await cp.list_versions("r") == []


async def test_another_writer_moves_the_next_version(cp: Checkpointer) -> None:
    other = Checkpointer(cp.port)
    assert (await cp.snapshot("r", {"by": "a"})).version == 1
    assert (await other.snapshot("r", {"by": "b"})).version == 2
    assert (await cp.snapshot("r", {"by": "a"})).version == 3  # its guess 2 lost the CAS
    cp.attempts = 1
    await other.snapshot("r", {"by": "b"})
    with pytest.raises(VersionConflict, match=r"run 'r' .*taken 1 times in a row") as info:
        await cp.snapshot("r", {"by": "a"})
    assert info.value.version == 4
    assert await cp.list_versions("r") == [1, 2, 3, 4]


async def test_resume_and_time_travel(cp: Checkpointer) -> None:
    assert await cp.resume("nothing") is None
    await cp.snapshot("r", {"turn": 1}, metadata={"why": "start"})
    await cp.snapshot("r", {"turn": 2}, FAILED)
    assert await cp.resume("r") is None
    failed = await cp.resume("r", include_terminal=True)
    assert failed is not None and failed.terminal and failed.status == FAILED
    first = await cp.at_version("r", 1)
    assert first is not None and (first.state, first.metadata) == ({"turn": 1}, {"why": "start"})
    assert await cp.at_version("r", 9) is None
    other = await cp.snapshot("r", {"x": 1}, DONE, namespace="workflow")
    assert other.version == 1 and await cp.list_versions("r", namespace="workflow") == [1]


async def test_resolution_order(pm) -> None:
    explicit = await open_checkpointer("memory://", manager=pm)
    on_ctx = await open_checkpointer("memory://", manager=pm)
    port = await open_checkpoint_store("memory://", manager=pm)
    store = DictStore()
    ctx = make_test_ctx(checkpointer=on_ctx, store=store)
    assert resolve_checkpointer(explicit, ctx) is explicit
    assert resolve_checkpointer(None, ctx) is on_ctx
    wrapped = resolve_checkpointer(port, None)
    assert wrapped is not None and wrapped.port is port
    assert resolve_checkpointer(None, make_test_ctx()) is None
    assert resolve_checkpointer() is None

    bridged_ctx = make_test_ctx(store=store)
    bridged = resolve_checkpointer(None, bridged_ctx)
    assert bridged is not None and isinstance(bridged.port, StoreBridge)
    assert resolve_checkpointer(None, bridged_ctx) is bridged  # kept on the context
    await bridged.snapshot("r", {"turn": 1})
    assert any(k.startswith("agentkit/checkpoints/r/agent") for k in store.data)

    port_ctx = make_test_ctx(store=port)
    on_port = resolve_checkpointer(None, port_ctx)
    assert on_port is not None and on_port.port is port
    for c in (explicit, on_ctx, port):
        await c.aclose()


def test_resolution_refuses_what_is_not_a_checkpointer() -> None:
    with pytest.raises(ConfigError, match=r"checkpointer= is 'runs.db'; give a Checkpointer"):
        resolve_checkpointer("runs.db")
    with pytest.raises(ConfigError, match=r"ctx.checkpointer is 3"):
        resolve_checkpointer(None, make_test_ctx(checkpointer=3))
    with pytest.raises(ConfigError, match=r"ctx.store is \{\}, which is neither"):
        resolve_checkpointer(None, make_test_ctx(store={}))
    with pytest.raises(ConfigError, match=r"needs a CheckpointPort .* got None"):
        Checkpointer(None)  # type: ignore[arg-type]


async def test_an_unknown_scheme_names_the_installed_ones(pm) -> None:
    with pytest.raises(UnknownNameError, match=r"scheme 'redis' of 'redis://x'; installed") as info:
        await open_checkpoint_store("redis://x", manager=pm)
    assert {"memory", "sqlite"} <= set(info.value.available)
    with pytest.raises(ConfigError, match=r"'runs.db' has no scheme"):
        await open_checkpoint_store("runs.db", manager=pm)


async def test_an_opener_that_returns_no_port_is_the_plugin_s_fault(
    make_site: Any, pm: PluginManager
) -> None:
    source = (
        "from agentkit_core import hookimpl\n\n"
        "@hookimpl\n"
        "def agentkit_register_checkpoint_stores(register):\n"
        "    register('bogus', lambda url: {'url': url})\n"
    )
    make_site().add("agentkit-test-bogus", {"bogus": "akt_bogus"}, {"akt_bogus": source})
    with pytest.raises(PluginError, match=r"plugin 'bogus' opened 'bogus://x' as \{'url'"):
        await open_checkpoint_store("bogus://x", manager=pm)
