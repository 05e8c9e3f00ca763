from agentkit_policy_rules import Policy
from agentkit_policy_rules import Rule

from agentkit_core.plugin import PolicyEngine
from agentkit_core.testing import PolicyEngineConformance


class TestPolicyRules(PolicyEngineConformance):
    def make_engine(self) -> PolicyEngine:
        return Policy(
            [
                Rule("allow", "read", id="reads"),
                Rule("ask", "write", id="writes"),
                Rule("deny", "wipe", id="no-wipe"),
            ],
            default="ask",
        )
