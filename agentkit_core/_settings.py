"""Request settings checked where they are given, and merged layer over layer.

:class:`~agentkit_core.ModelSettings` is one typed option bag every provider reads from
``ModelRequest.settings``. An agent's settings (``Agent(settings=)``, which a kit's config
carries) are the base; a run's (``run(..., settings=)``) go over them key by key, and
``extra_body`` is merged key by key too, so a run adds a provider extra without dropping the
agent's. A provider maps each field to its wire and documents the fields it ignores.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from ._errors import ConfigError
from ._models import ModelSettings
from ._models import ReasoningEffort
from ._tables import Kind
from ._tables import check_table
from ._tables import unknown_key

#: The values of ``reasoning_effort``.
REASONING_EFFORTS: tuple[str, ...] = typing.get_args(ReasoningEffort)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: Each key of ModelSettings with what its value must be.
SETTINGS_SCHEMA: dict[str, Kind | None] = {
    "temperature": Kind("a number from 0", lambda v: _number(v) and v >= 0),
    "top_p": Kind("a number from 0 to 1", lambda v: _number(v) and 0 <= v <= 1),
    "top_k": Kind("an integer from 1", lambda v: _integer(v) and v >= 1),
    "max_tokens": Kind("an integer from 1", lambda v: _integer(v) and v >= 1),
    "stop": Kind(
        "a list of non-empty strings",
        lambda v: (
            isinstance(v, Sequence)
            and not isinstance(v, str)
            and all(isinstance(s, str) and s for s in v)
        ),
    ),
    "seed": Kind("an integer", _integer),
    "presence_penalty": Kind("a number", _number),
    "frequency_penalty": Kind("a number", _number),
    "tool_choice": Kind(
        '"auto", "none", "required" or a tool\'s name', lambda v: isinstance(v, str) and bool(v)
    ),
    "parallel_tool_calls": Kind("true or false", lambda v: isinstance(v, bool)),
    "reasoning_effort": Kind(
        f"one of {', '.join(map(repr, REASONING_EFFORTS))}", lambda v: v in REASONING_EFFORTS
    ),
    "timeout": Kind("a positive number of seconds", lambda v: _number(v) and v > 0),
    "extra_body": Kind(
        "a table of provider extras",
        lambda v: isinstance(v, Mapping) and all(isinstance(k, str) for k in v),
    ),
}
assert set(SETTINGS_SCHEMA) == set(ModelSettings.__optional_keys__)


def check_settings(value: object, where: str) -> ModelSettings:
    """``value`` as ModelSettings: every key known and every value of its kind.

    An unknown key is a :class:`ConfigError` naming the nearest known one (a provider's own
    field goes in ``extra_body``); ``stop`` given as one string becomes a list of it.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ConfigError(
            f"{where} takes ModelSettings (a mapping such as {{'temperature': 0.2}}), got "
            f"{value!r}",
            value=value,
            source=where,
        )
    table = dict(value)
    for key in table:
        if key not in SETTINGS_SCHEMA:
            near = unknown_key(key, SETTINGS_SCHEMA, where)
            raise ConfigError(
                f"{near}; a provider's own field goes in extra_body",
                value=key,
                source=where,
            )
    if isinstance(table.get("stop"), str):
        table["stop"] = [table["stop"]]
    checked = check_table(table, SETTINGS_SCHEMA, where)
    if "extra_body" in checked:
        checked["extra_body"] = dict(checked["extra_body"])
    if "stop" in checked:
        checked["stop"] = list(checked["stop"])
    return checked  # type: ignore[return-value]


def merge_settings(*layers: ModelSettings | None) -> ModelSettings:
    """The layers merged in order: a later key replaces an earlier one, ``extra_body`` merges."""
    merged: dict[str, Any] = {}
    for layer in layers:
        items: Mapping[str, Any] = layer or {}
        for key, value in items.items():
            if key == "extra_body":
                merged[key] = {**merged.get(key, {}), **value}
            else:
                merged[key] = value
    return merged  # type: ignore[return-value]
