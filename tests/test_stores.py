"""agentkit_core.stores.store_plugin: one call gives a store plugin its opener, its registration
hook and its lazy store class; the store module loads only when a store is opened."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import agentkit_core.stores
from agentkit_core._urls import url_scheme
from agentkit_core.plugin import mask_url
from agentkit_core.stores import store_plugin

STORE_PLUGINS = (
    "checkpoint_memory",
    "checkpoint_postgres",
    "checkpoint_sqlite",
    "memory_files",
    "memory_postgres",
    "memory_sqlite",
    "session_memory",
    "session_postgres",
    "session_sqlite",
)


def run(code: str, *, path: Path | None = None) -> str:
    env_path = [str(path)] if path is not None else []
    done = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path[:0] = {env_path!r}\n{textwrap.dedent(code)}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    """A store plugin package, ``probe_store``, whose store lives in ``probe_store._store``."""
    package = tmp_path / "probe_store"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from agentkit_core.stores import store_plugin\n\n"
        "open_store, agentkit_register_checkpoint_stores, __getattr__ = store_plugin(\n"
        '    __name__, "checkpoint", schemes=("probe", "probe+x"), opener="._store:Probe.open"\n'
        ")\n",
        encoding="utf-8",
    )
    (package / "_store.py").write_text(
        "from agentkit_checkpoint_memory import MemoryCheckpointStore\n\n\n"
        "class Probe(MemoryCheckpointStore):\n"
        "    @classmethod\n"
        "    async def open(cls, url):\n"
        "        store = cls()\n"
        "        store.url = url\n"
        "        return store\n",
        encoding="utf-8",
    )
    return tmp_path


def test_a_store_registered_through_it_is_imported_only_when_opened(probe: Path) -> None:
    out = run(
        """
        import asyncio
        import probe_store
        from agentkit_core import PluginManager
        from agentkit_core.plugin import open_checkpoint_store

        assert "probe_store._store" not in sys.modules
        pm = PluginManager(entry_points=False, plugins=[probe_store])
        pm.load()
        assert "probe_store._store" not in sys.modules, "registering imported the store"
        port = asyncio.run(open_checkpoint_store("probe+x://here", manager=pm))
        assert "probe_store._store" in sys.modules
        assert type(port) is probe_store.Probe and port.url == "probe+x://here"
        print(sorted(r.name for r in pm.registrations("checkpoint_stores")))
        hook = probe_store.agentkit_register_checkpoint_stores
        print(hook.__module__, hook.__qualname__, probe_store.open_store.__qualname__)
        """,
        path=probe,
    )
    assert out.split("\n")[:2] == [
        "['probe', 'probe+x']",
        "probe_store agentkit_register_checkpoint_stores open_store",
    ]


def test_asking_for_the_class_imports_it_and_other_names_stay_missing(probe: Path) -> None:
    out = run(
        """
        import probe_store
        try:
            probe_store.Nope
        except AttributeError as exc:
            print(exc)
        assert "probe_store._store" not in sys.modules
        print(probe_store.Probe.__module__, "Probe" in vars(probe_store))
        """,
        path=probe,
    )
    assert out.split("\n")[:2] == [
        "module 'probe_store' has no attribute 'Nope'",
        "probe_store._store True",
    ]


def test_the_nine_store_plugins_load_without_their_store_modules() -> None:
    out = run(
        f"""
        import importlib
        for name in {STORE_PLUGINS!r}:
            importlib.import_module("agentkit_" + name)
        print(sorted(m for m in sys.modules if m.endswith("._store")))
        print(sorted(m for m in ("sqlite3", "psycopg", "asyncio") if m in sys.modules))
        """
    )
    assert out.split("\n")[:2] == ["[]", "[]"]


def opener(url: str) -> Any:
    return url


@pytest.mark.parametrize(
    ("seam", "schemes", "target", "error", "message"),
    [
        (
            "sessions",
            "mine",
            opener,
            ValueError,
            "seam 'sessions' is not one of checkpoint",
        ),
        ("session", "SQLite", opener, ValueError, "'SQLite' is not a URL scheme .* lower-case"),
        ("session", "s", opener, ValueError, "'s' is not a URL scheme .* two characters"),
        ("session", "my_db", opener, ValueError, "'my_db' is not a URL scheme"),
        ("session", ("ab", "ab"), opener, ValueError, "scheme 'ab' is given twice"),
        ("session", (), opener, ValueError, "no schemes given"),
        ("memory", "ab", "._store.Store.open", ValueError, "'._store.Store.open' is not 'module:"),
        ("memory", "ab", "_store:", ValueError, "'_store:' is not 'module:Class.method'"),
        ("memory", "ab", 42, TypeError, "opener must be 'module:Class.method' or a callable.* 42"),
    ],
)
def test_a_bad_seam_scheme_or_opener_is_refused_naming_it(
    seam: str, schemes: Any, target: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        store_plugin("probe", seam, schemes=schemes, opener=target)


def test_an_opener_naming_a_missing_attribute_says_so_when_opened() -> None:
    plugin = store_plugin("probe", "session", schemes="ab", opener="json:Nope.open")
    with pytest.raises(ImportError, match=r"store opener 'json:Nope.open' of probe: .* no 'Nope'"):
        plugin.open_store("ab://x")


def test_an_opener_function_is_registered_as_it_is() -> None:
    plugin = store_plugin("probe", "memory", schemes=("ab", "cd"), opener=opener)
    got: list[tuple[str, Any]] = []
    plugin.hook(lambda name, value: got.append((name, value)))
    assert got == [("ab", opener), ("cd", opener)] and plugin.open_store is opener
    with pytest.raises(AttributeError, match="module 'probe' has no attribute 'opener'"):
        plugin.module_getattr("opener")


@given(
    st.one_of(
        st.from_regex(r"[a-z][a-z0-9+.\-]+", fullmatch=True),
        st.text(st.sampled_from("aZ09+-._:/é \x00"), max_size=6),
        st.text(max_size=6),
    )
)
def test_a_scheme_is_taken_exactly_when_a_store_url_with_it_reaches_the_store(scheme: str) -> None:
    """Accepted: what ``open_*_store`` reads back from ``<scheme>://...`` (lower-case, ASCII,
    two characters at least); anything else is refused at load, naming the scheme."""
    valid = re.fullmatch(r"[a-z][a-z0-9+.\-]+", scheme) is not None
    try:
        plugin = store_plugin("probe", "checkpoint", schemes=scheme, opener=opener)
    except ValueError as exc:
        assert not valid and repr(scheme) in str(exc)
        return
    assert valid
    got: list[str] = []
    plugin.hook(lambda name, value: got.append(name))
    assert got == [scheme]
    assert url_scheme(f"{scheme}://host/db") == scheme
    assert mask_url(f"{scheme}://u:pw@host/db") == f"{scheme}://u:***@host/db"


def test_every_name_of_the_package_is_documented() -> None:
    doc = agentkit_core.stores.__doc__ or ""
    for name in agentkit_core.stores.__all__:
        value = getattr(agentkit_core.stores, name)
        assert name in doc or (callable(value) and value.__doc__), name
        if callable(value):
            assert value.__doc__, name
