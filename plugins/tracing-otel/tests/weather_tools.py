"""A tool for the collector test's ``agentkit run`` subprocess."""


def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


TOOLS = [weather]
