"""A LangChain chat model that follows the recorder's script (for LangGraph and LangChain)."""

from __future__ import annotations

from typing import Any

from common import ANSWER
from common import REC
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration
from langchain_core.outputs import ChatResult


class StubChat(BaseChatModel):
    """One tool call per turn, then the answer; binding tools changes nothing."""

    @property
    def _llm_type(self) -> str:
        return "stub"

    def bind_tools(self, tools: Any, **kwargs: Any) -> StubChat:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        planned = REC.step()
        if planned is None:
            message = AIMessage(content=ANSWER)
        else:
            name, args = planned
            call = {
                "name": name,
                "args": args,
                "id": f"call_{len(REC.model_in)}",
                "type": "tool_call",
            }
            message = AIMessage(content="", tool_calls=[call])
        result = ChatResult(generations=[ChatGeneration(message=message)])
        REC.model_done()
        return result

    async def _agenerate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Any:
        return self._generate(messages, stop)
