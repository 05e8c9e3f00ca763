"""What a save of an A2A task changed, as a small JSON body, and applying it back.

The SDK saves the whole task on every streamed chunk; storing it whole each time writes
O(N^2) bytes for N chunks. A delta names the fields replaced whole (``clear`` and their new
values in ``set``), the elements appended to repeated fields (``add``: a history message, an
artifact, an artifact's parts) and, by index, the deltas of elements changed in place (an
artifact a chunk appended parts to). :func:`delta` checks its result by applying it, so a save
always reads back exactly as saved; a change it cannot express is ``None``: store the task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import FieldDescriptor  # type: ignore[import-untyped]
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
from google.protobuf.json_format import ParseDict  # type: ignore[import-untyped]
from google.protobuf.message import Message  # type: ignore[import-untyped]

Body = dict[str, Any]


@dataclass
class Change:
    """A delta as messages, before it is a body.

    Fields cleared (``put`` has their new values), elements added, and the changes of elements
    changed in place (by field, then index).
    """

    clear: list[str]
    put: Message
    add: Message
    inner: dict[str, dict[int, Change]]

    def apply(self, message: Message) -> None:
        for name in self.clear:
            message.ClearField(name)
        message.MergeFrom(self.put)  # a merge replaces scalars and sub-messages, extends lists
        message.MergeFrom(self.add)
        for name, changed in self.inner.items():
            elements = getattr(message, name)
            for index, change in changed.items():
                change.apply(elements[index])

    def body(self) -> Body:
        inner = {n: {str(i): c.body() for i, c in cs.items()} for n, cs in self.inner.items()}
        body = {"clear": self.clear, "set": _dict(self.put), "add": _dict(self.add), "in": inner}
        return {key: value for key, value in body.items() if value}


def delta(old: Message, new: Message) -> Body | None:
    """The body :func:`apply` turns ``old`` into ``new`` with, or None: store ``new`` whole."""
    change = _diff(old, new)
    rebuilt = type(old)()
    rebuilt.CopyFrom(old)
    change.apply(rebuilt)
    return change.body() if rebuilt == new else None


def apply(message: Message, body: Body) -> None:
    """Change ``message`` in place as ``body`` (from :func:`delta`) says."""
    _parse(message, body).apply(message)


def _parse(message: Message, body: Body) -> Change:
    kind = type(message)
    inner = {
        name: {int(i): _parse(getattr(message, name)[int(i)], b) for i, b in changed.items()}
        for name, changed in body.get("in", {}).items()
    }
    put, add = (ParseDict(body.get(key, {}), kind()) for key in ("set", "add"))
    return Change(list(body.get("clear", ())), put, add, inner)


def _diff(old: Message, new: Message) -> Change:
    change = Change([], type(new)(), type(new)(), {})
    for field in new.DESCRIPTOR.fields:
        name = field.name
        before, after = getattr(old, name), getattr(new, name)
        if before == after and _present(old, field) == _present(new, field):
            continue
        if _grows(field) and len(after) >= len(before):
            pairs = enumerate(zip(before, after, strict=False))  # after may be longer
            changed = {i: _diff(b, a) for i, (b, a) in pairs if b != a}
            getattr(change.add, name).extend(after[len(before) :])
            if changed:
                change.inner[name] = changed
            continue
        change.clear.append(name)
        if field.is_repeated:
            getattr(change.put, name).extend(after)
        elif _present(new, field):
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                getattr(change.put, name).CopyFrom(after)
            else:
                setattr(change.put, name, after)
    return change


def _dict(message: Message) -> Body:
    if not message.ListFields():
        return {}
    return MessageToDict(message, preserving_proto_field_name=True)  # type: ignore[no-any-return]


def _grows(field: FieldDescriptor) -> bool:
    """A list of messages (not a map): saves append to these and change their last element."""
    return (
        field.is_repeated
        and field.type == FieldDescriptor.TYPE_MESSAGE
        and not field.message_type.GetOptions().map_entry
    )


def _present(message: Message, field: FieldDescriptor) -> bool:
    if field.is_repeated or not field.has_presence:
        return True
    return bool(message.HasField(field.name))
