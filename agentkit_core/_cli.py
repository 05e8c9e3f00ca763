"""The ``agentkit`` command line (argparse: startup time matters)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentkit", description="agentkit command line")
    sub = parser.add_subparsers(dest="command")
    plugins = sub.add_parser("plugins", help="inspect installed plugins")
    plugins_sub = plugins.add_subparsers(dest="plugins_command")
    plugins_sub.add_parser("list", help="list plugins in their resolved order")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "plugins":
        from ._plugins import get_plugin_manager

        for info in get_plugin_manager().plugins():
            print(f"{info.position!s:>3} {info.name:<24} {info.status:<12} {info.distribution}")
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
