"""``agentkit sessions``: list, show, fork and export the sessions of a store.

Built in rather than added by a store plugin: it works on whichever stores are installed, and
two store plugins could not both add it. Every subcommand takes ``--store URL`` (default: the
``AGENTKIT_SESSION_STORE`` environment variable). Errors are one line on stderr and exit 2; a
corrupt item is shown as such, the rest of the output is written, and the exit code is 2.
The JSON forms (``list --json``, ``show --json``, ``export``) are a stable interface; the text
forms are for people.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from datetime import UTC
from typing import Any

from .._errors import ConfigError
from .._errors import CorruptSessionItem
from .._lookup import open_sessions
from .._messages import Message
from .._sessions import SessionHeader
from .._sessions import SessionInfo
from .._sessions import SessionItem
from .._sessions import Sessions

#: The environment variable naming the store when ``--store`` is not given.
STORE_ENV = "AGENTKIT_SESSION_STORE"
#: How much of an item's body a line of ``show`` shows.
WIDTH = 160


def add_commands(subparsers: argparse._SubParsersAction[Any]) -> None:
    sessions = subparsers.add_parser("sessions", help="list, show, fork and export sessions")
    sessions.set_defaults(func=lambda args: _help(sessions))
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument(
        "--store",
        metavar="URL",
        default=None,
        help=f"the session store, such as sqlite:///sessions.db (default: ${STORE_ENV})",
    )
    sub = sessions.add_subparsers(dest="sessions_command", metavar="SUBCOMMAND")
    for name, func, text in (
        ("list", _list, "one session per line, its id first"),
        ("show", _show, "a session's path from its root to its leaf, as a transcript"),
        ("fork", _fork, "a new session whose base is an item of another; prints its id"),
        ("export", _export, "a session's path as JSON Lines, one item a line"),
    ):
        command = sub.add_parser(name, help=text, description=text, parents=[store])
        if name != "list":
            command.add_argument("session", metavar="ID", help="the session's id")
        if name == "fork":
            command.add_argument("--at", metavar="ITEM", help="the item to fork at (its leaf)")
        if name in ("list", "show"):
            command.add_argument("--json", action="store_true", help="machine-readable output")
        command.set_defaults(func=func)


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 0


def _with_sessions(args: argparse.Namespace, work: Callable[[Sessions], Awaitable[int]]) -> int:
    from ._run import refuse_blank

    refuse_blank(args, ("--store",))  # not read as left out: the environment's store
    url = args.store or os.environ.get(STORE_ENV, "").strip()
    if not url:
        raise ConfigError(
            f"no session store given: pass --store URL (such as sqlite:///sessions.db) or set "
            f"{STORE_ENV}",
            source="--store",
        )

    import asyncio  # here, not at the top: listing plugins builds this parser

    async def main() -> int:
        async with await open_sessions(url, manager=args.plugin_manager) as sessions:
            return await work(sessions)

    return asyncio.run(main())


class _Corrupt:
    """The corrupt items met while writing output: reported once, after it, as exit 2."""

    def __init__(self) -> None:
        self.errors: list[CorruptSessionItem] = []

    def body(self, item: SessionItem) -> tuple[Any, str | None]:
        try:
            return item.body, None
        except CorruptSessionItem as exc:
            self.errors.append(exc)
            return None, str(exc)

    def exit_code(self) -> int:
        if not self.errors:
            return 0
        more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        print(f"agentkit: error: {self.errors[0]}{more}", file=sys.stderr)
        return 2


def record(item: SessionItem, corrupt: _Corrupt) -> dict[str, Any]:
    """One item as the stable JSON record of ``show --json`` and ``export``.

    ``body`` is the stored JSON as it is (tagged values keep their ``__agentkit__`` tags); a
    corrupt item has ``body: null``, ``corrupt`` (what is wrong) and ``body_text`` (the raw).
    """
    out: dict[str, Any] = {
        "session": item.session_id,
        "id": item.id,
        "parent": item.parent,
        "kind": item.kind,
        "time": item.created_at,
    }
    _, problem = corrupt.body(item)
    if problem is None:
        out["body"] = json.loads(item.body_json)
    else:
        out.update(body=None, corrupt=problem, body_text=item.body_json)
    return out


def _summary(info: SessionInfo, corrupt: _Corrupt) -> dict[str, Any]:
    body, problem = corrupt.body(info.header)
    base = None
    if info.base_item is not None:
        base = {"session": info.base_session, "item": info.base_item}
    return {
        "id": info.id,
        "created_at": info.header.created_at,
        "updated_at": info.updated_at,
        "items": info.count,
        "leaf": info.leaf_id,
        "base": base,
        "header": body if problem is None else None,
    }


def _list(args: argparse.Namespace) -> int:
    async def work(sessions: Sessions) -> int:
        corrupt = _Corrupt()
        listed = [_summary(info, corrupt) for info in await sessions.sessions()]
        if args.json:
            print(json.dumps(listed, indent=2, ensure_ascii=False))
        if not listed and not args.json:  # said on stderr: stdout stays empty for scripts
            print(
                f"agentkit: no sessions in {sessions.store.url}; agentkit run TASK --session "
                f"{shlex.quote(sessions.store.url)} records one",
                file=sys.stderr,
            )
        for row in [] if args.json else listed:
            header = SessionHeader.from_body(row["header"])
            fork = "" if row["base"] is None else f"  fork of {row['base']['session']}"
            print(
                f"{row['id']}  {_when(row['created_at'])}  {_items(row['items'])}"
                f"  model={header.model or '-'}  cwd={header.cwd or '-'}{fork}"
            )
        return corrupt.exit_code()

    return _with_sessions(args, work)


def _show(args: argparse.Namespace) -> int:
    async def work(sessions: Sessions) -> int:
        corrupt = _Corrupt()
        info = await sessions.info(args.session)
        path = await sessions.path(args.session)
        if args.json:
            print(json.dumps([record(i, corrupt) for i in path], indent=2, ensure_ascii=False))
            return corrupt.exit_code()
        spent = spending(_Corrupt().body(i)[0] for i in path if i.kind == "response")
        print(
            f"session {info.id}  ({sessions.store.url})  {_items(info.count)} of its own; {spent}"
        )
        if info.base_item is not None:
            print(f"forked from session {info.base_session} at item {info.base_item}")
        kind_width = max(len(i.kind) for i in path)
        for item in path:
            body, problem = corrupt.body(item)
            text = f"!! {problem}" if problem is not None else describe(item.kind, body)
            mark = "  " if item.session_id == info.id else "| "  # | : from the base session
            print(f"{mark}{item.id}  {_when(item.created_at)}  {item.kind:<{kind_width}}  {text}")
        return corrupt.exit_code()

    return _with_sessions(args, work)


def _fork(args: argparse.Namespace) -> int:
    async def work(sessions: Sessions) -> int:
        head = await sessions.fork(args.session, at=args.at)
        print(head.session_id)
        return 0

    return _with_sessions(args, work)


def _export(args: argparse.Namespace) -> int:
    async def work(sessions: Sessions) -> int:
        corrupt = _Corrupt()
        for item in await sessions.path(args.session):
            print(json.dumps(record(item, corrupt), ensure_ascii=False))
        return corrupt.exit_code()

    return _with_sessions(args, work)


def _items(count: int) -> str:
    return f"{count} item" if count == 1 else f"{count} items"


def _when(stamp: str) -> str:
    """An ISO time as ``2026-12-03 07:00:01Z``; as it is when it does not parse."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    except ValueError:
        return stamp


def describe(kind: str, body: Any) -> str:
    """One line for an item of ``show``: its text where it has one, else its compact JSON."""
    if kind == "header":
        header = SessionHeader.from_body(body)
        parts = [f"{k}={v}" for k, v in (("model", header.model), ("cwd", header.cwd)) if v]
        return " ".join(parts) or "-"
    text = _text(body)
    if text is None:
        from .._encoder import encode_state

        text = encode_state(body)
    text = " ".join(text.split())
    return text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"


def spending(responses: Iterable[Any]) -> str:
    """What ``show``'s first line says the answers used: tokens, cache hits, cost, models."""
    tokens = [0, 0, 0]
    cost = 0.0
    unpriced: set[str] = set()
    models: dict[str, int] = {}
    for body in responses:
        if not isinstance(body, dict) or body.get("source", "model") != "model":
            continue
        usage = body.get("usage") or {}
        model = str(body.get("model") or "?")
        models[model] = models.get(model, 0) + 1
        for i, key in enumerate(("input_tokens", "output_tokens", "cache_read_tokens")):
            tokens[i] += int(usage.get(key, 0) or 0)
        if isinstance(body.get("cost"), (int, float)):
            cost += body["cost"]
        else:
            unpriced.add(model)
    answered = ", ".join(f"{m} x{n}" for m, n in models.items()) or "no model answers"
    priced = f"${cost:.4f}" if not unpriced else "cost unknown (no price for "
    if unpriced:
        priced += ", ".join(sorted(unpriced)) + ")"
    return (
        f"total: {tokens[0]} in / {tokens[1]} out tokens, {tokens[2]} from cache; "
        f"{priced}; {answered}"
    )


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Message):
        calls = " ".join(f"{c.name}({c.arguments})" for c in value.tool_calls)
        return f"{value.role}: {value.text} {calls}".rstrip()
    if isinstance(value, dict):
        for key in ("message", "text", "content"):
            if key in value:
                found = _text(value[key])
                if found is not None:
                    return found
    return None
