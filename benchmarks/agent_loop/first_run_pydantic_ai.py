"""pydantic-ai's first run: import, build an Agent on its test model, run it once."""

from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

agent = Agent(TestModel(custom_output_text="done"))
assert agent.run_sync("go").output == "done"
