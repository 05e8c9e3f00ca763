"""The checkpoint-store conformance suite: what every :class:`CheckpointPort` must do.

A store plugin's test subclasses :class:`CheckpointPortConformance` and opens a fresh port::

    class TestSqliteConformance(CheckpointPortConformance):
        async def make_port(self, tmp_path):
            url = f"sqlite:///{tmp_path}/runs.db"
            return await open_checkpoint_store(url, manager=PluginManager())

The suite closes the port after each test. A store that needs other fixtures (a throwaway
server) overrides the ``port`` fixture itself instead: an async generator fixture yielding an
open port. Every test uses fresh random run ids, so one shared database serves them all.
Requires pytest (and pytest-asyncio in auto mode).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from .._blobs import BlobStore
from .._checkpoint import DONE
from .._checkpoint import STATUSES
from .._checkpoint import SUSPENDED
from .._checkpoint import Checkpointer
from .._checkpoint import CheckpointPort
from .._checkpoint import StoredCheckpoint
from .._content import ImagePart
from .._content import TextPart
from .._errors import ConfigError
from .._errors import StorageError
from .._messages import Message
from ._names import SUITE_CHECKS
from ._names import given_name_pairs


def _run() -> str:
    return f"run-{uuid.uuid4().hex}"


def record(
    run_id: str,
    version: int,
    state: object = None,
    *,
    namespace: str = "agent",
    status: str = "running",
    metadata: object = None,
) -> StoredCheckpoint:
    """A record whose state and metadata are the JSON of the given values."""
    return StoredCheckpoint(
        run_id=run_id,
        namespace=namespace,
        version=version,
        status=status,
        state=json.dumps({"v": version} if state is None else state, ensure_ascii=False),
        metadata=json.dumps(metadata or {}, ensure_ascii=False),
        created_at=datetime(2026, 12, 3, 7, 0, version % 60, tzinfo=UTC).isoformat(),
    )


def assert_same(got: StoredCheckpoint | None, want: StoredCheckpoint) -> None:
    """Equal as records: JSON compared decoded, the timestamp compared as an instant."""
    assert got is not None, f"expected {want!r}, the store returned None"
    assert (got.run_id, got.namespace, got.version, got.status) == (
        want.run_id,
        want.namespace,
        want.version,
        want.status,
    )
    assert isinstance(got.state, str) and isinstance(got.metadata, str)
    assert json.loads(got.state) == json.loads(want.state)
    assert json.loads(got.metadata) == json.loads(want.metadata)
    assert datetime.fromisoformat(got.created_at) == datetime.fromisoformat(want.created_at)


class CheckpointPortConformance:
    """Contract tests for a checkpoint store; subclass and define :meth:`make_port`."""

    async def make_port(self, tmp_path: Path) -> CheckpointPort:
        raise NotImplementedError("define make_port(tmp_path) in the conformance subclass")

    @pytest.fixture
    async def port(self, tmp_path: Path) -> AsyncIterator[CheckpointPort]:
        store = await self.make_port(tmp_path)
        try:
            yield store
        finally:
            await store.aclose()

    async def test_is_a_port(self, port: CheckpointPort) -> None:
        assert isinstance(port, CheckpointPort)

    async def test_put_then_read_back(self, port: CheckpointPort) -> None:
        run = _run()
        rec = record(run, 1, {"turn": 1, "items": [1, 2.5, None, True, "x"]}, metadata={"k": 1})
        assert await port.put(rec) is True
        assert_same(await port.get(run, "agent", 1), rec)
        assert_same(await port.latest(run, "agent"), rec)
        assert await port.versions(run, "agent") == [1]

    async def test_unknown_reads_are_none_or_empty(self, port: CheckpointPort) -> None:
        run = _run()
        assert await port.latest(run, "agent") is None
        assert await port.get(run, "agent", 1) is None
        assert await port.versions(run, "agent") == []
        await port.put(record(run, 1))
        assert await port.get(run, "agent", 2) is None
        assert await port.get(run, "other", 1) is None

    async def test_taken_version_is_refused_and_the_record_kept(self, port: CheckpointPort) -> None:
        run = _run()
        first = record(run, 1, {"who": "first"}, status="suspended", metadata={"a": 1})
        assert await port.put(first) is True
        second = record(run, 1, {"who": "second"}, status="done", metadata={"b": 2})
        assert await port.put(second) is False
        assert_same(await port.get(run, "agent", 1), first)
        assert await port.versions(run, "agent") == [1]

    async def test_versions_ascend_and_latest_is_the_highest(self, port: CheckpointPort) -> None:
        run = _run()
        for v in (3, 1, 12, 2):
            assert await port.put(record(run, v))
        assert await port.versions(run, "agent") == [1, 2, 3, 12]
        latest = await port.latest(run, "agent")
        assert latest is not None and latest.version == 12
        assert_same(await port.get(run, "agent", 2), record(run, 2))

    async def test_every_status_round_trips(self, port: CheckpointPort) -> None:
        run = _run()
        for v, status in enumerate(STATUSES, 1):
            await port.put(record(run, v, status=status))
        for v, status in enumerate(STATUSES, 1):
            got = await port.get(run, "agent", v)
            assert got is not None and got.status == status

    async def test_namespaces_and_runs_are_isolated(self, port: CheckpointPort) -> None:
        run, other = _run(), _run()
        a = record(run, 1, {"ns": "agent"})
        b = record(run, 1, {"ns": "workflow"}, namespace="workflow")
        c = record(other, 1, {"run": "other"})
        assert await port.put(a) and await port.put(b) and await port.put(c)
        await port.put(record(run, 2, {"ns": "workflow"}, namespace="workflow"))
        assert_same(await port.latest(run, "agent"), a)
        assert await port.versions(run, "agent") == [1]
        assert await port.versions(run, "workflow") == [1, 2]
        assert_same(await port.get(run, "workflow", 1), b)
        assert_same(await port.latest(other, "agent"), c)
        assert await port.versions(other, "workflow") == []

    @settings(max_examples=40, deadline=None, suppress_health_check=SUITE_CHECKS)
    @given_name_pairs
    async def test_two_hostile_names_never_meet(
        self, port: CheckpointPort, pair: tuple[str, str]
    ) -> None:
        """Two different run ids, or namespaces (see ``_names``), keep apart, or are refused."""
        tag = _run()
        for keys in ([(tag + a, "agent") for a in pair], [(tag, tag + a) for a in pair]):
            kept = {}
            for n, (run, namespace) in enumerate(keys):
                rec = record(run, 1, {"n": n}, namespace=namespace)
                try:
                    done = await port.put(rec)
                except (ConfigError, StorageError):
                    continue
                assert done is True, f"{(run, namespace)!r} is new, yet version 1 was refused"
                assert await port.put(record(run, 2, {"n": n}, namespace=namespace)) is True
                kept[run, namespace] = n
            for (run, namespace), n in kept.items():
                assert_same(
                    await port.get(run, namespace, 1), record(run, 1, {"n": n}, namespace=namespace)
                )
                assert_same(
                    await port.latest(run, namespace), record(run, 2, {"n": n}, namespace=namespace)
                )
                assert await port.versions(run, namespace) == [1, 2]

    async def test_reads_are_independent_records(self, port: CheckpointPort) -> None:
        run = _run()
        rec = record(run, 1, {"list": [1, 2, 3]})
        await port.put(rec)
        first = await port.get(run, "agent", 1)
        assert first is not None
        json.loads(first.state)["list"].append(4)
        assert_same(await port.get(run, "agent", 1), rec)

    async def test_large_state(self, port: CheckpointPort) -> None:
        run = _run()
        big = {"blob": "x" * 1_000_000, "rows": [{"i": i, "s": "row" * 10} for i in range(2000)]}
        rec = record(run, 1, big)
        assert len(rec.state) > 1_000_000
        assert await port.put(rec)
        assert_same(await port.latest(run, "agent"), rec)

    async def test_unicode_everywhere(self, port: CheckpointPort) -> None:
        run = f"rün-{uuid.uuid4().hex}-🙂"
        namespace = "名前/ns ü"
        state = {"text": "héllo wörld — 你好 — مرحبا — 🙂🚀", "ключ": ["\t", "\n", '"', "\\"]}
        rec = record(run, 1, state, namespace=namespace, metadata={"note": "ñ ✓"})
        assert await port.put(rec)
        assert_same(await port.get(run, namespace, 1), rec)
        assert await port.versions(run, namespace) == [1]

    async def test_concurrent_puts_of_one_version_have_one_winner(
        self, port: CheckpointPort
    ) -> None:
        run = _run()
        contenders = [record(run, 1, {"writer": i}) for i in range(16)]
        won = await asyncio.gather(*(port.put(r) for r in contenders))
        assert won.count(True) == 1, won
        winner = contenders[won.index(True)]
        assert_same(await port.get(run, "agent", 1), winner)
        assert await port.versions(run, "agent") == [1]

    async def test_concurrent_puts_of_distinct_versions_all_land(
        self, port: CheckpointPort
    ) -> None:
        run = _run()
        won = await asyncio.gather(*(port.put(record(run, v)) for v in range(1, 21)))
        assert all(won)
        assert await port.versions(run, "agent") == list(range(1, 21))

    async def test_close_twice_is_harmless(self, port: CheckpointPort) -> None:
        await port.put(record(_run(), 1))
        await port.aclose()
        await port.aclose()  # and the fixture closes it a third time

    # -- the Checkpointer over this port: what a producer relies on, in every store

    async def test_checkpointer_copies_both_ways(self, port: CheckpointPort) -> None:
        cp = Checkpointer(port)
        run = _run()
        state: dict[str, Any] = {"items": [1, 2], "nested": {"k": "v"}}
        written = await cp.snapshot(run, state, metadata={"tags": ["a"]})
        state["items"].append(3)
        state["nested"]["k"] = "changed"
        assert written.state == {"items": [1, 2], "nested": {"k": "v"}}
        written.state["items"].clear()
        got = await cp.resume(run)
        assert got is not None
        got.state["items"].append(99)
        got.metadata["tags"].append("b")
        again = await cp.at_version(run, 1)
        assert again is not None
        assert again.state == {"items": [1, 2], "nested": {"k": "v"}}
        assert again.metadata == {"tags": ["a"]}

    async def test_a_message_with_image_bytes_round_trips(self, port: CheckpointPort) -> None:
        """Part bytes come back equal; a store that keeps blobs holds them once, by sha256."""
        cp = Checkpointer(port)
        run = _run()
        png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
        message = Message.user((TextPart("look"), ImagePart(data=png, media_type="image/png")))
        for turn in range(1, 4):  # the transcript, growing, in every version
            written = await cp.snapshot(run, {"transcript": [message] * turn})
            assert written.state["transcript"][0] == message
        again = await cp.at_version(run, 2)
        assert again is not None and again.state == {"transcript": [message, message]}
        assert again.state["transcript"][1].content[1].data == png
        if isinstance(port, BlobStore):
            digest = hashlib.sha256(png).hexdigest()
            raw = await port.latest(run, "agent")
            assert raw is not None and digest in raw.state and "iVBORw0KGgo" not in raw.state
            assert await port.get_blobs([digest, "0" * 64]) == {digest: png}

    async def test_checkpointer_numbers_versions_and_refuses_terminal(
        self, port: CheckpointPort
    ) -> None:
        cp = Checkpointer(port)
        run = _run()
        assert (await cp.snapshot(run, {"turn": 1})).version == 1
        suspended = await cp.snapshot(run, {"turn": 2}, SUSPENDED)
        assert suspended.version == 2
        latest = await cp.resume(run)
        assert latest is not None and (latest.version, latest.status) == (2, SUSPENDED)
        await cp.snapshot(run, {"turn": 3}, DONE)
        assert await cp.resume(run) is None
        done = await cp.resume(run, include_terminal=True)
        assert done is not None and done.state == {"turn": 3}
        assert await cp.list_versions(run) == [1, 2, 3]
        first = await cp.at_version(run, 1)
        assert first is not None and first.state == {"turn": 1}

    async def test_concurrent_snapshots_get_versions_1_to_n(self, port: CheckpointPort) -> None:
        run = _run()
        producers = [Checkpointer(port) for _ in range(3)]  # no shared version cache
        written = await asyncio.gather(
            *(producers[i % 3].snapshot(run, {"writer": i}) for i in range(12))
        )
        assert sorted(c.version for c in written) == list(range(1, 13))
        assert await port.versions(run, "agent") == list(range(1, 13))
        stored = [await port.get(run, "agent", v) for v in range(1, 13)]
        writers = sorted(json.loads(r.state)["writer"] for r in stored if r is not None)
        assert writers == list(range(12))
