"""The export rule for span attributes: what an exporter may record of a span, and how much.

An attribute is *safe* (a number, a flag, or a name in :data:`SAFE_ATTRIBUTES`) or *text*; a
secret-tainted span's text attributes are withheld as its payload is, and every string is
capped at :data:`ATTRIBUTE_LIMIT` characters. Every exporter (tracing-otel, the trace file, the
viewer) goes through :func:`export_attributes` and :func:`export_error`, so a secret or a
megabyte-long reason leaves a run the same way whichever one records it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from ._encoder import jsonable
from ._messages import JSONValue

#: The most characters an exported attribute value (or a span's error) holds. A longer string is
#: cut to fit, a marker saying how much was cut in place of its end (a 5,000,000-character
#: reason keeps its first 4,064 and ``…[cut 4,995,936 chars]``); a longer list keeps the items
#: that fit and ends with ``…[cut N items]``. Long enough for any error message or reason a
#: person reads; a value past it is data that belongs in the payload.
ATTRIBUTE_LIMIT = 4096

#: What a secret-tainted span exports in place of a text attribute (each item, for a list).
WITHHELD = "(withheld: the run is secret-tainted)"

#: Attribute names that never hold what a person or a model wrote: ids, names from the agent's
#: own configuration (the agent, a registered tool, a plugin, a policy rule), and values from a
#: fixed vocabulary (a status, a decision, a finish reason). Numbers and booleans are safe under
#: any name. Every other attribute is text, withheld from a tainted span's export: an attribute
#: a plugin adds is text unless it is a number or a flag.
SAFE_ATTRIBUTES = frozenset(
    {
        "agent",
        "status",
        "pending",
        "model",
        "finish_reason",
        "tool_call_ids",
        "step",
        "tool",
        "call_id",
        "decision",
        "source",
        "rule",
        "guardrail",
        "hook",
        "plugin",
        "function",
        "provider",
        "session_id",
    }
)

#: Per span name, names safe elsewhere that this span fills from the model's own words: a
#: verdict is on the call the model asked for, whose name need not be any tool's.
_TEXT_ON: dict[str, frozenset[str]] = {"verdict": frozenset({"tool"})}
_NO_TEXT: frozenset[str] = frozenset()

#: Room kept at the end of a cut string for its marker (the longest count fits).
_MARK_ROOM = 32

_NUMBERS = (bool, int, float)
#: Value types exported as they are whatever their size (subclasses take the full rule).
AS_IS = frozenset({bool, int, float, type(None)})


def export_attributes(
    name: str, attributes: Mapping[str, object], tainted: bool
) -> Mapping[str, Any]:
    """The attributes of a span called ``name`` as an exporter may record them.

    Numbers, flags and None pass as they are. When ``tainted``, every text attribute (see
    :data:`SAFE_ATTRIBUTES`) becomes :data:`WITHHELD`, item by item for a list, so a
    secret a person answered cannot ride out in a URL, a tool name or a reason. Every other
    value is capped at :data:`ATTRIBUTE_LIMIT`. A reader may apply it again to spans it reads
    (a trace file an older version wrote): what it returned stays within the same bounds.

    When nothing needs withholding or capping (an untainted span of numbers, flags, None,
    texts and lists or tuples of texts within the cap: a turn's spans), it is ``attributes``
    itself behind a read-only view, not a copy: each exporter of each span would otherwise copy
    it. The view is live: copy it (``dict(...)``) to keep or change it. Otherwise, a new dict.
    """
    if not tainted:
        for value in attributes.values():
            if type(value) is str:
                if len(value) > ATTRIBUTE_LIMIT:
                    break
            elif type(value) in AS_IS:
                continue
            elif type(value) is list or type(value) is tuple:
                try:  # texts only (join refuses anything else), within the cap
                    if len("".join(value)) <= ATTRIBUTE_LIMIT:
                        continue
                except TypeError:
                    pass
                break
            else:
                break
        else:
            return MappingProxyType(attributes)
    return _export_copy(name, attributes, tainted)


def _export_copy(name: str, attributes: Mapping[str, object], tainted: bool) -> dict[str, object]:
    """:func:`export_attributes` as a new dict, each value through the rule."""
    text_here = _TEXT_ON.get(name, _NO_TEXT)
    out: dict[str, object] = {}
    for key, value in attributes.items():
        if value is None or isinstance(value, _NUMBERS):
            out[key] = value
        elif tainted and (key not in SAFE_ATTRIBUTES or key in text_here):
            out[key] = (
                _bounded([WITHHELD] * len(value)) if isinstance(value, (list, tuple)) else WITHHELD
            )
        elif type(value) is str and len(value) <= ATTRIBUTE_LIMIT:
            out[key] = value  # the common case, first
        else:
            out[key] = _bounded(value)
    return out


def export_error(error: str | None, error_type: str | None, tainted: bool) -> str | None:
    """A span's ``error`` as an exporter may record it: capped, and withheld when ``tainted``.

    An error's message often quotes its input (the URL refused, the arguments that did not
    parse); its type is kept.
    """
    if error is None:
        return None
    if tainted:
        return f"{error_type or 'error'}: {WITHHELD}"
    return _cut(error, ATTRIBUTE_LIMIT)


def _cut(text: str, room: int) -> str:
    """``text`` in at most ``room`` characters: as it is, or its start and a cut marker."""
    if len(text) <= room:
        return text
    keep = max(room - _MARK_ROOM, 0)
    return f"{text[:keep]}…[cut {len(text) - keep:,} chars]"


def _bounded(value: object) -> object:
    """``value`` capped at :data:`ATTRIBUTE_LIMIT` characters (its JSON's, if not text).

    A list of scalars (ids, names) is capped by the characters of its items, whole items
    kept; any other value by its JSON, which becomes the string kept when too long.
    """
    if isinstance(value, str):
        return _cut(value, ATTRIBUTE_LIMIT)
    if isinstance(value, (list, tuple)):
        total = 0
        for item in value:
            if isinstance(item, str):
                total += len(item)
            elif item is None or isinstance(item, _NUMBERS):
                total += len(str(item))
            else:
                break
        else:
            return value if total <= ATTRIBUTE_LIMIT else _cut_list(value)
    text = json.dumps(recordable(value), ensure_ascii=False)
    return value if len(text) <= ATTRIBUTE_LIMIT else _cut(text, ATTRIBUTE_LIMIT)


def _cut_list(items: Sequence[object]) -> list[object]:
    """The first of ``items`` (scalars) that fit the limit, and a marker saying how many not."""
    left = ATTRIBUTE_LIMIT - _MARK_ROOM  # room for the items marker
    out: list[object] = []
    for item in items:
        size = len(item) if isinstance(item, str) else len(str(item))
        if size > left:
            if isinstance(item, str) and left > _MARK_ROOM:
                out.append(_cut(item, left))
            break
        out.append(item)
        left -= size
    out.append(f"…[cut {len(items) - len(out):,} items]")
    return out


#: What a span records in place of a value the encoder refuses: nested past its depth limit
#: (255 levels) or holding itself.
UNRECORDABLE = "…[not recorded: nested too deep, or holding itself]"


def recordable(value: object, levels: int = 3) -> JSONValue:
    """:func:`jsonable` ``value``, with what the encoder refuses as :data:`UNRECORDABLE`.

    A model's tool arguments nested 300 deep made a span's payload unencodable, and the
    exporter that tried was detached from the run: the trace lost the rest of it. Only the
    refused part goes, looked for through ``levels`` of mappings and lists (a payload, its
    arguments, each argument); the encoder's success costs nothing more.
    """
    try:
        return jsonable(value)
    except ValueError:
        if levels > 0 and isinstance(value, Mapping):
            return {str(key): recordable(item, levels - 1) for key, item in value.items()}
        if levels > 0 and isinstance(value, list | tuple):
            return [recordable(item, levels - 1) for item in value]
        return UNRECORDABLE
