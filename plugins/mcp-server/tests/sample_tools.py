"""Tools served in the mcp-server tests (imported as ``sample_tools:TOOLS``)."""

from typing import Any

from agentkit_core import Tool
from agentkit_core import ToolResult
from agentkit_core.content import AudioPart
from agentkit_core.content import DocumentPart
from agentkit_core.content import ImagePart
from agentkit_core.content import TextPart


class Add(Tool):
    def __init__(self) -> None:
        super().__init__(
            "add",
            "Add two integers.",
            {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
            side_effects=False,
        )

    async def invoke(self, arguments: dict[str, Any], ctx: Any) -> ToolResult:
        total = arguments["a"] + arguments["b"]
        return ToolResult(str(total), structured={"sum": total})


class Explode(Tool):
    def __init__(self) -> None:
        super().__init__("explode", "Always raises.")

    async def invoke(self, arguments: dict[str, Any], ctx: Any) -> ToolResult:
        raise RuntimeError("boom from the tool")


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


class Attachments(Tool):
    """A result of typed content parts, one of each kind."""

    def __init__(self) -> None:
        super().__init__("attachments", "Returns one content part of each kind.")

    async def invoke(self, arguments: dict[str, Any], ctx: Any) -> ToolResult:
        return ToolResult(
            (
                TextPart("four parts follow"),
                ImagePart(data=PNG, media_type="image/png"),
                ImagePart(url="https://example.org/cat.png"),
                DocumentPart(data=b"%PDF-1.7\n%\xe2\xe3", name="report.pdf"),
                AudioPart(data=b"RIFF\x00\x00\x00\x00WAVE", media_type="audio/wav"),
            )
        )


TOOLS = [Add(), Explode(), Attachments()]
