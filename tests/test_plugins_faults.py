"""At load: hooks agentkit cannot call as declared are refused, and no plugin ends the host."""

from __future__ import annotations

import pytest

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import PluginConfig
from agentkit_core import PluginLoadError
from agentkit_core import PluginManager

GOOD = "good = 1\n"


def manager(site, **kwargs) -> PluginManager:
    kwargs.setdefault("config", PluginConfig())
    return PluginManager(path=[str(site.path)], **kwargs).load()


def one_plugin(make_site, code: str, name: str = "odd"):
    site = make_site()
    site.add(f"agentkit-test-{name}", {name: f"akt_{name}"}, {f"akt_{name}": code})
    return site


WRAPPERS = {
    "wrapper on a contested hook": (
        "@hookimpl(wrapper=True)\ndef agentkit_transform(ctx, transcript):\n"
        "    result = yield\n    return result\n",
        "hook agentkit_transform: it is marked wrapper=True",
    ),
    "old-style hookwrapper on a contested hook": (
        "@hookimpl(hookwrapper=True)\ndef agentkit_before_tool_call(ctx, call):\n    yield\n",
        "hook agentkit_before_tool_call: it is marked hookwrapper=True",
    ),
    "wrapper on a registration hook": (
        "@hookimpl(wrapper=True)\ndef agentkit_register_compactors(register):\n"
        "    register('x', object)\n    return (yield)\n",
        "hook agentkit_register_compactors: it is marked wrapper=True",
    ),
    "tryfirst on a contested hook": (
        "@hookimpl(tryfirst=True)\ndef agentkit_before_turn(ctx, info):\n    return None\n",
        "hook agentkit_before_turn: it is marked tryfirst=True, which would reorder it",
    ),
    "trylast on the commands hook": (
        "@hookimpl(trylast=True)\ndef agentkit_register_commands(cli):\n    pass\n",
        "hook agentkit_register_commands: it is marked trylast=True",
    ),
    "a keyword-only parameter without a default": (
        "@hookimpl\ndef agentkit_output_guard(message, *, strict):\n    return None\n",
        "hook agentkit_output_guard: keyword-only parameter 'strict' has no default",
    ),
}


@pytest.mark.parametrize("case", sorted(WRAPPERS))
def test_a_hook_agentkit_cannot_call_as_declared_leaves_its_plugin_out(make_site, case) -> None:
    code, reason = WRAPPERS[case]
    site = one_plugin(make_site, "from agentkit_core import hookimpl\n\n" + code)
    pm = manager(site)
    (info,) = pm.plugins()
    assert info.status == "failed"
    assert info.error is not None
    assert info.error.startswith("registration failed: PluginLoadError: plugin 'odd': ")
    assert reason in info.error
    assert Hooks.from_plugins(pm).empty and pm.registrations("compactors") == []
    with pytest.raises(PluginLoadError, match=r"odd failed: .*plugin 'odd': hook agentkit_"):
        manager(site, strict=True)


def test_tryfirst_on_a_registration_hook_changes_nothing_and_is_allowed(make_site) -> None:
    code = (
        "from agentkit_core import hookimpl\n\n@hookimpl(tryfirst=True)\n"
        "def agentkit_register_compactors(register):\n    register('c', object)\n"
    )
    pm = manager(one_plugin(make_site, code))
    assert [(i.status, i.provides) for i in pm.plugins()] == [("loaded", ["compactors:c"])]


EXITS = {
    "sys.exit at import": (
        "import sys\nsys.exit(3)\n",
        "import of 'akt_odd' failed: SystemExit: 3",
    ),
    "a BaseException at import": (
        "class Bail(BaseException):\n    pass\n\nraise Bail('gone')\n",
        "import of 'akt_odd' failed: Bail: gone",
    ),
    "sys.exit in a registration hook": (
        "import sys\nfrom agentkit_core import hookimpl\n\n@hookimpl\n"
        "def agentkit_register_guardrails(register):\n    sys.exit('no guardrails today')\n",
        "registration failed: SystemExit: no guardrails today",
    ),
}


@pytest.mark.parametrize("case", sorted(EXITS))
def test_a_plugin_that_exits_is_listed_as_failed_not_fatal(make_site, case) -> None:
    code, error = EXITS[case]
    site = one_plugin(make_site, code)
    pm = manager(site)
    (info,) = pm.plugins()
    assert (info.status, info.error) == ("failed", error)
    with pytest.raises(PluginLoadError, match=r"odd failed: "):
        manager(site, strict=True)
    result = Agent("a", "test", hooks=None, manager=pm).run_sync("still runs")
    assert result.status == "done"


def test_ctrl_c_during_a_plugin_import_still_stops_the_host(make_site) -> None:
    site = one_plugin(make_site, "raise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        manager(site)


def test_the_command_line_lists_an_exiting_plugin_and_keeps_going(make_site, cli) -> None:
    site = one_plugin(make_site, "import sys\nsys.exit(3)\n", name="quitter")
    listed = cli("plugins", "list", "--wide", pythonpath=[site.path])
    assert listed.returncode == 0, listed.stderr
    row, why = [line.split() for line in listed.stdout.splitlines() if "quitter" in line]
    assert row[1:3] == ["quitter", "agentkit-test-quitter"] and row[-1] == "failed"
    assert " ".join(why) == "quitter: import of 'akt_quitter' failed: SystemExit: 3"
    checked = cli("plugins", "check", pythonpath=[site.path])
    assert checked.returncode == 1
    assert (
        "quitter (agentkit-test-quitter) failed: import of 'akt_quitter' failed: SystemExit: 3"
        in (checked.stdout)
    )
    strict = cli("plugins", "list", pythonpath=[site.path], AGENTKIT_STRICT_PLUGINS="1")
    assert strict.returncode == 2 and "Traceback" not in strict.stderr
    assert strict.stderr.startswith("agentkit: error: ") and "SystemExit: 3" in strict.stderr
    ran = cli("run", "hello", "--model", "test", pythonpath=[site.path])
    assert ran.returncode == 0, ran.stderr


def test_a_commands_hook_that_exits_is_a_warning_and_the_cli_keeps_going(make_site, cli) -> None:
    code = (
        "import sys\nfrom agentkit_core import hookimpl\n\n@hookimpl\n"
        "def agentkit_register_commands(cli):\n    sys.exit(5)\n"
    )
    site = one_plugin(make_site, code, name="leaver")
    result = cli("plugins", "list", pythonpath=[site.path])
    assert result.returncode == 0, result.stderr
    assert "plugin 'leaver': its commands failed: SystemExit: 5" in result.stderr
