"""Types the CLI tests pass to --output."""

from pydantic import BaseModel


class Plan(BaseModel):
    subject: str
    steps: list[str]
