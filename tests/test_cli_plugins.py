"""``agentkit plugins ...`` in real subprocesses over throwaway distributions."""

from __future__ import annotations

import json
import random

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core._discovery import PluginInfo
from agentkit_core._plugins import Registration
from agentkit_core.cli._plugins import WIDTH
from agentkit_core.cli._plugins import list_table

RECORD_FIELDS = {
    "name",
    "distribution",
    "version",
    "source",
    "status",
    "position",
    "priority",
    "before",
    "after",
    "requires_core",
    "provides",
    "hooks",
    "commands",
    "module",
    "error",
}

ADAPTER = """
@hookimpl
def agentkit_register_schema_adapters(register):
    register("flavour", lambda tp: False, lambda tp: None, rank=15)
"""


def test_list_json_has_the_documented_fields(make_site, cli):
    site = make_site()
    site.plugin("alpha", registers={"compactors": ["c1"]}, extra=ADAPTER, priority=3)
    site.add("agentkit-test-boom", {"boom": "akt_boom"}, {"akt_boom": "1/0\n"})
    result = cli(
        "plugins", "list", "--json", pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS="alpha,boom"
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"schema", "core_version", "fingerprint", "plugins", "warnings"}
    assert data["schema"] == 1 and len(data["fingerprint"]) == 12
    mine = {p["name"]: p for p in data["plugins"]}
    alpha, boom = mine["alpha"], mine["boom"]
    assert set(alpha) == RECORD_FIELDS
    assert alpha["provides"] == [
        {"seam": "compactors", "name": "c1", "meta": {}},
        {"seam": "schema_adapters", "name": "flavour", "meta": {"rank": 15}},
    ]
    assert (alpha["position"], alpha["priority"], alpha["hooks"]) == (
        0,
        3,
        ["agentkit_before_turn"],
    )
    assert (boom["status"], boom["position"]) == ("failed", None)
    assert boom["error"] == "import of 'akt_boom' failed: ZeroDivisionError: division by zero"

    table = cli("plugins", "list", pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS="alpha,boom")
    assert "schema_adapters:flavour hook:before_turn" in table.stdout
    wide = cli("plugins", "list", "--wide", pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS="alpha")
    assert (
        "schema_adapters:flavour(rank=15)" in wide.stdout and "agentkit-test-alpha" in wide.stdout
    )
    assert "  boom: import of 'akt_boom' failed" in table.stdout
    assert f"; core {data['core_version']}; order {data['fingerprint']}" in table.stdout
    assert "allow-list" not in table.stdout  # a disabled plugin's reason shows in `show`


def test_same_set_in_different_orders_gives_identical_results(make_site, cli, tmp_path):
    specs = {
        "delta": {"priority": 5},
        "alpha": {"after": ("charlie",)},
        "charlie": {"registers": {"compactors": ["keep"]}},
        "bravo": {"priority": 5, "before": ("delta",)},
        "echo": {"registers": {"guardrails": ["g"]}},
        "foxtrot": {"priority": -1},
    }
    outputs = set()
    rng = random.Random(7)
    for run, seed in enumerate(("0", "12345", "random")):
        names = list(specs)
        rng.shuffle(names)
        one, two = make_site(f"r{run}a"), make_site(f"r{run}b")
        for i, name in enumerate(names):
            (one if i % 2 else two).plugin(name, **specs[name])
        paths = [one.path, two.path] if run % 2 else [two.path, one.path]
        env = {"AGENTKIT_LOAD_PLUGINS": ",".join(specs), "PYTHONHASHSEED": seed}
        listed = cli("plugins", "list", "--json", pythonpath=paths, **env)
        hooks = cli("plugins", "hooks", "--json", pythonpath=paths, **env)
        assert listed.returncode == hooks.returncode == 0, listed.stderr + hooks.stderr
        outputs.add((listed.stdout, hooks.stdout))
    assert len(outputs) == 1
    listed_out, hooks_out = outputs.pop()
    order = [p["name"] for p in json.loads(listed_out)["plugins"] if p["status"] == "loaded"]
    assert order == ["bravo", "delta", "charlie", "alpha", "echo", "foxtrot"]
    before_turn = next(
        h for h in json.loads(hooks_out)["hooks"] if h["hook"] == "agentkit_before_turn"
    )
    assert [i["plugin"] for i in before_turn["implementations"]] == order


def test_hook_call_order_is_the_listed_order_in_every_environment(make_site, tmp_path):
    import os
    import subprocess
    import sys

    script = (
        "from agentkit_core import get_plugin_manager\n"
        "print(get_plugin_manager().hook.agentkit_before_turn(ctx=None, info=None))\n"
    )
    seen = set()
    for run, seed in enumerate(("1", "999")):
        site = make_site(f"s{run}")
        names = ["kilo", "juliet", "lima", "india"][:: 1 if run else -1]
        for name in names:
            site.plugin(name, priority=1 if name == "lima" else 0)
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKIT_")}
        env.update(PYTHONPATH=str(site.path), PYTHONHASHSEED=seed)
        env["AGENTKIT_LOAD_PLUGINS"] = ",".join(names)
        out = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        seen.add(out.stdout)
    assert seen == {"[['lima'], ['india'], ['juliet'], ['kilo']]\n"}


def test_check_exit_codes(make_site, cli):
    site = make_site()
    site.plugin("fine").plugin("future", requires=("agentkit-core>=9",))
    site.plugin("c1", registers={"models": ["dup"]}).plugin("c2", registers={"models": ["dup"]})
    site.add("agentkit-test-boom", {"boom": "akt_boom"}, {"akt_boom": "raise ImportError('x')\n"})
    ok = cli("plugins", "check", pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS="fine")
    assert ok.returncode == 0 and ok.stdout.startswith("ok: 1 plugins loaded; order ")
    for allow, status in (
        ("fine,future", "incompatible"),
        ("boom", "failed"),
        ("c1,c2", "conflict"),
    ):
        bad = cli("plugins", "check", pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS=allow)
        assert bad.returncode == 1, (allow, bad.stdout, bad.stderr)
        assert f" {status}: " in bad.stdout
    as_json = cli(
        "plugins", "check", "--json", pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS="boom"
    )
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["ok"] is False
    strict = cli(
        "plugins",
        "list",
        pythonpath=[site.path],
        AGENTKIT_LOAD_PLUGINS="boom",
        AGENTKIT_STRICT_PLUGINS="1",
    )
    assert strict.returncode == 2
    assert "agentkit: error: 1 plugin(s) could not load: boom failed" in strict.stderr


def test_show_one_plugin_and_an_unknown_name(make_site, cli):
    site = make_site()
    site.plugin("future", requires=("agentkit-core>=9",), registers={"compactors": ["x"]})
    shown = cli(
        "plugins",
        "show",
        "agentkit-test-future",
        pythonpath=[site.path],
        AGENTKIT_LOAD_PLUGINS="future",
    )
    assert shown.returncode == 0
    assert "status:        incompatible" in shown.stdout
    assert "requires agentkit-core>=9, but agentkit-core" in shown.stdout
    as_json = cli(
        "plugins",
        "show",
        "future",
        "--json",
        pythonpath=[site.path],
        AGENTKIT_LOAD_PLUGINS="future",
    )
    assert set(json.loads(as_json.stdout)) == RECORD_FIELDS
    missing = cli("plugins", "show", "nope", pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS="future")
    assert missing.returncode == 2
    assert "agentkit: error: no plugin named 'nope'; known plugins: " in missing.stderr
    assert "future" in missing.stderr


COMMAND = """
@hookimpl
def agentkit_register_commands(cli):
    p = cli.add_parser({name!r}, help="from a plugin")
    p.set_defaults(func=lambda args: print("ran {name}") or 3)
"""


def test_plugins_add_commands_and_a_taken_name_is_left_out(make_site, cli):
    site = make_site()
    site.plugin("hello", extra=COMMAND.format(name="hello"))
    site.plugin("squatter", extra=COMMAND.format(name="plugins"))
    env = {"AGENTKIT_LOAD_PLUGINS": "hello,squatter"}
    ran = cli("hello", pythonpath=[site.path], **env)
    assert (ran.returncode, ran.stdout) == (3, "ran hello\n")
    assert "plugin 'squatter' adds command plugins, which is already taken" in ran.stderr
    listed = cli("plugins", "list", "--json", pythonpath=[site.path], **env)
    plugins = {p["name"]: p for p in json.loads(listed.stdout)["plugins"]}
    assert plugins["hello"]["commands"] == ["hello"] and plugins["squatter"]["commands"] == []
    assert any("already taken" in w for w in json.loads(listed.stdout)["warnings"])
    assert cli("plugins", "check", pythonpath=[site.path], **env).returncode == 1


def test_a_cycle_is_reported_not_a_traceback(make_site, cli):
    site = make_site()
    site.plugin("a", before=("b",)).plugin("b", before=("a",))
    result = cli("plugins", "list", pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS="a,b")
    assert result.returncode == 2
    assert "agentkit: error: plugin order constraints form a cycle: a -> b -> a" in result.stderr
    assert "Traceback" not in result.stderr


def test_unmatched_allow_list_name_is_a_warning_on_stderr(make_site, cli):
    site = make_site()
    site.plugin("a")
    result = cli("plugins", "list", pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS="a,ghost")
    assert result.returncode == 0
    assert "agentkit: warning: load names 'ghost' (AGENTKIT_LOAD_PLUGINS)" in result.stderr


def test_a_plugin_whose_command_hook_raises_is_reported_and_left_out(make_site, cli):
    site = make_site()
    site.plugin(
        "broken",
        extra="@hookimpl\ndef agentkit_register_commands(cli):\n"
        "    cli.add_parser('half')\n    raise RuntimeError('no more')\n",
    )
    result = cli("half", pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS="broken")
    assert result.returncode == 2  # argparse: no such command
    assert "invalid choice: 'half'" in result.stderr
    assert "plugin 'broken': its commands failed: RuntimeError: no more" in result.stderr
    listed = cli("plugins", "list", pythonpath=[site.path], AGENTKIT_LOAD_PLUGINS="broken")
    assert listed.returncode == 0 and " broken " in listed.stdout


def test_the_installed_plugins_list_fits_100_columns_and_wide_keeps_everything(cli):
    table = cli("plugins", "list")
    assert table.returncode == 0, table.stderr
    assert max(map(len, table.stdout.splitlines())) <= WIDTH, table.stdout
    assert "hook:before_tool_call" in table.stdout  # the web guardrail's hooks, folded in
    wide = cli("plugins", "list", "--wide")
    header = wide.stdout.splitlines()[0].split()
    assert header == ["#", "NAME", "DISTRIBUTION", "VERSION", "PROVIDES", "HOOKS", "STATUS"]
    assert "env_prefix='AGENTKIT_WEB_'" in wide.stdout  # a registration's metadata


words = st.from_regex(r"[a-z][a-z0-9_-]{0,29}", fullmatch=True)


@st.composite
def plugin_infos(draw):
    infos = []
    for position, name in enumerate(draw(st.lists(words, min_size=1, max_size=6, unique=True))):
        seams = draw(st.lists(st.tuples(words, words), max_size=8))
        registrations = [
            Registration(seam, reg, None, name, meta={"rank": 1, "settings": "x" * 60})
            for seam, reg in seams
        ]
        infos.append(
            PluginInfo(
                name,
                distribution=f"agentkit-{name}",
                version=draw(st.sampled_from(["0.1.0", "12.0.0rc3", None])),
                status=draw(st.sampled_from(["loaded", "failed", "incompatible", "disabled"])),
                position=position,
                registrations=registrations,
                hooks=draw(
                    st.lists(st.sampled_from(["agentkit_before_turn", "agentkit_transform"]))
                ),
                commands=draw(st.lists(words, max_size=4)),
            )
        )
    return infos


def test_a_registration_wider_than_its_column_moves_under_its_row_whole():
    name, seam = "x4x7h05bjc0ob2kjh35fr" * 2, "s0c3m6q0orh0rdnlpkelrnjfth"
    long = Registration(seam, "hanyqq7yn7y_u968xefmdh0su0", None, name)
    info = PluginInfo(name, version="0.1.0", status="loaded", position=0, registrations=[long])
    row, under = list_table([info]).splitlines()[1:]
    assert row.split() == ["0", name, "0.1.0", "loaded"]
    assert under == f"    {seam}:hanyqq7yn7y_u968xefmdh0su0"


@settings(max_examples=80, deadline=None)
@given(infos=plugin_infos())
def test_any_plugin_list_fits_the_width_and_loses_no_registration(infos):
    table = list_table(infos)
    assert max(map(len, table.splitlines())) <= WIDTH, table
    for info in infos:
        for reg in info.registrations:
            assert f"{reg.seam}:{reg.name}" in table.split()
        for command in info.commands:
            assert f"command:{command}" in table.split()
