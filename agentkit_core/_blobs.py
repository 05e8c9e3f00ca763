"""Content-part bytes stored once by their sha256, beside the records that name them.

A store that implements :class:`BlobStore` gets a part's bytes as a blob, written once however
many turns, checkpoints or items hold the part; the record carries only a reference
(``{"__agentkit__": "blob", "sha256": ..., "size": ...}``). Reading puts the bytes back before
the record is decoded, so everything above sees the part as it was. A store without blobs keeps
the bytes inline (tagged base64), as before.
"""

from __future__ import annotations

import base64
import contextvars
import re
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Protocol
from typing import runtime_checkable

from ._content import MAX_PART_BYTES
from ._errors import StorageError

#: While set, the encoder writes a part's bytes here, by sha256, and a reference in the record.
collecting: contextvars.ContextVar[dict[str, bytes] | None] = contextvars.ContextVar(
    "agentkit_blobs", default=None
)

#: A reference as the encoder writes it (compact JSON, keys in this order). A string holding
#: these characters is escaped in JSON (``\"``), so no text matches. Compiled (by ``re``'s
#: cache) when a text first holds a reference.
_REF = r'\{"__agentkit__":"blob","sha256":"([0-9a-f]{64})","size":(\d+)\}'
_MARK = '"__agentkit__":"blob"'


class MissingBlobError(StorageError, LookupError):
    """A record names a blob its store does not hold (deleted, or written by another store)."""

    def __init__(self, message: str, *, sha256: str, store: str) -> None:
        super().__init__(message)
        self.sha256 = sha256
        self.store = store


@runtime_checkable
class BlobStore(Protocol):
    """What a checkpoint or session store implements to keep part bytes once, by sha256."""

    async def put_blobs(self, blobs: Mapping[str, bytes]) -> None:
        """Write each blob under its sha256 unless that hash is there already (never rewrite)."""
        ...

    async def get_blobs(self, hashes: Collection[str]) -> dict[str, bytes]:
        """The blobs with these hashes that the store holds (a missing one is left out)."""
        ...


def reference(data: bytes) -> dict[str, object]:
    """The record's reference to ``data``, which goes to :data:`collecting` when it is set."""
    import hashlib  # with the first blob: a run without one does not load it

    found = collecting.get()
    digest = hashlib.sha256(data).hexdigest()
    if found is not None:
        found[digest] = data
    return {"__agentkit__": "blob", "sha256": digest, "size": len(data)}


class collected:  # a class for its cost; used as a function: ``with collected(keeps)``
    """The part bytes encoded inside the block, by sha256, when ``keeps`` (the store keeps blobs).

    ``keeps`` is :func:`keeps_blobs` of the store, asked once by whoever wraps it: a runtime
    protocol check costs microseconds, and a session append makes this block twice a turn.
    Without blobs nothing is collected: the encoder keeps the bytes inline.
    """

    __slots__ = ("_keeps", "_token", "blobs")

    def __init__(self, keeps: bool) -> None:
        self.blobs: dict[str, bytes] = {}
        self._keeps = keeps

    def __enter__(self) -> dict[str, bytes]:
        self._token = collecting.set(self.blobs if self._keeps else None)
        return self.blobs

    def __exit__(self, *exc: object) -> None:
        collecting.reset(self._token)


def keeps_blobs(store: object) -> bool:
    """Whether ``store`` keeps part bytes by hash (is a :class:`BlobStore`)."""
    return isinstance(store, BlobStore)


async def put_blobs(store: object, blobs: Mapping[str, bytes]) -> None:
    """Write ``blobs`` to ``store``, each within :data:`MAX_PART_BYTES`, before any record."""
    for digest, data in blobs.items():
        if len(data) > MAX_PART_BYTES:
            raise StorageError(
                f"refused to store a blob of {len(data)} bytes (sha256 {digest[:12]}...): over "
                f"the limit of {MAX_PART_BYTES} bytes; nothing was written"
            )
    if blobs:
        await store.put_blobs(blobs)  # type: ignore[attr-defined]


async def inline_blobs(texts: Sequence[str], store: object) -> list[str]:
    """``texts`` with each blob reference replaced by its bytes (tagged base64).

    ``store`` is a :class:`BlobStore`, or a mapping of the blobs just written; a store without
    blobs holds no references (its records keep the bytes inline), so its texts are returned.
    The blobs all the texts name are read in one request.
    """
    if not any(_MARK in text for text in texts) or not isinstance(store, (Mapping, BlobStore)):
        return list(texts)
    wanted = {m.group(1) for text in texts if _MARK in text for m in re.finditer(_REF, text)}
    if isinstance(store, Mapping):
        found = dict(store)
    else:
        found = await store.get_blobs(wanted)  # type: ignore[attr-defined]
    for digest in wanted - found.keys():
        url = str(getattr(store, "url", store))
        raise MissingBlobError(
            f"a record names blob sha256 {digest} that {url} does not hold (deleted, or the "
            "record was copied from another store); restore the blob or drop the record",
            sha256=digest,
            store=url,
        )

    def inline(match: re.Match[str]) -> str:
        data = base64.b64encode(found[match.group(1)]).decode("ascii")
        return f'{{"__agentkit__":"bytes","b64":"{data}"}}'

    return [re.sub(_REF, inline, text) if _MARK in text else text for text in texts]
