"""Typed output: adapt() and its errors, the strict transform, output_coerce(), partials."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from dataclasses import dataclass
from typing import Any

import agentkit_schema_attrs
import agentkit_schema_dataclass
import agentkit_schema_jsonschema
import agentkit_schema_pydantic
import pydantic
import pytest

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import OutputValidationError
from agentkit_core import PluginManager
from agentkit_core import hookimpl
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import UnsupportedTypeError
from agentkit_core.plugin import adapt
from agentkit_core.plugin import import_optional
from agentkit_core.plugin import output_coerce
from agentkit_core.plugin import stream_partials
from agentkit_core.plugin import strict_json_schema
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

FLAVOURS = [
    agentkit_schema_jsonschema,
    agentkit_schema_dataclass,
    agentkit_schema_attrs,
    agentkit_schema_pydantic,
]  # deliberately the reverse of the rank order
NO_HOOKS = Hooks()


def manager(*extra: Any) -> PluginManager:
    return PluginManager(entry_points=False, plugins=[*FLAVOURS, *extra])


@dataclass
class Plan:
    subject: str
    steps: list[str]


class Hybrid(pydantic.BaseModel):
    subject: str


# Give the model what dataclasses.is_dataclass() looks for: the dataclass probe now accepts it.
Hybrid.__dataclass_fields__ = {}  # type: ignore[attr-defined]


# ----------------------------------------------------------------- dispatch


def test_a_pydantic_class_that_passes_the_dataclass_probe_goes_to_pydantic() -> None:
    assert agentkit_schema_dataclass.probe(Hybrid)
    adapter = adapt(Hybrid, manager=manager())
    assert type(adapter).__name__ == "PydanticAdapter"
    assert adapter.parse('{"subject": "x"}') == Hybrid(subject="x")


def test_each_kind_of_type_gets_its_flavour() -> None:
    import attrs

    @attrs.define
    class A:
        x: int

    pm = manager()
    picked = {
        type(adapt(t, manager=pm)).__name__
        for t in (Plan, A, Hybrid, {"type": "object", "properties": {}})
    }
    assert picked == {"DataclassAdapter", "AttrsAdapter", "PydanticAdapter", "JSONSchemaAdapter"}
    # a pydantic *dataclass* is no BaseModel: the dataclass flavour takes it, and it works
    pdc = pydantic.dataclasses.dataclass(type("P", (), {"__annotations__": {"n": int}}))
    adapter = adapt(pdc, manager=pm)
    assert type(adapter).__name__ == "DataclassAdapter" and adapter.parse('{"n": 2}').n == 2


def test_probes_run_by_rank_then_name_whatever_the_plugin_order() -> None:
    asked: list[str] = []

    class Greedy:
        @hookimpl
        def agentkit_register_schema_adapters(self, register: Any) -> None:
            for name, rank in (("zeta", 5), ("alpha", 5), ("late", 99)):
                register(name, lambda tp, n=name: asked.append(n) or n == "zeta", None, rank=rank)

    with pytest.raises(TypeError):  # zeta accepts; its factory (None) is then called
        adapt(Plan, manager=manager(Greedy()))
    assert asked == ["alpha", "zeta"]


def test_a_type_no_flavour_accepts_names_the_installed_flavours_and_what_to_install() -> None:
    with pytest.raises(UnsupportedTypeError, match=r"accepts <class 'int'>") as info:
        adapt(int, manager=manager())
    message = str(info.value)
    assert "pydantic (rank 10), attrs (rank 20), dataclass (rank 30), jsonschema (rank 40)" in (
        message
    )
    assert "install its flavour" not in message  # every shipped one is installed already
    with pytest.raises(UnsupportedTypeError, match="installed flavours: none") as info:
        adapt(Plan, manager=PluginManager(entry_points=False))
    assert "agentkit-schema-dataclass (dataclasses)" in str(info.value)
    only_pydantic = PluginManager(entry_points=False, plugins=[agentkit_schema_pydantic])
    with pytest.raises(UnsupportedTypeError) as info:
        adapt(Plan, manager=only_pydantic)
    assert "agentkit-schema-dataclass" in str(info.value)
    assert "agentkit-schema-pydantic" not in str(info.value)  # installed, so not advised


def test_a_msgspec_struct_is_refused_as_not_supported_yet(monkeypatch: Any) -> None:
    # adapt() only looks msgspec up in sys.modules (never imports it); give it one there.
    fake = types.ModuleType("msgspec")

    class Struct:
        pass

    fake.Struct = Struct  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "msgspec", fake)
    point = type("Point", (Struct,), {})
    with pytest.raises(UnsupportedTypeError, match=r"msgspec\.Struct, which is not supported yet"):
        adapt(point, manager=manager())
    assert type(adapt(Plan, manager=manager())).__name__ == "DataclassAdapter"


def test_a_missing_library_makes_only_its_flavour_unavailable() -> None:
    class NeedsLib:
        @hookimpl
        def agentkit_register_schema_adapters(self, register: Any) -> None:
            def factory(tp: Any) -> Any:
                import_optional("agentkit_no_such_lib", install="agentkit-no-such-lib", flavour="x")

            register("x", lambda tp: tp is bytes, factory, rank=1)

    pm = manager(NeedsLib())
    with pytest.raises(UnsupportedTypeError, match="pip install agentkit-no-such-lib"):
        adapt(bytes, manager=pm)
    assert adapt(Plan, manager=pm).parse('{"subject": "s", "steps": []}') == Plan("s", [])


def test_discovering_and_using_other_flavours_imports_no_attrs_jsonschema_or_msgspec() -> None:
    code = """
import sys, dataclasses
from agentkit_core import PluginManager
from agentkit_core.plugin import adapt
import agentkit_schema_attrs, agentkit_schema_dataclass, agentkit_schema_jsonschema
import agentkit_schema_pydantic
pm = PluginManager(entry_points=False, plugins=[agentkit_schema_attrs, agentkit_schema_dataclass,
    agentkit_schema_jsonschema, agentkit_schema_pydantic])
P = dataclasses.make_dataclass("P", [("n", int)])
assert adapt(P, manager=pm).parse('{"n": 1}').n == 1
print(sorted(m for m in ("attr", "attrs", "jsonschema", "msgspec") if m in sys.modules))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_an_adapter_passes_through_adapt(pm) -> None:
    adapter = adapt(Plan, manager=manager())
    assert adapt(adapter, manager=pm) is adapter


# ----------------------------------------------------------------- strict schema


def test_strict_schema_requires_everything_and_makes_optional_nullable() -> None:
    class Inner(pydantic.BaseModel):
        a: int
        b: str = "x"

    class Outer(pydantic.BaseModel):
        inner: Inner
        maybe: Inner | None = None
        kind: str = "k"
        level: int | str = 1

    original = Outer.model_json_schema()
    snapshot = json.dumps(original, sort_keys=True)
    strict = strict_json_schema(original)
    assert json.dumps(original, sort_keys=True) == snapshot  # input left alone
    assert strict["required"] == ["inner", "maybe", "kind", "level"]
    assert strict["additionalProperties"] is False
    assert strict["properties"]["kind"]["type"] == ["string", "null"]
    assert strict["properties"]["maybe"] == original["properties"]["maybe"]  # already nullable
    assert {"type": "null"} in strict["properties"]["level"]["anyOf"]
    inner = strict["$defs"]["Inner"]
    assert inner["required"] == ["a", "b"] and inner["additionalProperties"] is False
    assert inner["properties"]["b"]["type"] == ["string", "null"]


def test_strict_schema_rewrites_one_of_enums_and_refs() -> None:
    schema = {
        "type": "object",
        "properties": {
            "colour": {"type": "string", "enum": ["red", "blue"]},
            "ref": {"$ref": "#/$defs/X"},
            "either": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
            "items": {"type": "array", "items": {"type": "object", "properties": {"z": {}}}},
        },
        "required": ["either", "items"],
        "$defs": {"X": {"type": "object", "properties": {"y": {"type": "integer"}}}},
    }
    strict = strict_json_schema(schema)
    props = strict["properties"]
    assert props["colour"] == {"type": ["string", "null"], "enum": ["red", "blue", None]}
    assert props["ref"] == {"anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}]}
    assert "oneOf" not in props["either"] and len(props["either"]["anyOf"]) == 2
    assert props["items"]["items"]["required"] == ["z"]
    assert strict["$defs"]["X"]["additionalProperties"] is False


def test_strict_schema_refuses_a_free_form_map_and_says_where() -> None:
    class WithMap(pydantic.BaseModel):
        counts: dict[str, int]

    with pytest.raises(UnsupportedTypeError, match="free-form object at #/properties/counts"):
        strict_json_schema(WithMap.model_json_schema())


# ----------------------------------------------------------------- output_coerce


def plan_coerce(retries: int = 2) -> Any:
    return output_coerce(adapt(Plan, manager=manager()), retries)


def request() -> ModelRequest:
    return ModelRequest((Message.user("plan"),))


async def test_output_coerce_repairs_with_the_errors_then_returns_the_typed_value() -> None:
    model = ScriptedModel(['{"subject": "ship"}', '{"subject": "ship", "steps": ["go"]}'])
    req = request()
    response = await plan_coerce().wrap_model(req, model.request)
    assert response.output == Plan("ship", ["go"])
    bad, feedback = model.requests[1].messages[-2:]
    assert bad.text == '{"subject": "ship"}'
    assert feedback.role == "user" and "steps: Field required" in feedback.text
    assert [m.text for m in req.metadata["output_repairs"]] == [bad.text, feedback.text]


async def test_output_coerce_gives_up_after_its_retries_with_raw_and_errors() -> None:
    model = ScriptedModel(["nope", '{"subject": 1}'])
    with pytest.raises(OutputValidationError, match="Plan after 1 repair rounds") as info:
        await plan_coerce(retries=1).wrap_model(request(), model.request)
    assert info.value.raw == '{"subject": 1}'
    assert "subject: Input should be a valid string" in info.value.errors
    assert "steps: Field required" in info.value.errors
    assert info.value.transcript[-1].text == '{"subject": 1}'
    assert len(model.requests) == 2


async def test_output_coerce_leaves_tool_calls_alone() -> None:
    model = ScriptedModel([Message.assistant("", tool_calls=[tool_call("add")])])
    response = await plan_coerce().wrap_model(request(), model.request)
    assert response.output is None and response.message.tool_calls


async def test_agent_keeps_the_repair_exchange_in_the_transcript() -> None:
    model = ScriptedModel(["not json", '{"subject": "s", "steps": []}'])
    result = await Agent("t", model, output=Plan, hooks=NO_HOOKS).run("plan")
    assert result.output == Plan("s", [])
    texts = [m.text for m in result.transcript if m.role in ("user", "assistant")]
    assert texts[-3] == "not json" and "Invalid JSON" in texts[-2]
    assert texts[-1] == '{"subject": "s", "steps": []}'


class NativeModel(ScriptedModel):
    supports_structured_output = True


async def test_the_schema_goes_in_the_prefix_only_without_native_structured_output() -> None:
    answer = '{"subject": "s", "steps": []}'
    for model, in_prefix in ((ScriptedModel([answer]), True), (NativeModel([answer]), False)):
        await Agent("t", model, output=Plan, hooks=NO_HOOKS).run("plan")
        sent = model.requests[0]
        assert sent.output is not None and sent.output.name == "Plan"
        system = " ".join(m.text for m in sent.messages if m.role == "system")
        assert ('"steps"' in system) is in_prefix


# ----------------------------------------------------------------- streaming partials


async def test_stream_partials_grow_as_the_answer_streams() -> None:
    text = '{"subject": "shipping the release", "steps": ["build", "tag", "publish"]}'
    model = ScriptedModel([text])
    adapter = adapt(Plan, manager=manager())
    events = [e async for e in stream_partials(adapter, model.stream(request()))]
    partials = [e.partial for e in events if e.kind == "partial"]
    assert events[-1].kind == "done"
    subjects = [getattr(p, "subject", None) for p in partials]
    assert subjects[0] is None or "shipping the release".startswith(subjects[0])
    assert "shipping the release" in subjects
    assert [getattr(p, "steps", None) for p in partials][-1] == ["build", "tag", "publish"]
    lengths = [len(getattr(p, "steps", [])) for p in partials]
    assert lengths == sorted(lengths) and lengths[0] < lengths[-1]


def test_plugins_list_shows_each_flavour_probe_rank() -> None:
    import os
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKIT_")}
    env["AGENTKIT_LOAD_PLUGINS"] = "pydantic,attrs,dataclass,jsonschema"
    agentkit = Path(sys.executable).with_name("agentkit")
    out = subprocess.run(
        [str(agentkit), "plugins", "list", "--wide"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name, rank in (("pydantic", 10), ("attrs", 20), ("dataclass", 30), ("jsonschema", 40)):
        assert f"schema_adapters:{name}(rank={rank})" in out, out
