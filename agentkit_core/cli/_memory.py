"""``agentkit memory``: list, show, edit and forget the entries of a memory store.

Every subcommand takes ``--store URL`` (default: ``$AGENTKIT_MEMORY_STORE``, else the store a
kit uses by default, ``file:.agentkit/memory``) and ``--scope NAME``. An edit is based on the
version it read, so a run that saw the old text cannot write over the person's, and the
person's edit is refused (naming the version now there) if a run wrote in between. Errors are
one line on stderr and exit 2; an unreadable entry is listed as such, and the exit code is 2.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .._errors import CorruptMemoryEntry
from .._lookup import open_memory
from .._memory import DEFAULT_MAX_ENTRY_BYTES
from .._memory import DEFAULT_MEMORY_STORE
from .._memory import MEMORY_STORE_ENV
from .._memory import Memory
from .._memory import MemoryConflict
from .._memory import MemoryEntry


def add_commands(subparsers: argparse._SubParsersAction[Any]) -> None:
    memory = subparsers.add_parser("memory", help="list, show, edit and forget memory entries")
    memory.set_defaults(func=lambda args: _help(memory))
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--store",
        metavar="URL",
        default=None,
        help=f"the memory store, such as file:///srv/memory (default: ${MEMORY_STORE_ENV}, "
        f"else {DEFAULT_MEMORY_STORE})",
    )
    sub = memory.add_subparsers(dest="memory_command", metavar="SUBCOMMAND")
    for name, func, text in (
        ("list", _list, "a scope's entries, one a line (without --scope: the scopes)"),
        ("show", _show, "one entry: its version, time, session and text"),
        ("edit", _edit, "write an entry: --body, --file, or in $VISUAL / $EDITOR"),
        ("forget", _forget, "remove an entry"),
    ):
        command = sub.add_parser(name, help=text, description=text, parents=[common])
        command.add_argument(
            "--scope", metavar="NAME", required=name != "list", help="the scope (user, project...)"
        )
        if name != "list":
            command.add_argument("title", metavar="TITLE", help="the entry's title")
        if name in ("list", "show"):
            command.add_argument("--json", action="store_true", help="machine-readable output")
        if name == "edit":
            given = command.add_mutually_exclusive_group()
            given.add_argument("--body", metavar="TEXT", help="the new text")
            given.add_argument(
                "--file", metavar="PATH", help="read the new text from PATH (- for stdin)"
            )
            command.add_argument(
                "--max-entry-bytes",
                type=int,
                default=DEFAULT_MAX_ENTRY_BYTES,
                metavar="N",
                help=f"the per-entry bound (default {DEFAULT_MAX_ENTRY_BYTES})",
            )
        command.set_defaults(func=func)


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 0


def _with_memory(args: argparse.Namespace, work: Callable[[Memory], Awaitable[int]]) -> int:
    url = args.store or os.environ.get(MEMORY_STORE_ENV, "").strip() or DEFAULT_MEMORY_STORE
    bound = getattr(args, "max_entry_bytes", DEFAULT_MAX_ENTRY_BYTES)

    import asyncio  # here, not at the top: listing plugins builds this parser

    async def main() -> int:
        memory = await open_memory(url, manager=args.plugin_manager, max_entry_bytes=bound)
        async with memory:
            return await work(memory)

    return asyncio.run(main())


def record(entry: MemoryEntry) -> dict[str, Any]:
    """An entry as the stable JSON of ``list --json`` and ``show --json``."""
    return {
        "scope": entry.scope,
        "title": entry.title,
        "version": entry.version,
        "updated_at": entry.updated_at,
        "session": entry.session,
        "body": entry.body,
    }


def _list(args: argparse.Namespace) -> int:
    async def work(memory: Memory) -> int:
        if args.scope is None:
            scopes = {s: len((await memory.entries(s)).entries) for s in await memory.scopes()}
            if args.json:
                print(json.dumps(scopes, indent=2))
            for scope, count in ({} if args.json else scopes).items():
                print(f"{scope}  {count} {'entry' if count == 1 else 'entries'}")
            if not scopes and not args.json:
                _say_empty(f"no entries in {memory.store.url}", "--scope SCOPE TITLE")
            return 0
        listing = await memory.entries(args.scope)
        if args.json:
            rows = [record(e) for e in listing.entries]
            rows += [{"corrupt": c.name, "problem": str(c)} for c in listing.corrupt]
            print(json.dumps(rows, indent=2, ensure_ascii=False))
        elif not listing.entries and not listing.corrupt:
            where = f"no entries in scope {args.scope!r} of {memory.store.url}"
            _say_empty(where, f"--scope {shlex.quote(args.scope)} TITLE")
        else:
            for e in listing.entries:
                print(f"{e.title}  v{e.version}  {e.updated_at[:19]}  {e.session or '-'}")
            for c in listing.corrupt:
                print(f"!! {c.name}: unreadable")
        for c in listing.corrupt:
            print(f"agentkit: error: {c}", file=sys.stderr)
        return 2 if listing.corrupt else 0

    return _with_memory(args, work)


def _say_empty(what: str, edit: str) -> None:
    """An empty listing, said on stderr (stdout stays empty for scripts), with how to fill it."""
    print(f"agentkit: {what}; agentkit memory edit {edit} writes one", file=sys.stderr)


def _show(args: argparse.Namespace) -> int:
    async def work(memory: Memory) -> int:
        entry = await _existing(memory, args.scope, args.title)
        if args.json:
            print(json.dumps(record(entry), indent=2, ensure_ascii=False))
            return 0
        print(f"{entry.scope} / {entry.title}  version {entry.version}  {entry.updated_at}")
        if entry.session:
            print(f"written by session {entry.session}")
        print()
        print(entry.body)
        return 0

    return _with_memory(args, work)


def _edit(args: argparse.Namespace) -> int:
    async def work(memory: Memory) -> int:
        current = await memory.get(args.scope, args.title)
        base = 0 if current is None else current.version
        old = "" if current is None else current.body
        if args.body is not None:
            text = args.body
        elif args.file == "-":
            text = sys.stdin.read()
        elif args.file is not None:
            text = _read_file(args.file, args.title)
        else:
            text = _in_editor(old, args.title)
        if current is not None and text.strip() == old:
            print(f"{args.title!r} unchanged (version {base})")
            return 0
        try:
            saved = await memory.save(args.scope, args.title, text, base=base)
        except MemoryConflict as exc:
            print(text)  # the person's text is not lost: it goes to stdout
            now = "forgotten" if exc.current is None else f"at version {exc.current.version}"
            by = f" by session {exc.current.session}" if exc.current and exc.current.session else ""
            raise ConfigError(
                f"{args.title!r} was not saved: your edit was based on version {base}, but the "
                f"entry is {now}{by} since; your text is on stdout: `agentkit memory show "
                f"--scope {args.scope} {shlex.quote(args.title)}` shows the entry, then edit again",
                value=args.title,
                source="edit",
            ) from exc
        print(f"saved {saved.title!r} in scope {saved.scope!r} (version {saved.version})")
        return 0

    return _with_memory(args, work)


def _forget(args: argparse.Namespace) -> int:
    async def work(memory: Memory) -> int:
        try:
            current = await memory.get(args.scope, args.title)
        except CorruptMemoryEntry:  # unreadable: remove whatever it holds
            await memory.forget(args.scope, args.title, base=None)
        else:
            if current is None:
                raise ConfigError(
                    f"no entry {args.title!r} in scope {args.scope!r}; `agentkit memory list "
                    f"--scope {args.scope}` lists them",
                    value=args.title,
                    source="TITLE",
                )
            await memory.forget(args.scope, args.title, base=current.version)
        print(f"forgot {args.title!r} in scope {args.scope!r}")
        return 0

    return _with_memory(args, work)


async def _existing(memory: Memory, scope: str, title: str) -> MemoryEntry:
    entry = await memory.get(scope, title)
    if entry is None:
        raise ConfigError(
            f"no entry {title!r} in scope {scope!r}; `agentkit memory list --scope {scope}` "
            "lists them",
            value=title,
            source="TITLE",
        )
    return entry


def _read_file(path: str, title: str) -> str:
    """The text of ``--file PATH``; a file that cannot be read is a one-line error naming it."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(
            f"cannot read --file {path!r}: {why}; {title!r} was not saved (pass a readable "
            "UTF-8 file, - for stdin, or the text with --body)",
            value=path,
            source="--file",
        ) from exc


def _in_editor(text: str, title: str) -> str:
    """The text after a person edited it in ``$VISUAL`` or ``$EDITOR``."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        raise ConfigError(
            "no editor: set VISUAL or EDITOR, or pass the text with --body or --file",
            source="EDITOR",
        )
    import subprocess  # only `memory edit` runs an editor: every other command skips both
    import tempfile

    with tempfile.TemporaryDirectory(prefix="agentkit-memory-") as tmp:
        path = Path(tmp) / "entry.md"
        path.write_text(text + "\n" if text else "", encoding="utf-8")
        done = subprocess.run([*shlex.split(editor), str(path)], check=False)
        if done.returncode != 0:
            raise ConfigError(
                f"the editor {editor!r} exited with {done.returncode}; {title!r} was not saved",
                value=done.returncode,
                source="EDITOR",
            )
        return path.read_text(encoding="utf-8")
