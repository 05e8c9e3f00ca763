"""Ctrl-C while a plugin is imported: the CLI stops with one line naming the plugin and exit 130
(no traceback); a library caller gets the KeyboardInterrupt, and the manager is left unloaded,
so a later load starts again rather than finding no plugins."""

from __future__ import annotations

import sys
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core._plugins import PluginManager

#: Module bodies that stop the import as a user's Ctrl-C does: raised, or a real SIGINT.
INTERRUPTS = {
    "raised": "raise KeyboardInterrupt\n",
    "sigint": "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(30)\n",
}


@pytest.mark.parametrize("how", sorted(INTERRUPTS))
@pytest.mark.parametrize("command", [["plugins", "list"], ["plugins", "list", "--json"]])
def test_the_cli_names_the_plugin_and_exits_130(
    make_site: Any, cli: Any, how: str, command: list[str]
) -> None:
    site = make_site()
    site.plugin("alpha")
    site.add("agentkit-test-stop", {"stop": "akt_stop"}, {"akt_stop": INTERRUPTS[how]})
    result = cli(*command, pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS="alpha,stop")
    assert result.returncode == 130, result.stderr
    assert result.stderr == (
        "agentkit: interrupted while importing plugin 'stop' (module 'akt_stop')\n"
    )
    assert result.stdout == ""


HOOK = "from agentkit_core import hookimpl\n\n@hookimpl\ndef {}({}):\n    raise KeyboardInterrupt\n"


@pytest.mark.parametrize(
    ("body", "doing"),
    [
        (HOOK.format("agentkit_register_compactors", "register"), "registering plugin 'stop'"),
        (
            HOOK.format("agentkit_register_commands", "cli"),
            "adding the commands of plugin 'stop'",
        ),
    ],
    ids=["registration", "commands"],
)
def test_an_interrupt_in_a_plugin_s_hooks_is_named_too(
    make_site: Any, cli: Any, body: str, doing: str
) -> None:
    site = make_site()
    site.add("agentkit-test-stop", {"stop": "akt_stop"}, {"akt_stop": body})
    result = cli("plugins", "list", pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS="stop")
    assert (result.returncode, result.stderr) == (130, f"agentkit: interrupted while {doing}\n")


def test_a_library_caller_gets_the_interrupt_and_can_load_again(make_site: Any) -> None:
    site = make_site()
    site.plugin("alpha")
    site.add("agentkit-test-stop", {"stop": "akt_stop"}, {"akt_stop": INTERRUPTS["raised"]})
    manager = PluginManager(path=[str(site.path)])
    with pytest.raises(KeyboardInterrupt, match="while importing plugin 'stop'"):
        manager.load()
    assert manager.infos == [] and manager.pm.get_plugins() == set()
    # the interrupted import is not taken for the plugin's state: fixed, the next load has it
    (site.path / "akt_stop.py").write_text("")
    sys.modules.pop("akt_stop", None)
    loaded = {i.name: i.status for i in manager.plugins()}
    assert (loaded["alpha"], loaded["stop"]) == ("loaded", "loaded")


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(count=st.integers(min_value=1, max_value=5), data=st.data())
def test_an_interrupted_load_names_the_plugin_and_leaves_nothing_half_loaded(
    make_site: Any, count: int, data: st.DataObject
) -> None:
    stopper = data.draw(st.integers(min_value=0, max_value=count - 1), label="interrupted")
    tag = uuid.uuid4().hex[:8]
    site = make_site(f"site_{tag}")
    names = [f"p{n}_{tag}" for n in range(count)]
    for n, name in enumerate(names):
        site.plugin(name, registers={"compactors": [name]})
        if n == stopper:
            (site.path / f"akt_{name}.py").write_text(INTERRUPTS["raised"])  # (sigint: above)
    manager = PluginManager(path=[str(site.path)])
    with pytest.raises(KeyboardInterrupt) as raised:
        manager.load()
    assert str(raised.value) == (
        f"interrupted while importing plugin {names[stopper]!r} (module 'akt_{names[stopper]}')"
    )
    assert (manager.infos, manager.pm.get_plugins()) == ([], set())
    (site.path / f"akt_{names[stopper]}.py").write_text(site.source(names[stopper]))
    sys.modules.pop(f"akt_{names[stopper]}", None)
    assert sorted(i.name for i in manager.plugins() if i.status == "loaded") == names
