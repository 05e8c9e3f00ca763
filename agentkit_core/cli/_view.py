"""``agentkit view``: write what a run did as one self-contained HTML page, and open it."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from .._errors import ConfigError
from .._lookup import open_checkpointer

if TYPE_CHECKING:
    from ._viewer import RunView


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    view = sub.add_parser(
        "view",
        help="write a run's timeline as one HTML page (from a trace file or a checkpoint store)",
        description="Write what a run did — turns, model calls, tool calls with their "
        "arguments, results and verdicts, folds, pending calls, errors — as one self-contained "
        "HTML file, and open it. RUN is a trace file that agentkit run --trace wrote, or a run "
        "id in the checkpoint store --store names.",
    )
    view.add_argument("run", metavar="RUN", help="a trace file, or a run id with --store")
    view.add_argument(
        "--store",
        metavar="URL",
        help="the checkpoint store holding the run (sqlite:///runs.db, postgresql://...)",
    )
    view.add_argument(
        "--out",
        metavar="FILE",
        help="where to write the page (default: agentkit-view-<name>.html here)",
    )
    view.add_argument(
        "--no-open",
        action="store_true",
        help="only write the page (it is opened only when the output is a terminal)",
    )
    view.set_defaults(func=_view)


def _view(args: argparse.Namespace) -> int:
    from ..plugin import create_private
    from ._viewer import render_html

    if args.store:
        import asyncio  # here, not at the top: listing plugins builds this parser

        views = [asyncio.run(_checkpoint_view(args.run, args.store, args.plugin_manager))]
        name = args.run
    elif Path(args.run).is_file():
        from ._trace_file import read_trace_file
        from ._viewer import views_from_spans

        views = views_from_spans(read_trace_file(args.run))
        name = Path(args.run).stem
    else:
        raise ConfigError(
            f"{args.run!r} is not a trace file; pass the file agentkit run --trace FILE wrote, "
            "or a run id with --store URL (the checkpoint store the run wrote to)",
            value=args.run,
            source="RUN",
        )
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80]
    out = Path(args.out) if args.out else Path(f"agentkit-view-{safe}.html")
    page = render_html(views, name)
    try:
        # a new page is its owner's only (0600): it shows the conversation; one already there
        # keeps its mode. A lone surrogate a run recorded is shown as its escape: strict UTF-8
        # refused the page.
        create_private(out)
        out.write_text(page, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise ConfigError(
            f"cannot write {str(out)!r}: {exc.strerror or exc}; pass --out with a path you can "
            "write to",
            value=str(out),
            source="--out",
        ) from exc
    print(out)
    if not args.no_open and sys.stdout.isatty() and not os.environ.get("CI"):
        import webbrowser

        webbrowser.open(out.resolve().as_uri())
    return 0


async def _checkpoint_view(run_id: str, url: str, manager: Any) -> RunView:
    from ._viewer import view_from_checkpoint

    async with await open_checkpointer(url, manager=manager) as checkpointer:
        saved = await checkpointer.resume(run_id, include_terminal=True)
        if saved is None:
            raise ConfigError(
                f"run {run_id!r} has no checkpoint in {checkpointer.store}; agentkit run "
                "--store URL prints the id of the run it checkpoints",
                value=run_id,
                source="RUN",
            )
        versions = await checkpointer.list_versions(run_id)
    return view_from_checkpoint(saved, len(versions))
