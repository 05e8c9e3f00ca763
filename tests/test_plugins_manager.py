"""The plugin manager over real .dist-info distributions on a temporary path entry."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import PluginConfig
from agentkit_core import PluginLoadError
from agentkit_core import PluginManager
from agentkit_core import UnknownNameError
from agentkit_core.plugin import PluginConflictError
from agentkit_core.plugin import PluginOrderError


def manager(site, **kwargs) -> PluginManager:
    kwargs.setdefault("config", PluginConfig())
    return PluginManager(path=[str(site.path)], **kwargs).load()


def order(pm: PluginManager) -> list[str]:
    return [i.name for i in pm.plugins() if i.status == "loaded"]


def calls(pm: PluginManager) -> list[str]:
    return [r[0] for r in pm.hook.agentkit_before_turn(ctx=None, info=None)]


def by_name(pm: PluginManager) -> dict:
    return {i.name: i for i in pm.plugins()}


def test_discovers_entry_points_with_their_distribution_metadata(make_site):
    site = make_site()
    site.plugin("alpha", registers={"compactors": ["keep-last"]}, version="2.3")
    site.plugin("beta", registers={"guardrails": ["strict"]}, before_turn=False)
    pm = manager(site)
    alpha, beta = pm.plugins()
    assert (alpha.name, alpha.distribution, alpha.version) == (
        "alpha",
        "agentkit-test-alpha",
        "2.3",
    )
    assert alpha.source == "entry_point" and alpha.requires_core == ">=0.1,<1"
    assert alpha.provides == ["compactors:keep-last"]
    assert alpha.hooks == ["agentkit_before_turn"] and beta.hooks == []
    reg = pm.lookup("compactors", "keep-last")
    assert (reg.value, reg.plugin, reg.distribution) == ("alpha", "alpha", "agentkit-test-alpha")
    with pytest.raises(UnknownNameError, match=r"no compactor named 'nope'.*installed: keep-last"):
        pm.lookup("compactors", "nope")


def test_priority_then_name_and_pluggy_calls_in_that_order(make_site):
    site = make_site()
    site.plugin("zeta", priority=10).plugin("alpha").plugin("mid", priority=5).plugin("beta")
    pm = manager(site)
    assert order(pm) == ["zeta", "mid", "alpha", "beta"]
    assert calls(pm) == order(pm)
    assert [n for n, _ in pm.hook_impls("agentkit_before_turn")] == order(pm)
    assert [i.position for i in pm.plugins()] == [0, 1, 2, 3]


def test_before_and_after_beat_priority(make_site):
    site = make_site()
    site.plugin("high", priority=100, after=("low",))
    site.plugin("low", priority=-5)
    site.plugin("first", before=("low", "not-installed"))
    pm = manager(site)
    assert order(pm) == ["first", "low", "high"]
    assert calls(pm) == order(pm)


def test_explicit_order_overrides_priorities_and_mutual_constraints(make_site):
    site = make_site()
    site.plugin("a", priority=9).plugin("b", before=("c",)).plugin("c").plugin("d", priority=50)
    pm = manager(site, config=PluginConfig(order=("c", "b")))
    assert order(pm) == ["c", "b", "d", "a"]
    assert calls(pm) == order(pm)


def test_a_cycle_is_an_error_naming_it(make_site):
    site = make_site()
    site.plugin("a", before=("b",)).plugin("b", before=("c",)).plugin("c", before=("a",))
    site.plugin("d", after=("a",))
    with pytest.raises(PluginOrderError, match=r"cycle: a -> b -> c -> a; remove one"):
        manager(site)


def test_empty_allow_list_loads_nothing(make_site, monkeypatch):
    site = make_site()
    site.plugin("a").plugin("b")
    monkeypatch.setenv("AGENTKIT_LOAD_PLUGINS", "")
    pm = PluginManager(path=[str(site.path)]).load()
    assert [(i.name, i.status) for i in pm.plugins()] == [("a", "disabled"), ("b", "disabled")]
    assert "AGENTKIT_LOAD_PLUGINS" in (pm.plugins()[0].error or "")
    assert pm.hook_impls("agentkit_before_turn") == []


def test_allow_and_deny_lists_by_entry_point_or_distribution_name(make_site, monkeypatch):
    site = make_site()
    site.plugin("a").plugin("b").plugin("c")
    monkeypatch.setenv("AGENTKIT_LOAD_PLUGINS", "a, agentkit_test_B")
    assert order(PluginManager(path=[str(site.path)])) == ["a", "b"]
    monkeypatch.delenv("AGENTKIT_LOAD_PLUGINS")
    monkeypatch.setenv("AGENTKIT_DISABLE_PLUGINS", "agentkit-test-a,c")
    pm = PluginManager(path=[str(site.path)])
    assert order(pm) == ["b"]
    assert by_name(pm)["c"].error == "in the deny-list (AGENTKIT_DISABLE_PLUGINS)"


def test_a_name_matching_nothing_warns(make_site, monkeypatch):
    site = make_site()
    site.plugin("a")
    monkeypatch.setenv("AGENTKIT_DISABLE_PLUGINS", "a,typo-plugin")
    with pytest.warns(
        UserWarning, match=r"disable names 'typo-plugin' \(AGENTKIT_DISABLE_PLUGINS\)"
    ):
        pm = PluginManager(path=[str(site.path)]).load()
    assert pm.warnings == [
        "disable names 'typo-plugin' (AGENTKIT_DISABLE_PLUGINS), which matches no plugin"
    ]


def test_lists_order_and_pick_from_pyproject(make_site, tmp_path):
    site = make_site()
    site.plugin("a", registers={"compactors": ["trunc"]}).plugin("b").plugin("c")
    site.plugin("d", registers={"compactors": ["trunc"]})
    (tmp_path / "pyproject.toml").write_text(
        "[tool.agentkit]\n"
        'disable = ["b"]\n'
        'order = ["d", "c"]\n'
        'pick = {"compactors.trunc" = "agentkit-test-a"}\n',
        encoding="utf-8",
    )
    pm = PluginManager(path=[str(site.path)]).load()
    assert order(pm) == ["d", "c", "a"]
    assert pm.lookup("compactors", "trunc").plugin == "a"
    assert by_name(pm)["d"].provides == []
    assert "[tool.agentkit] in" in (by_name(pm)["b"].error or "")


def test_agentkit_toml_allow_list_and_env_replaces_it(make_site, tmp_path, monkeypatch):
    site = make_site()
    site.plugin("a").plugin("b")
    (tmp_path / "agentkit.toml").write_text('load = ["b"]\n', encoding="utf-8")
    assert order(PluginManager(path=[str(site.path)])) == ["b"]
    monkeypatch.setenv("AGENTKIT_LOAD_PLUGINS", "a")
    assert order(PluginManager(path=[str(site.path)])) == ["a"]


def test_bad_config_values_name_the_file_and_key(make_site, tmp_path):
    site = make_site()
    (tmp_path / "agentkit.toml").write_text('load = "a"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"load in .*agentkit.toml must be a list of plugin names"):
        PluginManager(path=[str(site.path)]).load()
    (tmp_path / "agentkit.toml").write_text('pick = {"nosuchseam.x" = "a"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"names unknown seam 'nosuchseam'"):
        PluginManager(path=[str(site.path)]).load()


def test_broken_plugins_are_listed_with_their_error_while_others_load(make_site):
    site = make_site()
    site.plugin("good", registers={"compactors": ["ok"]})
    site.add(
        "agentkit-test-boom", {"boom": "akt_boom"}, {"akt_boom": "raise RuntimeError('kaput')\n"}
    )
    site.add(
        "agentkit-test-halfway",
        {"halfway": "akt_halfway"},
        {
            "akt_halfway": site.source(
                "halfway",
                extra="""
                @hookimpl
                def agentkit_register_guardrails(register):
                    register("first", 1)
                    raise ValueError("second one broke")
                """,
            )
        },
    )
    site.plugin("future", requires=("agentkit-core>=5,<6",))
    site.add(
        "agentkit-test-badsig",
        {"badsig": "akt_badsig"},
        {
            "akt_badsig": site.source(
                "badsig", extra="@hookimpl\ndef agentkit_transform(nope): ...\n"
            )
        },
    )
    pm = manager(site)
    info = by_name(pm)
    assert order(pm) == ["good"]
    assert info["boom"].status == "failed"
    assert info["boom"].error == "import of 'akt_boom' failed: RuntimeError: kaput"
    assert info["halfway"].status == "failed"
    assert "ValueError: second one broke" in (info["halfway"].error or "")
    assert info["future"].status == "incompatible"
    assert "requires agentkit-core>=5,<6, but agentkit-core 0.1.0 is installed" in (
        info["future"].error or ""
    )
    assert "akt_future" not in sys.modules  # the range is checked before importing
    assert info["badsig"].status == "failed" and "nope" in (info["badsig"].error or "")
    # nothing of a failed plugin is left behind
    assert calls(pm) == ["good"]
    assert pm.registrations("guardrails") == []
    for name in ("halfway", "badsig"):
        assert pm.pm.get_plugin(name) is None


def test_strict_mode_raises_at_load(make_site, monkeypatch):
    site = make_site()
    site.plugin("good")
    site.add("agentkit-test-boom", {"boom": "akt_boom"}, {"akt_boom": "import nonexistent_mod\n"})
    with pytest.raises(PluginLoadError, match=r"boom failed: import of 'akt_boom' failed"):
        manager(site, strict=True)
    monkeypatch.setenv("AGENTKIT_STRICT_PLUGINS", "1")
    with pytest.raises(PluginLoadError, match=r"strict mode"):
        PluginManager(path=[str(site.path)]).load()
    assert order(manager(site, strict=False)) == ["good"]


def test_two_plugins_claiming_one_name_conflict_naming_both(make_site):
    site = make_site()
    site.plugin("one", registers={"compactors": ["trunc", "other"]})
    site.plugin("two", registers={"compactors": ["trunc"]})
    site.plugin("three")
    pm = manager(site)
    info = by_name(pm)
    assert order(pm) == ["three"]
    assert info["one"].status == info["two"].status == "conflict"
    assert (info["one"].error or "").startswith(
        "compactors name 'trunc' is registered by one (agentkit-test-one) and "
        "two (agentkit-test-two); disable one, or choose with "
        'pick = {"compactors.trunc" = "one"}'
    )
    assert (info["one"].error or "").endswith(
        "in agentkit.toml (or [tool.agentkit] in pyproject.toml)"
    )
    assert pm.registrations("compactors") == []
    with pytest.raises(PluginConflictError, match=r"agentkit-test-one\) and two"):
        manager(site, strict=True)
    picked = manager(site, config=PluginConfig(pick={"compactors.trunc": "two"}))
    assert [(r.name, r.plugin) for r in picked.registrations("compactors")] == [
        ("other", "one"),
        ("trunc", "two"),
    ]


def test_the_conflict_hint_names_the_file_actually_read(make_site, tmp_path):
    site = make_site()
    site.plugin("one", registers={"compactors": ["trunc"]})
    site.plugin("two", registers={"compactors": ["trunc"]})
    team = tmp_path / "team.toml"
    team.write_text("strict = false\n")
    info = by_name(manager(site, config=team))
    assert (info["one"].error or "").endswith(f'pick = {{"compactors.trunc" = "one"}} in {team}')


def test_same_entry_point_name_in_two_distributions_is_shadowed(make_site):
    first, second = make_site("p1"), make_site("p2")
    second.plugin("dup", dist="agentkit-zz-dup", module="akt_dup_zz")
    first.plugin("dup", dist="agentkit-aa-dup", module="akt_dup_aa")
    for path in ([first.path, second.path], [second.path, first.path]):
        pm = PluginManager(path=[str(p) for p in path], config=PluginConfig()).load()
        kept, shadowed = pm.plugins()
        assert (kept.distribution, kept.status) == ("agentkit-aa-dup", "loaded")
        assert (shadowed.distribution, shadowed.status) == ("agentkit-zz-dup", "shadowed")
        assert (
            shadowed.error
            == "shadowed by agentkit-aa-dup (same plugin name 'dup'); that one is kept"
        )


def test_plugins_registered_in_code_and_from_a_plugins_dir(make_site, tmp_path):
    site = make_site()
    site.plugin("packaged", priority=1)
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "looseone.py").write_text(site.source("looseone", priority=2), encoding="utf-8")

    class InCode:
        AGENTKIT_NAME = "incode"

        from agentkit_core import hookimpl

        @hookimpl
        def agentkit_before_turn(self, ctx, info):
            return ["incode"]

    pm = manager(site, plugins=[InCode()], config=PluginConfig(plugins_dir=loose))
    assert order(pm) == ["looseone", "packaged", "incode"]
    assert calls(pm) == order(pm)
    assert [i.source for i in pm.plugins()] == ["plugins_dir", "entry_point", "code"]

    class Late:
        AGENTKIT_PRIORITY = 10

        from agentkit_core import hookimpl

        @hookimpl
        def agentkit_before_turn(self, ctx, info):
            return ["late"]

    pm.register(Late(), name="late")
    assert calls(pm) == ["late", "looseone", "packaged", "incode"]


def test_fingerprint_follows_the_resolved_order(make_site):
    site = make_site()
    site.plugin("a").plugin("b")
    plain = manager(site).fingerprint()
    assert plain == manager(site).fingerprint() and len(plain) == 12
    assert manager(site, config=PluginConfig(order=("b",))).fingerprint() != plain
    assert manager(site, config=PluginConfig(disable=("a",))).fingerprint() != plain


def test_get_plugin_by_either_name(make_site):
    site = make_site()
    site.plugin("a")
    pm = manager(site)
    assert pm.get_plugin("agentkit_test_a") is pm.get_plugin("a")
    with pytest.raises(UnknownNameError, match=r"no plugin named 'x'; known plugins: a"):
        pm.get_plugin("x")


def test_plugins_dir_must_exist(tmp_path: Path):
    missing = tmp_path / "nope"
    with pytest.raises(ValueError, match=r"plugins_dir '.*nope' is not a directory"):
        PluginManager(entry_points=False, config=PluginConfig(plugins_dir=missing)).load()


def test_strict_from_config_file(make_site, tmp_path):
    site = make_site()
    site.add("agentkit-test-boom", {"boom": "akt_boom"}, {"akt_boom": "raise OSError('disk')\n"})
    (tmp_path / "agentkit.toml").write_text("strict = true\n", encoding="utf-8")
    with pytest.raises(PluginLoadError, match=r"boom failed: import of 'akt_boom' failed: OSError"):
        PluginManager(path=[str(site.path)]).load()


def test_hook_impls_of_an_unknown_hook_lists_the_hooks():
    pm = PluginManager(entry_points=False)
    with pytest.raises(UnknownNameError, match=r"no hook named 'agentkit_nope'; the hooks are "):
        pm.hook_impls("agentkit_nope")


def test_an_implementation_of_an_unknown_hook_leaves_the_plugin_out(make_site):
    site = make_site()
    site.add(
        "agentkit-test-typo",
        {"typo": "akt_typo"},
        {"akt_typo": site.source("typo", extra="@hookimpl\ndef agentkit_befor_turn(ctx): ...\n")},
    )
    pm = manager(site)
    (info,) = pm.plugins()
    assert info.status == "failed"
    assert "implements unknown hook agentkit_befor_turn" in (info.error or "")
    assert pm.hook_impls("agentkit_before_turn") == []


def test_a_module_name_registered_in_code_that_fails_to_import_is_recorded():
    pm = PluginManager(entry_points=False, plugins=["json", "no_such_module_anywhere"])
    assert [(i.name, i.status) for i in pm.plugins()] == [
        ("json", "loaded"),
        ("no_such_module_anywhere", "failed"),
    ]
    assert "ModuleNotFoundError" in (pm.plugins()[1].error or "")


def test_an_async_registration_hook_is_refused_clearly(make_site):
    site = make_site()
    site.add(
        "agentkit-test-asyncreg",
        {"asyncreg": "akt_asyncreg"},
        {
            "akt_asyncreg": site.source(
                "asyncreg",
                extra="@hookimpl\nasync def agentkit_register_models(register):\n"
                "    register('m', object)\n",
            )
        },
    )
    (info,) = manager(site).plugins()
    assert info.status == "failed"
    assert "agentkit_register_models must be a plain function, not async" in (info.error or "")


def test_allow_list_leaves_plugins_registered_in_code_alone(make_site, monkeypatch):
    site = make_site()
    site.plugin("packaged")
    monkeypatch.setenv("AGENTKIT_LOAD_PLUGINS", "")

    class Mine:
        AGENTKIT_NAME = "mine"

    pm = PluginManager(path=[str(site.path)], plugins=[Mine()]).load()
    assert [(i.name, i.status) for i in pm.plugins()] == [
        ("mine", "loaded"),
        ("packaged", "disabled"),
    ]


def test_a_plain_core_range_is_judged_as_packaging_judges_it() -> None:
    """Plain clauses are compared without packaging; anything else is left to it (None)."""
    from packaging.specifiers import SpecifierSet

    from agentkit_core._discovery import _plain_contains

    specs = [">=0.1,<1", "==0.1", "!=1.0", " > 0.1 ", "<=1", ">=0.1, <1", ">=1.0.0", "<0.1.1"]
    for spec in specs:
        for version in ["0", "0.1", "0.1.0", "0.2", "1", "1.0", "1.0.1", "2.5.3", "0.0.9"]:
            expected = SpecifierSet(spec).contains(version, prereleases=True)
            assert _plain_contains(spec, version) is expected, (spec, version)
    assert _plain_contains("~=0.1", "0.1") is None
    assert _plain_contains(">=0.1", "0.2rc1") is None
    assert _plain_contains("", "1") is None


def _seen(path: list[str] | None) -> list[tuple[object, ...]]:
    from agentkit_core._discovery import discover_entry_points

    found = discover_entry_points(path)
    return sorted((i.name, i.distribution, i.version, i.module, i.requires_core) for i in found)


def test_reading_the_folders_finds_what_importlib_metadata_finds(make_site, monkeypatch):
    """Discovery reads .dist-info folders itself; importlib_metadata answers the same."""
    from agentkit_core import _discovery

    site = make_site()
    site.plugin("alpha", version="2.3")
    site.add("agentkit-test-pair", {"one": "akt_pair:ONE [extra]", "two": "akt_pair"}, {})
    (site.path / "akt_pair.py").write_text("ONE = 'one'\n", encoding="utf-8")
    assert _discovery._metadata_folders(sys.path) is not None  # the folders are read here
    fast = {None: _seen(None), "site": _seen([str(site.path)])}
    loaded = {i.name: i.loader() for i in _discovery.discover_entry_points([str(site.path)])}
    assert loaded["one"] == "one" and loaded["two"].__name__ == "akt_pair"
    monkeypatch.setattr(_discovery, "_metadata_folders", lambda entries: None)
    assert fast == {None: _seen(None), "site": _seen([str(site.path)])}


def test_a_zip_on_the_path_is_read_by_importlib_metadata(make_site, tmp_path):
    import zipfile

    from agentkit_core import _discovery

    site = make_site()
    site.plugin("alpha")
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for file in site.path.rglob("*"):
            if file.is_file():
                zipped.write(file, file.relative_to(site.path))
    assert _discovery._metadata_folders([str(archive)]) is None
    assert [row[0] for row in _seen([str(archive)])] == ["alpha"]


def test_reading_a_modules_markers_answers_as_pluggy_does():
    """The manager reads a module's own values itself; pluggy's static lookup agrees on each."""
    import types

    import pluggy

    from agentkit_core import hookimpl
    from agentkit_core import hookspecs
    from agentkit_core._discovery import discover_entry_points
    from agentkit_core._plugins import _Pluggy

    odd = types.ModuleType("odd")

    class Marked:
        agentkit_impl = {"tryfirst": True}  # a class carrying the marker is not a hook

    def not_dict() -> None: ...

    not_dict.agentkit_impl = "yes"  # type: ignore[attr-defined]
    vars(odd).update(
        Marked=Marked,
        not_dict=not_dict,
        agentkit_before_turn=hookimpl(lambda ctx, info: None),
        wrapped=staticmethod(hookimpl(lambda: None)),
        number=3,
    )
    modules = [hookspecs, odd, *(i.loader() for i in discover_entry_points(None))]
    ours, theirs = _Pluggy(hookspecs.PROJECT), pluggy.PluginManager(hookspecs.PROJECT)
    for module in modules:
        for name in dir(module):
            assert ours.parse_hookimpl_opts(module, name) == theirs.parse_hookimpl_opts(
                module, name
            ), (module, name)
            assert ours.parse_hookspec_opts(module, name) == theirs.parse_hookspec_opts(
                module, name
            ), (module, name)


@settings(max_examples=200, deadline=None)
@given(
    data=st.one_of(
        st.text(alphabet=st.sampled_from("ab=[]\r\n\t é€\u2028"), max_size=40).map(
            lambda text: text.encode("utf-8")
        ),
        st.binary(max_size=20),  # not always UTF-8: unreadable, as a text file is
    )
)
def test_a_metadata_file_reads_as_a_text_file_reads(data: bytes) -> None:
    """Discovery reads the raw bytes; the text (newlines included) is what ``open`` gives."""
    import tempfile

    from agentkit_core._discovery import _Folder

    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "METADATA").write_bytes(data)
        try:
            with open(Path(folder, "METADATA"), encoding="utf-8") as f:
                expected: str | None = f.read()
        except UnicodeDecodeError:
            expected = None
        assert _Folder(folder).read_text("METADATA") == expected
        assert _Folder(folder).read_text("missing") is None
        assert _Folder(folder).read_text("") is None  # the folder itself: no .egg-info file
