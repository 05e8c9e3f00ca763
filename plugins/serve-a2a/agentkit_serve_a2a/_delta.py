"""What a save of an A2A task changed, as a small JSON body, and applying it back.

The SDK saves the whole task on every streamed chunk; storing it whole each time writes
O(N^2) bytes for N chunks. A delta names the fields replaced whole (``clear`` and their new
values in ``set``), the elements appended to repeated fields (``add``: a history message, an
artifact, an artifact's parts) and, by index, the deltas of elements changed in place (an
artifact a chunk appended parts to). :func:`delta` checks its result by applying it, so a save
always reads back exactly as saved; a change it cannot express is ``None``: store the task.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor  # type: ignore[import-untyped]
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
from google.protobuf.json_format import ParseDict  # type: ignore[import-untyped]
from google.protobuf.message import Message  # type: ignore[import-untyped]

Body = dict[str, Any]


def delta(old: Message, new: Message) -> Body | None:
    """The body :func:`apply` turns ``old`` into ``new`` with, or None: store ``new`` whole."""
    body = _diff(old, new)
    rebuilt = type(old)()
    rebuilt.CopyFrom(old)
    apply(rebuilt, body)
    return body if rebuilt == new else None


def apply(message: Message, body: Body) -> None:
    """Change ``message`` in place as ``body`` (from :func:`delta`) says."""
    for name in body.get("clear", ()):
        message.ClearField(name)
    for key in ("set", "add"):  # a merge replaces scalars and sub-messages, extends lists
        if key in body:
            message.MergeFrom(ParseDict(body[key], type(message)()))
    for name, changed in body.get("in", {}).items():
        elements = getattr(message, name)
        for index, inner in changed.items():
            apply(elements[int(index)], inner)


def _diff(old: Message, new: Message) -> Body:
    put, add = type(new)(), type(new)()
    clear: list[str] = []
    inner: dict[str, dict[str, Body]] = {}
    for field in new.DESCRIPTOR.fields:
        name = field.name
        before, after = getattr(old, name), getattr(new, name)
        if before == after and _present(old, field) == _present(new, field):
            continue
        if _grows(field) and len(after) >= len(before):
            pairs = enumerate(zip(before, after, strict=False))  # after may be longer
            changed = {str(i): _diff(b, a) for i, (b, a) in pairs if b != a}
            getattr(add, name).extend(after[len(before) :])
            if changed:
                inner[name] = changed
            continue
        clear.append(name)
        if field.is_repeated:
            getattr(put, name).extend(after)
        elif _present(new, field):
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                getattr(put, name).CopyFrom(after)
            else:
                setattr(put, name, after)
    body: Body = {"clear": clear, "set": _dict(put), "add": _dict(add), "in": inner}
    return {key: value for key, value in body.items() if value}


def _dict(message: Message) -> Body:
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
