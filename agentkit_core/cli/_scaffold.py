"""``agentkit plugins new KIND NAME``: write a complete plugin distribution for one seam.

What is written is a starting point that already works: a pyproject with the entry point and
the core range, a package with a minimal implementation of the seam, a README, and tests that
run the seam's conformance suite. ``pip install -e DIR && pytest DIR`` passes and ``agentkit
plugins list`` shows it, with no edits. Every kind is one row of :data:`KINDS` plus its two
templates under ``_templates/<kind>/``, so a new seam is one entry.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from .._errors import ConfigError

if TYPE_CHECKING:
    import string


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of plugin the scaffold writes.

    ``name`` is the KIND argument and the distribution's prefix (``agentkit-<name>-NAME``).
    ``seam`` is the registration seam (``None`` for a hooks-only plugin), ``provides`` what the
    plugin registers or implements as ``agentkit plugins list --json`` reports it, ``summary``
    one line for help and the README, ``usage`` how a user picks the plugin (with ``$name``),
    ``suffix`` the implementation class's name after the camel-cased NAME, ``dependencies``
    the third-party requirements the template needs besides agentkit-core.
    """

    name: str
    seam: str | None
    summary: str
    usage: str
    suffix: str = ""
    dependencies: tuple[str, ...] = ()


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind(
            "compactor",
            "compactors",
            "a compactor: keeps the transcript under a token budget before each model call",
            'agentkit run "..." --compactor $name, or Kit(compactor="$name", '
            'compactor_options={"max_tokens": 4000})',
            "Compactor",
        ),
        Kind(
            "schema",
            "schema_adapters",
            "a schema flavour: typed output declared as a TypedDict",
            "Agent(..., output=MyTypedDict): the flavour is probed for every output type",
            "Adapter",
            ("typing-extensions>=4.7",),
        ),
        Kind(
            "checkpoint",
            "checkpoint_stores",
            "a checkpoint store: one JSON file per checkpoint under a directory",
            'await open_checkpoint_store("$name:///var/lib/agent/checkpoints", manager=pm)',
            "Store",
        ),
        Kind(
            "guardrail",
            "guardrails",
            "a guardrail: tools may reach only the hosts of an allow-list",
            'Kit(guardrail="$name", guardrail_options={"hosts": ["example.com"]})',
            "Guardrail",
        ),
        Kind(
            "tool-source",
            "tool_sources",
            "a tool source: offers tools to every agent that configures it",
            'await Kit.open(tool_sources={"$name": {}})',
            "Tools",
        ),
        Kind(
            "model",
            "models",
            "a model provider: answers requests for the model strings $name:<model>",
            'Agent(..., model="$name:loud"), or agentkit run "..." --model $name:loud',
            "Model",
        ),
        Kind(
            "instructions",
            "instruction_parts",
            "an instruction part: house rules added to the system prompt, within its budget",
            'Kit(parts={"$name": {"rules": ["Answer in English."]}})',
            "Part",
        ),
        Kind(
            "session-store",
            "session_stores",
            "a session store: conversations recorded as trees of items, in this process",
            'await Kit.open(session="$name://", ...), or agentkit run "..." --session $name://',
            "SessionStore",
        ),
        Kind(
            "memory-store",
            "memory_stores",
            "a memory store: entries a model saves for later runs, in this process",
            'await Kit.open(memory={"store": "$name://", "scopes": ["user"]}, ...)',
            "MemoryStore",
        ),
        Kind(
            "mcp-token-store",
            "mcp_token_stores",
            "an MCP token store: OAuth grants for MCP servers, per server and user, in memory",
            'Kit(mcp=[{"url": "https://...", "auth": "oauth", "token_store": "$name://"}])',
            "TokenStore",
        ),
        Kind(
            "span-exporter",
            "span_exporters",
            "a span exporter: each run's spans as JSON lines in a file",
            'AGENTKIT_<NAME>_FILE=spans.jsonl agentkit run "..."',
            "Exporter",
        ),
        Kind(
            "policy",
            "policy_engines",
            "a policy engine: allows, asks or denies each tool call as a policy file says",
            'Kit(policy="policy.txt", policy_engine="$name")',
            "Policy",
        ),
        Kind(
            "guard",
            "guards",
            "a guard: withholds configured words from what is sent to the model and answered",
            'Kit(guards=["$name"], guard_options={"$name": {"words": ["password"]}})',
            "Guard",
        ),
        Kind(
            "executor",
            "executors",
            "a run executor: runs each model call and tool call as a step, noting its name",
            'Kit(executor="$name", executor_options={"step_timeout": 30})',
            "Executor",
        ),
        Kind(
            "prices",
            "prices",
            "a price table: what a call to each of its models costs, in US dollars",
            "nothing to configure: once installed, AgentResult.cost prices the models it lists",
            "Prices",
        ),
        Kind(
            "server",
            "servers",
            "a server: answers each line a TCP client sends with the agent's answer",
            "agentkit serve --protocol $name",
        ),
        Kind(
            "hooks",
            None,
            "hooks only: asks a person before a tool that deletes something runs",
            "nothing to configure: once installed, every agent on the default plugin manager "
            "folds its hooks",
        ),
    )
}

#: What NAME may be: lower-case words of letters and digits joined by single hyphens.
_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_MAX_NAME = 24
_TEMPLATES = "_templates"


@dataclass(frozen=True, slots=True)
class Plan:
    """Where each file of a new plugin goes and what it holds (paths relative to the root)."""

    kind: Kind
    name: str
    dist: str
    package: str
    summary: str
    usage: str
    files: dict[str, str]


def core_range() -> str:
    """The ``agentkit-core`` requirement of a new plugin: this core's minor up to its next major."""
    from .._discovery import core_version

    parts = [int(p) for p in re.findall(r"\d+", core_version())[:2]] + [0, 0]
    return f"agentkit-core>={parts[0]}.{parts[1]},<{parts[0] + 1}"


def _template(*parts: str) -> string.Template:
    import string
    from importlib import resources

    path = resources.files("agentkit_core.cli").joinpath(_TEMPLATES, *parts)
    return string.Template(path.read_text(encoding="utf-8"))


def plan(kind_name: str, name: str) -> Plan:
    """The files of a new ``kind_name`` plugin called ``name``; bad input is a ConfigError."""
    import json  # here and below, not at module level: the CLI imports this module at start
    import string

    kind = KINDS.get(kind_name)
    if kind is None:
        raise ConfigError(
            f"no plugin kind {kind_name!r}; the kinds are {', '.join(KINDS)}",
            value=kind_name,
            source="KIND",
        )
    if not _NAME.fullmatch(name) or len(name) > _MAX_NAME:
        why = (
            f"is {len(name)} characters long, over {_MAX_NAME}"
            if len(name) > _MAX_NAME
            else "is not lower-case words of letters and digits joined by hyphens, starting "
            "with a letter (such as 'keep-recent')"
        )
        raise ConfigError(f"plugin name {name!r} {why}", value=name, source="NAME")
    package = f"agentkit_{kind.name}_{name}".replace("-", "_")
    dist = f"agentkit-{kind.name}-{name}"
    camel = "".join(word.capitalize() for word in name.split("-"))
    core = core_range()
    summary = string.Template(kind.summary).substitute(name=name)
    values = {
        "name": name,
        "NAME": name.upper().replace("-", "_"),
        "dist": dist,
        "package": package,
        "cls": camel + kind.suffix,
        "summary": summary,
        "Summary": summary[:1].upper() + summary[1:],
        "usage": string.Template(kind.usage).substitute(name=name),
        "dependencies": ", ".join(f'"{d}"' for d in (core, *kind.dependencies)),
        "testing": core.replace("agentkit-core", "agentkit-core[testing]", 1),
        "provides": json.dumps([f"{kind.seam}:{name}"] if kind.seam else []),
    }
    suite = "test_conformance.py" if kind.seam else "test_hooks.py"
    files = {
        "pyproject.toml": _template("pyproject.toml.tmpl").substitute(values),
        "README.md": _template("README.md.tmpl").substitute(values),
        f"{package}/__init__.py": _template(kind.name, "plugin.py.tmpl").substitute(values),
        f"{package}/py.typed": "",
        "tests/test_plugin.py": _template("test_plugin.py.tmpl").substitute(values),
        f"tests/{suite}": _template(kind.name, "test.py.tmpl").substitute(values),
    }
    return Plan(kind, name, dist, package, summary, values["usage"], files)


def write(new: Plan, directory: Path) -> Path:
    """Write ``new`` into ``directory``, which must not exist or be empty; all or nothing."""
    import shutil
    import tempfile

    target = directory.resolve()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ConfigError(
            f"{directory} already exists and is not an empty directory; nothing was written. "
            "Pass another --dir, or remove it first",
            value=str(directory),
            source="--dir",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        for relative, text in new.files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def add_command(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``new`` to the ``agentkit plugins`` subcommands."""
    text = "write a new plugin distribution that passes its tests as written"
    width = max(map(len, KINDS)) + 2
    kinds = "\n".join(
        f"  {k.name:<{width}}{k.summary.replace('$name', 'NAME')}" for k in KINDS.values()
    )
    command = sub.add_parser(
        "new",
        help=text,
        description=f"{text}.\n\nkinds:\n{kinds}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("kind", metavar="KIND", choices=list(KINDS), help="the kind of plugin")
    command.add_argument("name", metavar="NAME", help="the plugin's name, such as keep-recent")
    command.add_argument(
        "--dir", type=Path, help="where to write it (default: ./agentkit-KIND-NAME)"
    )
    command.set_defaults(func=_new)


def _new(args: argparse.Namespace) -> int:
    new = plan(args.kind, args.name)
    directory = args.dir if args.dir is not None else Path(new.dist)
    write(new, directory)
    print(f"wrote {new.dist} in {directory}: {new.summary}")
    for relative in sorted(new.files):
        print(f"  {relative}")
    print(f"next: pip install -e '{directory}[test]' && pytest {directory}")
    print(f"then: agentkit plugins list shows {new.name}; use it: {new.usage}")
    return 0
