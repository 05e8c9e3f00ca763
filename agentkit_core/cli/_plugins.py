"""``agentkit plugins``: list, hooks, show and check the installed plugins.

The ``--json`` outputs are a stable interface (field names documented in ``docs/cli.md``); the
tables are for people and may change.
"""

from __future__ import annotations

import argparse
import functools
import json
import textwrap
from typing import Any

from .. import hookspecs
from .._discovery import PluginInfo
from .._discovery import core_version
from .._plugins import BAD_STATUSES
from .._plugins import COMMANDS_HOOK
from .._plugins import SEAMS
from .._plugins import PluginManager
from ._scaffold import add_command as add_new_command

#: Version of the JSON layout; bumped only when a field changes meaning or goes away.
JSON_SCHEMA = 1

#: Columns the ``plugins list`` table fits in (``--wide`` lets it run as wide as it needs).
WIDTH = 100


def add_commands(subparsers: argparse._SubParsersAction[Any]) -> None:
    plugins = subparsers.add_parser("plugins", help="inspect the installed plugins")
    plugins.set_defaults(func=lambda args: _help(plugins))
    sub = plugins.add_subparsers(dest="plugins_command", metavar="SUBCOMMAND")
    for name, func, text in (
        ("list", _list, "every plugin in its resolved order, with its status"),
        ("hooks", _hooks, "every hook and its implementations in call order"),
        ("show", _show, "one plugin in full, with its error if it has one"),
        ("check", _check, "exit 1 if any plugin failed, is incompatible or conflicts"),
    ):
        command = sub.add_parser(name, help=text, description=text)
        if name == "show":
            command.add_argument("name", help="entry-point or distribution name")
        if name == "list":
            command.add_argument(
                "--wide",
                action="store_true",
                help=f"every column (distribution, provides with its metadata, hooks) on one "
                f"line a plugin, however wide; without it the table fits {WIDTH} columns",
            )
        command.add_argument("--json", action="store_true", help="machine-readable output")
        command.set_defaults(func=func)
    add_new_command(sub)


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 0


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, type):  # a declared settings TypedDict, say
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)


def plugin_record(info: PluginInfo) -> dict[str, Any]:
    """One plugin as the stable JSON record of ``plugins list --json``."""
    return {
        "name": info.name,
        "distribution": info.distribution,
        "version": info.version,
        "source": info.source,
        "status": info.status,
        "position": info.position,
        "priority": info.priority,
        "before": list(info.before),
        "after": list(info.after),
        "requires_core": info.requires_core,
        "provides": [
            {
                "seam": r.seam,
                "name": r.name,
                "meta": {k: _json_value(v) for k, v in sorted(r.meta.items())},
            }
            for r in info.registrations
        ],
        "hooks": list(info.hooks),
        "commands": list(info.commands),
        "module": info.module,
        "error": info.error,
    }


def _dump(data: Any) -> None:
    print(json.dumps(data, indent=2, sort_keys=False))


def _provides_text(info: PluginInfo, meta: bool = True) -> str:
    parts = []
    for r in info.registrations:
        given = ",".join(f"{k}={_json_value(v)!r}" for k, v in sorted(r.meta.items()))
        parts.append(f"{r.seam}:{r.name}" + (f"({given})" if given and meta else ""))
    parts.extend(f"command:{c}" for c in info.commands)
    return " ".join(parts) or "-"


def _hooks_text(info: PluginInfo) -> str:
    return " ".join(h.removeprefix("agentkit_") for h in info.hooks if h != COMMANDS_HOOK) or "-"


#: Where a cell too wide for its column goes on: a short indent under its row.
_HANGING = "    "
_wrap = functools.partial(textwrap.wrap, break_long_words=False, break_on_hyphens=False)


def _table(rows: list[list[str]], width: int | None = None) -> str:
    """Rows in aligned columns; with ``width``, the last column wraps to fit it.

    Wrapped lines start under the last column. A word wider than the room left there (very
    long names before it) moves that cell to lines of its own under a short indent, so words
    are never broken; only a word wider than ``width`` itself runs past it.
    """
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        head = "  ".join(c.ljust(w) for c, w in zip(row[:-1], widths, strict=False)) + "  "
        if width is None:
            lines.append((head + row[-1]).rstrip())
            continue
        if max(map(len, row[-1].split()), default=0) > width - len(head):
            lines.append(head.rstrip())
            lines.extend(_HANGING + line for line in _wrap(row[-1], width - len(_HANGING)))
            continue
        tail = _wrap(row[-1], width - len(head)) or [""]
        lines.append((head + tail[0]).rstrip())
        lines.extend(" " * len(head) + more for more in tail[1:])
    return "\n".join(lines)


def list_table(infos: list[PluginInfo], *, wide: bool = False) -> str:
    """The table of ``plugins list``: fits :data:`WIDTH` columns, or every column with ``wide``.

    The narrow table leaves out the distribution and the registrations' metadata (``plugins
    show NAME`` has them) and folds the hooks into PROVIDES as ``hook:NAME``, wrapped.
    """
    if wide:
        rows = [["#", "NAME", "DISTRIBUTION", "VERSION", "PROVIDES", "HOOKS", "STATUS"]]
        rows += [
            [
                _position(info),
                info.name,
                info.distribution or f"({info.source})",
                info.version or "-",
                _provides_text(info),
                _hooks_text(info),
                info.status,
            ]
            for info in infos
        ]
        return _table(rows)
    rows = [["#", "NAME", "VERSION", "STATUS", "PROVIDES"]]
    for info in infos:
        hooks = [f"hook:{h}" for h in _hooks_text(info).split() if h != "-"]
        provides = " ".join(p for p in (_provides_text(info, meta=False), *hooks) if p != "-")
        rows.append([_position(info), info.name, info.version or "-", info.status, provides or "-"])
    return _table(rows, WIDTH)


def _position(info: PluginInfo) -> str:
    return "-" if info.position is None else str(info.position)


def _list(args: argparse.Namespace) -> int:
    pm: PluginManager = args.plugin_manager
    infos = pm.plugins()
    if args.json:
        _dump(
            {
                "schema": JSON_SCHEMA,
                "core_version": core_version(),
                "fingerprint": pm.fingerprint(),
                "plugins": [plugin_record(i) for i in infos],
                "warnings": list(pm.warnings),
            }
        )
        return 0
    print(list_table(infos, wide=args.wide) if infos else "no plugins")
    for info in infos:
        if info.error and info.status not in ("loaded", "disabled"):
            text = f"{info.name}: {info.error}"
            print(
                textwrap.fill(
                    text,
                    WIDTH,
                    initial_indent="  ",
                    subsequent_indent="    ",
                    break_on_hyphens=False,
                )
            )
    loaded = sum(i.status == "loaded" for i in infos)
    print(f"{loaded} loaded of {len(infos)}; core {core_version()}; order {pm.fingerprint()}")
    return 0


def _hookspec_names() -> list[str]:
    return [n for n in vars(hookspecs) if n.startswith("agentkit_")]


def _kind(hook: str) -> str:
    if hook in SEAMS.values():
        return "registration"
    return "cli" if hook == COMMANDS_HOOK else "contested"


def _hooks(args: argparse.Namespace) -> int:
    pm: PluginManager = args.plugin_manager
    if args.json:
        data = [
            {
                "hook": hook,
                "kind": _kind(hook),
                "implementations": [
                    {"plugin": plugin, "function": f"{fn.__module__}.{fn.__qualname__}"}
                    for plugin, fn in pm.hook_impls(hook)
                ],
            }
            for hook in _hookspec_names()
        ]
        _dump({"schema": JSON_SCHEMA, "fingerprint": pm.fingerprint(), "hooks": data})
        return 0
    for hook in _hookspec_names():
        impls = [plugin for plugin, _ in pm.hook_impls(hook)]
        print(f"{hook} ({_kind(hook)}): {' -> '.join(impls) or '-'}")
    return 0


def _show(args: argparse.Namespace) -> int:
    pm: PluginManager = args.plugin_manager
    info = pm.get_plugin(args.name)
    record = plugin_record(info)
    if args.json:
        _dump(record)
        return 0
    for key, value in record.items():
        if key == "provides":
            value = _provides_text(info)
        elif isinstance(value, list):
            value = ", ".join(map(str, value)) or "-"
        print(f"{key + ':':<14} {'-' if value is None else value}")
    return 0


def _check(args: argparse.Namespace) -> int:
    pm: PluginManager = args.plugin_manager
    bad = [i for i in pm.plugins() if i.status in BAD_STATUSES]
    problems = [f"{i.name} ({i.distribution or i.source}) {i.status}: {i.error}" for i in bad]
    problems += [w for w in pm.warnings if "command" in w]
    if args.json:
        _dump({"schema": JSON_SCHEMA, "ok": not problems, "problems": problems})
    elif problems:
        print("\n".join(problems))
    else:
        loaded = sum(i.status == "loaded" for i in pm.plugins())
        print(f"ok: {loaded} plugins loaded; order {pm.fingerprint()}")
    return 1 if problems else 0
