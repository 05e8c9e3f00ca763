"""The public surface: pinned, every exported name resolves under its public path, and
importing it stays light."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import subprocess
import sys
import traceback
import typing
from pathlib import Path
from types import FunctionType
from types import ModuleType

import pydantic
import pytest

import agentkit_core
import agentkit_core.content
import agentkit_core.events
import agentkit_core.options
import agentkit_core.plugin
import agentkit_core.stores
import agentkit_core.testing

API = Path(__file__).resolve().parent / "api"
PUBLIC = [agentkit_core, agentkit_core.plugin, agentkit_core.testing]
#: The doors whose names are imported on first use, from the table ``_EXPORTS``.
DOORS = [agentkit_core, agentkit_core.plugin]
#: Every public module whose list of names is pinned: the doors, the suites, the store
#: plugins' package, the run's events, the content parts and the option records.
PINNED = [
    *PUBLIC,
    agentkit_core.stores,
    agentkit_core.events,
    agentkit_core.content,
    agentkit_core.options,
]

#: Optional libraries some plugin needs; neither core nor any plugin's entry module may pull
#: them in at import or load time (they cost start-up of ``agentkit plugins list``).
HEAVY = (
    "httpx",
    "psycopg",
    "psycopg_pool",
    "mcp",
    "hypothesis",
    "jsonschema",
    "sqlite3",
    "opentelemetry",
)


#: Python 3.13 warns (an error here) when _eval_type is not told the hint's type parameters.
_EVAL_TYPE = typing._eval_type  # type: ignore[attr-defined]
TYPE_PARAMS = (
    {"type_params": ()} if "type_params" in inspect.signature(_EVAL_TYPE).parameters else {}
)


def exported(module: ModuleType) -> list[tuple[str, object]]:
    return [(name, getattr(module, name)) for name in module.__all__]


@pytest.mark.parametrize("module", PINNED, ids=lambda m: m.__name__)
def test_the_exports_are_the_committed_list(module: ModuleType) -> None:
    """Adding or removing a public name is a deliberate change: edit tests/api/<module>.txt."""
    pinned = (API / f"{module.__name__}.txt").read_text(encoding="utf-8").split()
    assert sorted(module.__all__) == pinned, (
        f"{module.__name__}.__all__ differs from tests/api/{module.__name__}.txt; if the change "
        "to the public surface is meant, update that file in the same commit"
    )


@pytest.mark.parametrize("module", PUBLIC, ids=lambda m: m.__name__)
def test_public_objects_show_their_public_module(module: ModuleType) -> None:
    # type(o), not isinstance: on 3.10 a Callable[...] alias passes isinstance(alias, type)
    objects = [(n, o) for n, o in exported(module) if issubclass(type(o), (type, FunctionType))]
    assert len(objects) > 10
    wrong = {n: o.__module__ for n, o in objects if o.__module__ != module.__name__}  # type: ignore[attr-defined]
    assert wrong == {}


def test_reprs_and_tracebacks_name_the_public_path(pm) -> None:
    assert repr(agentkit_core.Agent) == "<class 'agentkit_core.Agent'>"
    assert (
        repr(agentkit_core.testing.ScriptedModel) == "<class 'agentkit_core.testing.ScriptedModel'>"
    )
    try:
        agentkit_core.plugin.resolve_model("no-colon", manager=pm)
    except agentkit_core.ConfigError as exc:
        last = traceback.format_exception_only(type(exc), exc)[-1]
    assert last.startswith("agentkit_core.ConfigError: model string 'no-colon'")


@pytest.mark.parametrize("module", PUBLIC, ids=lambda m: m.__name__)
def test_moving_the_module_path_keeps_every_type_hint_resolvable(module: ModuleType) -> None:
    """Annotations are resolved against ``__module__``; the private names must still resolve."""
    for _name, obj in exported(module):
        if isinstance(obj, type):
            typing.get_type_hints(obj)  # raises NameError if a hint lost its module
            if dataclasses.is_dataclass(obj):  # pydantic reads the fields' own copies
                for field in dataclasses.fields(obj):
                    hint = field.type
                    if isinstance(hint, str):
                        hint = typing.ForwardRef(hint, module=module.__name__)
                    _EVAL_TYPE(hint, vars(module), None, **TYPE_PARAMS)


def test_pydantic_validates_models_with_core_fields() -> None:
    class Record(pydantic.BaseModel):
        messages: list[agentkit_core.Message]
        result: agentkit_core.ToolResult
        usage: agentkit_core.Usage

    record = Record(
        messages=[{"role": "user", "content": "hi"}], result={"content": "ok"}, usage={}
    )
    assert record.messages == [agentkit_core.Message.user("hi")]
    assert record.result == agentkit_core.ToolResult("ok")


def test_python_dash_m_runs_the_command_line() -> None:
    version = subprocess.run(
        [sys.executable, "-m", "agentkit_core", "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"agentkit {agentkit_core.__version__}"
    listed = subprocess.run(
        [sys.executable, "-m", "agentkit_core", "plugins", "list", "--json"],
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 0, listed.stderr
    assert '"name": "truncation"' in listed.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "agentkit_core", "no-such-command"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "invalid choice: 'no-such-command'" in bad.stderr


@pytest.mark.parametrize("module", PUBLIC, ids=lambda m: m.__name__)
def test_every_exported_name_resolves_once(module: object) -> None:
    names = list(module.__all__)  # type: ignore[attr-defined]
    missing = [n for n in names if getattr(module, n, None) is None]
    assert missing == []
    assert len(set(names)) == len(names)


def test_importing_core_and_loading_every_plugin_imports_no_optional_library() -> None:
    code = f"""
import sys
import agentkit_core
pm = agentkit_core.get_plugin_manager()
assert len(pm.plugins()) >= 10, pm.plugins()
print(sorted(m for m in {HEAVY!r} if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("door", DOORS, ids=lambda m: m.__name__)
def test_the_type_checking_imports_are_the_table_of_lazy_names(door: ModuleType) -> None:
    """``_EXPORTS`` (what runs) and the ``TYPE_CHECKING`` imports (what mypy and editors read)
    name the same names from the same modules: a name added to one only fails here."""
    tree = ast.parse(Path(door.__file__).read_text(encoding="utf-8"))  # type: ignore[arg-type]
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
    )
    imported = {
        (node.module, alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names
    }
    table = {
        (module, name)
        for module, names in door._EXPORTS.items()  # type: ignore[attr-defined]
        for name in names
    }
    assert imported == table
    # a module __getattr__ that mypy could see would let ``agentkit_core.Misspelt`` type-check
    assert not any(getattr(node, "name", None) == "__getattr__" for node in tree.body)
    version = ["__version__"] if door is agentkit_core else []
    assert sorted(door.__all__) == sorted([*(name for _, name in table), *version])
    assert set(door.__all__) <= set(dir(door))


def test_the_doors_share_no_name_and_the_root_door_stays_small() -> None:
    assert not set(agentkit_core.__all__) & set(agentkit_core.plugin.__all__)
    assert len(agentkit_core.__all__) <= 80


def test_a_name_that_moved_to_the_plugin_door_still_resolves_with_a_warning() -> None:
    """For one release (0.2), a plugin written against 0.1's names still loads, and is told
    where each name went; the name is gone from the root door's list."""
    assert "ModelRequest" not in agentkit_core.__all__
    assert "ModelRequest" not in dir(agentkit_core)
    with pytest.warns(DeprecationWarning) as caught:
        value = agentkit_core.ModelRequest  # type: ignore[attr-defined]
    assert value is agentkit_core.plugin.ModelRequest
    assert str(caught[0].message) == (
        "agentkit_core.ModelRequest moved to agentkit_core.plugin (import it from there); "
        "this alias goes in 0.3"
    )
    assert caught[0].filename == __file__  # it points at the line that used the old name
    assert "ModelRequest" not in vars(agentkit_core)  # the next use warns again
    with pytest.raises(AttributeError, match="module 'agentkit_core' has no attribute 'Nope'"):
        agentkit_core.Nope  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(
        AttributeError, match=r"module 'agentkit_core\.plugin' has no attribute 'Agent'"
    ):
        agentkit_core.plugin.Agent  # type: ignore[attr-defined]  # noqa: B018


@pytest.mark.parametrize(
    ("door", "name"),
    [(door, name) for door, names in agentkit_core._LEFT_FOR.items() for name in names],  # type: ignore[attr-defined]
)
def test_a_name_that_left_for_the_stores_or_cli_package_resolves_with_a_warning(
    door: str, name: str
) -> None:
    new = pytest.importorskip(door)  # those packages are built on branches of their own
    with pytest.warns(DeprecationWarning, match=rf"agentkit_core\.{name} moved to {door} "):
        assert getattr(agentkit_core, name) is getattr(new, name)
    assert name not in agentkit_core.__all__


#: The docs page that lists each door's names.
PAGES = {"agentkit_core": "getting-started.md", "agentkit_core.plugin": "plugins.md"}


def _documented_assignments(module: ModuleType) -> set[str]:
    """Module-level names assigned under a ``#:`` comment or above a string (a docstring)."""
    source = Path(module.__file__).read_text(encoding="utf-8")  # type: ignore[arg-type]
    lines, body = source.splitlines(), ast.parse(source).body
    found: set[str] = set()
    for node, after in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            commented = lines[node.lineno - 2].lstrip().startswith("#:")
            string = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
            if commented or string:
                found.update(t.id for t in targets if isinstance(t, ast.Name))
    return found


@pytest.mark.parametrize("door", DOORS, ids=lambda m: m.__name__)
def test_every_name_of_a_door_is_documented_and_on_its_page(door: ModuleType) -> None:
    """A class or function has a docstring; a constant or type alias a ``#:`` comment or a
    string after it, where it is defined; and the door's docs page lists every name."""
    undocumented = []
    for module, names in door._EXPORTS.items():  # type: ignore[attr-defined]
        defining = importlib.import_module(f"agentkit_core.{module}")
        assigned = _documented_assignments(defining)
        for name in names:
            obj = getattr(defining, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                documented = bool((obj.__doc__ or "").strip())
            else:
                documented = name in assigned
            if not documented:
                undocumented.append(name)
    assert undocumented == []
    page = (Path(__file__).resolve().parents[1] / "docs" / PAGES[door.__name__]).read_text(
        encoding="utf-8"
    )
    assert [name for name in door.__all__ if f"`{name}`" not in page] == []


def test_importing_the_plugin_door_imports_no_private_module_until_used() -> None:
    code = """
import sys
import agentkit_core.plugin
loaded = sorted(m for m in sys.modules if m.startswith("agentkit_core."))
assert loaded == ["agentkit_core.plugin"], loaded
assert repr(agentkit_core.plugin.Register) == "<class 'agentkit_core.plugin.Register'>"
assert "asyncio" not in sys.modules
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_importing_core_imports_no_asyncio_and_no_private_module_until_used() -> None:
    """``import agentkit_core`` stays the cost of one small module; first use loads the rest."""
    code = """
import sys
import agentkit_core
loaded = sorted(m for m in sys.modules if m.startswith("agentkit_core."))
assert "asyncio" not in sys.modules and loaded == [], loaded
message = agentkit_core.Message.user("hi")
assert "asyncio" not in sys.modules
assert agentkit_core.Agent.__module__ == "agentkit_core", agentkit_core.Agent.__module__
assert "asyncio" in sys.modules  # the loop, now that it is asked for
assert repr(agentkit_core.Message) == "<class 'agentkit_core.Message'>"
from agentkit_core.testing import ScriptedModel
model = ScriptedModel([agentkit_core.Message.assistant("done")])
result = agentkit_core.Agent("a", model, hooks=None).run_sync("go")
print(message.content, result.output)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["hi", "done"]


def test_a_hint_naming_a_module_not_yet_loaded_resolves_on_first_use() -> None:
    """``ToolInvocation.ctx`` is a ``RunContext``, which its module imports only for the type
    checker: first use of ``ToolInvocation`` alone must still give resolvable hints, and load
    ``RunContext``'s module (and asyncio) only when they are read (issue 22)."""
    code = """
import sys
import typing
import agentkit_core
import agentkit_core.plugin
agentkit_core.plugin.ToolInvocation, agentkit_core.plugin.ModelRequest
assert "agentkit_core._context" not in sys.modules and "asyncio" not in sys.modules
hints = typing.get_type_hints(agentkit_core.plugin.ToolInvocation)
assert hints["ctx"] is agentkit_core.RunContext, hints
assert repr(agentkit_core.RunContext) == "<class 'agentkit_core.RunContext'>"
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_a_pinned_hint_is_a_forward_ref_compiled_when_first_evaluated():
    import copy
    import typing

    from agentkit_core._public import _FORWARD_CODE
    from agentkit_core._public import _Pin

    pin = _Pin("int | None", "builtins")
    plain = typing.ForwardRef("int | None", is_argument=False, is_class=True, module="builtins")
    assert pin == plain and hash(pin) == hash(plain) and repr(pin) == repr(plain)
    fresh = _Pin("str", "builtins")
    with pytest.raises(AttributeError):
        _FORWARD_CODE.__get__(fresh)

    def hinted() -> None: ...

    # resolved as every reader resolves a pinned hint: through get_type_hints
    hinted.__annotations__ = {"fresh": fresh, "copied": copy.deepcopy(pin)}
    assert typing.get_type_hints(hinted) == {"fresh": str, "copied": int | None}
    assert _FORWARD_CODE.__get__(fresh) is fresh.__forward_code__
