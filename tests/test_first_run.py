"""The first run imports only what it uses.

Each check runs in a fresh interpreter (the test session has long imported everything), with
every installed plugin loaded as an ``Agent`` does by default, and no ``OTEL_*`` variable set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

#: Where the runs start: the configuration lookup finds the repository's pyproject.toml, which
#: has no [tool.agentkit] table (as in most users' projects).
REPOSITORY = Path(__file__).resolve().parents[1]

#: A scripted run: import, build an Agent with the installed plugins, run once.
RUN = """
import asyncio, json, sys
from agentkit_core import Agent, Message, ToolCall
from agentkit_core.testing import ScriptedModel

def echo(text: str) -> str:
    '''Return the text.'''
    return text

TOOLS = {tools}
steps = [Message.assistant("", (ToolCall("c1", "echo", '{{"text": "x"}}'),)), "done"]
agent = Agent("a", ScriptedModel(steps if TOOLS else ["done"]), tools=TOOLS)
assert asyncio.run(agent.run("go")).output == "done"
print(json.dumps(sorted(sys.modules)))
"""

#: Whether ``tokenize`` compiled its patterns (~4 ms): ``dataclasses`` asks
#: ``inspect.signature`` for the text of a record that has no docstring, and the signature
#: of a class without its own ``__init__`` is parsed from text with them.
TOKENIZE_COMPILED = """
import asyncio, sys, tokenize
from agentkit_core import Agent
from agentkit_core.testing import ScriptedModel

agent = Agent("a", ScriptedModel(["done"]))
assert asyncio.run(agent.run("go")).output == "done"
print(tokenize._compile.cache_info().currsize)
"""

#: Records a plain run does not build (no tool, no content part, no stream): their ``__init__``
#: is compiled when first wanted (~0.5 M instructions each), so none of theirs should be.
UNBUILT_RECORDS = """
import asyncio, inspect, json
from agentkit_core import Agent
from agentkit_core.testing import ScriptedModel

agent = Agent("a", ScriptedModel(["done"]))
assert asyncio.run(agent.run("go")).output == "done"
from agentkit_core import ToolCall, ToolResult
from agentkit_core._content import TextPart
from agentkit_core._middleware import ToolInvocation
from agentkit_core.plugin import StreamEvent, ToolSpec
records = [TextPart, ToolCall, ToolResult, ToolSpec, StreamEvent, ToolInvocation]
print(json.dumps([r.__name__ for r in records if inspect.isfunction(vars(r)["__init__"])]))
"""

#: The ``TypedDict`` classes alive after a plain run, by module: making one compiles each of its
#: string hints as a ``ForwardRef`` (~0.3 M instructions for a four-key class), and a plain run
#: reads no plugin's options.
TYPED_DICTS = """
import asyncio, json, typing
from agentkit_core import Agent
from agentkit_core.testing import ScriptedModel

agent = Agent("a", ScriptedModel(["done"]))
assert asyncio.run(agent.run("go")).output == "done"
made = {c for c in type.__subclasses__(dict) if typing.is_typeddict(c)}
print(json.dumps(sorted(f"{c.__module__}.{c.__qualname__}" for c in made)))
"""

#: What of :data:`TYPED_DICTS` a plain run may make: pluggy's own, and the model settings the
#: run checks its ``settings=`` against.
TYPED_DICTS_MADE = {
    "pluggy._config.HookspecOpts",
    "pluggy._config.HookimplOpts",
    "agentkit_core.ModelSettings",
}

#: Patterns a plain run has no text for (a store URL, a PDF, a blob reference, a handoff): each
#: compiled on first use (~0.6 M instructions each at import).
UNUSED_PATTERNS = """
import asyncio, json, re._compiler
compiled = []
compile = re._compiler.compile
re._compiler.compile = lambda p, flags=0: compiled.append(p) or compile(p, flags)
from agentkit_core import Agent
from agentkit_core.testing import ScriptedModel

agent = Agent("a", ScriptedModel(["done"]))
assert asyncio.run(agent.run("go")).output == "done"
from agentkit_core import _blobs, _handoff, _tokens, _urls
unused = [_urls._SECRET_PAIR, _tokens._PDF_PAGE, _blobs._REF, _handoff._UNSAFE]
texts = {getattr(p, "pattern", p) for p in unused}
print(json.dumps([str(p) for p in compiled if p in texts]))
"""

#: What a run with no tracing, no typed value, no stream of events, no database and no
#: network does not use: the exporters' and stores' libraries, and the stdlib modules only a
#: command line, an error message, a version range or an id type needs.
UNUSED = {
    "opentelemetry",
    "pydantic",
    "pydantic_core",
    "jsonschema",
    "httpx",
    "sqlite3",
    "psycopg",
    "dbos",
    "mcp",
    "packaging",
    "argparse",
    "difflib",
    "uuid",
    "decimal",
    "agentkit_core._events",
    "agentkit_core._event_queue",
    # discovery reads the .dist-info folders itself: no importlib_metadata and what it imports
    "importlib_metadata",
    "importlib.metadata",
    "zipp",
    "zipfile",
    "email",
    "tempfile",
    "shutil",
    "platform",
    "importlib.resources",
    "lzma",
    "bz2",
    # the core's machinery for what a plain run does not configure: guards, a policy and its
    # approvals, resuming, memory, a compactor, a session's state and instruction records,
    # verdicts (reported by guards, policies and hooks that decide) and a fallback chain
    "agentkit_core._approvals",
    "agentkit_core._policy",
    "agentkit_core._guard",
    "agentkit_core._guard_chain",
    "agentkit_core._resume",
    "agentkit_core._memory",
    "agentkit_core._framing",
    "agentkit_core._memory_block",
    "agentkit_core._compaction",
    "agentkit_core._units",
    "agentkit_core._session_state",
    "agentkit_core._instructions",
    "agentkit_core._verdicts",
    "agentkit_core._fallback",
    "agentkit_core._kit",
    "agentkit_core._kit_options",
    # a session's records and store (the recorder takes them when it records), a checkpoint's
    # (only a configured checkpointer resolves one), and the partial-JSON parser (a stream of
    # typed output)
    "agentkit_core._sessions",
    "agentkit_core._checkpoint",
    "agentkit_core._partial",
    # typed output: the schema flavours load their adapters (and with them the core's
    # typed-output machinery) when a run first asks for one
    "agentkit_core._output",
    # a guardrail's URL and address checks, a tool union, and what only a retry's jitter, a
    # blob's, a grounding's or a skill's digest needs
    "agentkit_core._guardrails",
    "agentkit_core._toolunion",
    "unicodedata",
    "random",
    "hashlib",
    # the fold (the summarization plugin reads the core's summary texts from it on first use)
    "agentkit_core._fold",
    # the TOML parser: run from a project whose pyproject.toml cannot hold [tool.agentkit]
    "tomllib",
    "datetime",
    # instructions-skills' Skill record (made when skills are first read)
    "agentkit_instructions_skills._skill",
    # pathlib and what it imports: the configuration lookup goes by name (os.path), and the
    # plugins import Path when a provider is built or a hint naming it is read
    "pathlib",
    "urllib.parse",
    "ipaddress",
    "fnmatch",
    # the plugins' options TypedDicts, made when the options are first read (~0.8 M instructions
    # a class), and the schema flavours' adapters, made when a run asks for a typed output
    *(
        f"agentkit_{plugin}._options"
        for plugin in (
            "model_anthropic",
            "model_gemini",
            "model_openai",
            "mcp_client",
            "instructions_agentsmd",
            "instructions_skills",
            "compactor_importance",
            "compactor_sliding_window",
            "compactor_summarization",
            "compactor_truncation",
            "executor_dbos",
            "guard_denylist",
            "guard_limits",
            "guard_redact",
        )
    ),
    "agentkit_guardrail_web._settings",
    *(
        f"agentkit_schema_{flavour}._adapter"
        for flavour in ("attrs", "dataclass", "jsonschema", "pydantic")
    ),
}

#: What ``agentkit plugins list`` does not use: a run's machinery, metadata libraries, and the
#: other built-in commands' modules (only the chosen command's module is imported).
UNUSED_BY_PLUGINS_LIST = {
    "asyncio",
    "importlib_metadata",
    "importlib.metadata",
    "zipfile",
    "email",
    "tempfile",
    "agentkit_core.cli._chat",
    "agentkit_core.cli._serve",
    "agentkit_core.cli._sessions",
    "agentkit_core.cli._memory",
    "agentkit_core.cli._view",
    # the instruction-part and session records, which the plugins' entry modules used to import
    "agentkit_core._instructions",
    "agentkit_core._sessions",
}

#: ``agentkit plugins list`` in a fresh interpreter, its table thrown away.
PLUGINS_LIST = """
import contextlib, io, json, sys
from agentkit_core.cli._main import main
with contextlib.redirect_stdout(io.StringIO()):
    assert main(["plugins", "list"]) == 0
print(json.dumps(sorted(sys.modules)))
"""


def _modules_after(tools: str) -> set[str]:
    """The modules a fresh interpreter holds after one run."""
    return _modules_of(RUN.format(tools=tools))


def _printed_by(script: str) -> str:
    """What ``script`` prints, run by a fresh interpreter from the repository's root."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
        cwd=REPOSITORY,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _modules_of(script: str) -> set[str]:
    """The modules a fresh interpreter holds after ``script``, which prints them."""
    return set(json.loads(_printed_by(script)))


def _tops_after(tools: str) -> set[str]:
    """The top-level packages a fresh interpreter holds after one run."""
    return {m.split(".")[0] for m in _modules_after(tools)}


def test_a_first_run_without_tracing_or_typed_values_imports_neither_otel_nor_pydantic() -> None:
    assert not _tops_after("[]") & {"opentelemetry", "pydantic", "pydantic_core"}


def test_a_first_run_imports_none_of_what_it_does_not_use() -> None:
    assert not _modules_after("[]") & UNUSED


def test_a_first_run_with_a_function_tool_imports_no_opentelemetry() -> None:
    """A function tool's schema and argument checks are pydantic's: pydantic is in play."""
    assert "opentelemetry" not in _tops_after("[echo]")


def test_plugins_list_imports_only_what_listing_uses() -> None:
    assert not _modules_of(PLUGINS_LIST) & UNUSED_BY_PLUGINS_LIST


def test_a_first_run_compiles_no_tokenize_patterns() -> None:
    assert _printed_by(TOKENIZE_COMPILED).strip() == "0"


def test_a_first_run_compiles_no_init_of_a_record_it_does_not_build() -> None:
    assert json.loads(_printed_by(UNBUILT_RECORDS)) == []


def test_a_first_run_compiles_no_pattern_it_has_no_text_for() -> None:
    assert json.loads(_printed_by(UNUSED_PATTERNS)) == []


def test_a_first_run_makes_no_options_typeddict() -> None:
    assert set(json.loads(_printed_by(TYPED_DICTS))) <= TYPED_DICTS_MADE
