"""What MCP's server conformance scenarios call, served by ``serve_tools`` over HTTP.

Run as ``python conformance_kit.py PORT``. Every tool is an ordinary agentkit tool: sampling
goes through the run's model (the client's, through ``sampling/createMessage``), elicitation
through ``ctx.elicit`` (the client's user), progress through ``report_progress``.
"""

import asyncio
import json
import sys

from agentkit_mcp_server import ServedPrompt
from agentkit_mcp_server import ServedResource
from agentkit_mcp_server import log
from agentkit_mcp_server import report_progress
from agentkit_mcp_server import serve_tools

from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import ToolResult
from agentkit_core import tool
from agentkit_core.plugin import ModelRequest

PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


@tool
def test_simple_text() -> str:
    """Returns simple text."""
    return "This is a simple text response for testing."


@tool
def test_image_content() -> ToolResult:
    """Returns an image."""
    url = f"data:image/png;base64,{PIXEL}"
    return ToolResult(({"type": "image_url", "image_url": {"url": url}},))


@tool
def test_error_handling() -> str:
    """Always fails."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@tool
async def test_tool_with_progress() -> str:
    """Reports progress 0, 50, 100 of 100."""
    for step in (0, 50, 100):
        await report_progress(step, 100)
        await asyncio.sleep(0.05)
    return "progress done"


@tool
async def test_tool_with_logging() -> str:
    """Logs three messages at info level while it works."""
    for said in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await log("info", said)
        await asyncio.sleep(0.05)
    return "logged"


@tool
async def test_sampling(prompt: str, ctx: RunContext) -> str:
    """Asks the run's model (the client's) to answer ``prompt``."""
    answer = await ctx.invoker_for().chat(
        ModelRequest((Message.user(prompt),), settings={"max_tokens": 100})
    )
    return f"LLM response: {answer.message.text}"


@tool
async def test_elicitation(message: str, ctx: RunContext) -> str:
    """Asks the client's user for a username and an email."""
    schema = {
        "type": "object",
        "properties": {"username": {"type": "string"}, "email": {"type": "string"}},
        "required": ["username", "email"],
    }
    answer = await ctx.elicit(message, schema)
    return f"User response: {json.dumps(answer)}"


def template(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


RESOURCES = {
    "test://static-text": ServedResource(
        text="This is the content of the static text resource.", mime_type="text/plain"
    ),
    "test://static-binary": ServedResource(data=bytes.fromhex("89504e47"), mime_type="image/png"),
    "test://template/{id}/data": ServedResource(read=template, mime_type="application/json"),
    "test://watched-resource": "Watched resource content.",
}


def embedded(resourceUri: str) -> list:
    resource = {
        "uri": resourceUri,
        "mimeType": "text/plain",
        "text": "Embedded resource content for testing.",
    }
    return [
        ("user", {"type": "resource", "resource": resource}),
        ("user", {"type": "text", "text": "Please process the embedded resource above."}),
    ]


PROMPTS = {
    "test_simple_prompt": "This is a simple prompt for testing.",
    "test_prompt_with_arguments": "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'",
    "test_prompt_with_embedded_resource": ServedPrompt(render=embedded),
    "test_prompt_with_image": ServedPrompt(
        render=lambda: [
            ("user", {"type": "image", "data": PIXEL, "mimeType": "image/png"}),
            ("user", {"type": "text", "text": "Please analyze the image above."}),
        ]
    ),
}

TOOLS = [
    test_simple_text,
    test_image_content,
    test_error_handling,
    test_tool_with_progress,
    test_tool_with_logging,
    test_sampling,
    test_elicitation,
]

if __name__ == "__main__":
    asyncio.run(
        serve_tools(
            TOOLS,
            transport="http",
            port=int(sys.argv[1]),
            resources=RESOURCES,
            prompts=PROMPTS,
            on_listening=lambda url: print(url, flush=True),
        )
    )
