"""The check every conformance suite runs on the plugin that made the object it tests.

A registration that declares ``settings=`` promises that its factory takes those keys: the
lookup checks options against the declaration before the call, so a key the factory does not
take would pass the check and fail inside the factory as a ``TypeError``.
"""

from __future__ import annotations

import importlib
import typing

from .._plugins import PluginManager
from .._tables import settings_schema
from .._tables import settings_type
from .._tables import taken_options


def check_declared_options(made: object) -> None:
    """Each ``settings=`` of the plugin that made ``made``: a TypedDict its factory takes.

    Each key is a parameter of the factory, or the factory takes ``**options``. The plugin is
    the top-level package of ``made``'s class, registered alone on a fresh manager; an object
    of no plugin (a test double from core) has nothing to check.
    """
    package = type(made).__module__.partition(".")[0]
    module = importlib.import_module(package)
    if package == "agentkit_core" or not any(
        n.startswith("agentkit_register_") for n in vars(module)
    ):
        return
    manager = PluginManager(entry_points=False, plugins=[module])
    for info in manager.plugins():
        for reg in info.registrations:
            settings = reg.meta.get("settings")
            if settings is None:
                continue
            what = f"{reg.seam} {reg.name!r} of {info.name!r}"
            assert typing.is_typeddict(settings_type(settings)), (
                f"{what}: settings= is {settings!r}, not a TypedDict"
            )
            taken = taken_options(reg.value)
            untaken = [] if taken is None else sorted(set(settings_schema(settings)) - set(taken))
            assert not untaken, (
                f"{what} declares options its factory {reg.value!r} does not take: "
                f"{', '.join(untaken)} (it takes {', '.join(taken or ()) or 'none'})"
            )
