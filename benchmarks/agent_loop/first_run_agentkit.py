"""Import, build an Agent (every installed plugin) and run it once: a whole process's work.

Timed from outside, beside ``first_run_pydantic_ai.py`` in its own venv, paired (A/B/A/B):

    benchmarks/.envs/agent_loop-agentkit/bin/python benchmarks/agent_loop/first_run_agentkit.py
"""

import asyncio

from agentkit_core import Agent
from agentkit_core.testing import ScriptedModel

agent = Agent("a", ScriptedModel(["done"]))
assert asyncio.run(agent.run("go")).output == "done"
