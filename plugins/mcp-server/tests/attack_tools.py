"""Tools served in the attack tests (``attack_tools:TOOLS``): the sample tools, and tools whose
results hold lone surrogates, as a name ``os.fsdecode`` made from bytes that are not UTF-8."""

from agentkit_mcp_server import log
from sample_tools import TOOLS as SAMPLE

from agentkit_core import RunContext
from agentkit_core import tool

#: A file name of the bytes ``b"report-\xff.txt"``, as Python decodes it from the file system.
NAME = b"report-\xff.txt".decode("utf-8", "surrogateescape")


@tool
def file_name() -> str:
    """The name of the report file."""
    return NAME


@tool
def file_info() -> dict[str, object]:
    """The report file's name and size."""
    return {"name": NAME, "size": 3}


@tool
def open_file() -> str:
    """Open the report file (it is gone)."""
    raise FileNotFoundError(f"no such file: {NAME!s}")


@tool
async def log_name() -> str:
    """Log the report file's name to the client."""
    await log("info", {"file": NAME})
    return "logged"


@tool
async def delete_file(ctx: RunContext) -> str:
    """Delete the report file once the client's user confirms."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    answer = await ctx.elicit(f"Delete {NAME}?", schema)
    return "deleted" if answer and answer["ok"] is True else "kept"


TOOLS = [*SAMPLE, file_name, file_info, open_file, log_name, delete_file]
