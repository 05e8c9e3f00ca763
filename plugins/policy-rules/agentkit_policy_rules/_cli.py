"""``agentkit policy explain``: what the policy would decide about one call, and why.

The decision is the engine's own side-effect-free one (``Policy.would``), so what the command
prints is what a run would do, given the same tool source label and no grants.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import ToolCall


def add_commands(cli: Any) -> None:
    """``agentkit policy explain FILE --tool NAME [--args JSON] [--source LABEL] ...``."""
    policy = cli.add_parser("policy", help="read and explain a policy file")
    sub = policy.add_subparsers(dest="policy_command", metavar="SUBCOMMAND", required=True)
    explain = sub.add_parser(
        "explain",
        help="print the verdict and the rule a call of a tool would get",
        description="Print the verdict a call would get and the id of the rule that decided it "
        "('ask default' when no rule did); warn about rules naming no offered tool.",
    )
    explain.add_argument("file", help="the policy file (TOML)")
    explain.add_argument("--tool", required=True, help="the tool called")
    explain.add_argument("--args", default="{}", metavar="JSON", help="the call's arguments")
    explain.add_argument(
        "--source", default=None, metavar="LABEL", help="the label of the tool's source (tools)"
    )
    explain.add_argument(
        "--offered",
        default=None,
        metavar="NAMES",
        help="the tools offered, comma-separated: rules naming none of them are listed",
    )
    explain.add_argument("--json", action="store_true", help='print {"verdict","rule","reason"}')
    explain.set_defaults(func=_explain)


def _explain(args: argparse.Namespace) -> int:
    from ._engine import Policy

    policy = Policy.from_file(args.file)
    try:
        arguments = json.loads(args.args)
    except ValueError as exc:
        raise ConfigError(
            f"--args is not JSON ({exc}): {args.args!r}", value=args.args, source="--args"
        ) from None
    if not isinstance(arguments, dict):
        raise ConfigError(
            f"--args must be a JSON object of the call's arguments, got {args.args!r}",
            value=args.args,
            source="--args",
        )
    # the text as given, which the engine reads as a run does: an object naming a key twice
    # is denied there, where json.loads here would keep the last value
    call = ToolCall("explain", args.tool, args.args)
    decision = policy.would(call, source=args.source or "tools")
    if args.offered is not None:
        offered = [n.strip() for n in args.offered.split(",") if n.strip()]
        for warning in policy.unmatched(offered):
            print(f"agentkit: warning: {warning}", file=sys.stderr)
    if args.json:
        print(
            json.dumps({"verdict": decision.kind, "rule": decision.rule, "reason": decision.reason})
        )
    else:
        print(f"{decision.kind} {decision.rule}")
    return 0
