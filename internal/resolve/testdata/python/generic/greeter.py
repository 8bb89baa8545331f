from dataclasses import dataclass, field
from enum import Enum
from typing import NotRequired, TypedDict

from agentc_tools import Tool, ToolInput, ToolOutput


class Tone(str, Enum):
    FRIENDLY = "friendly"
    FORMAL = "formal"


class Options(TypedDict, total=False):
    shout: bool
    repeat: int


@dataclass
class GreeterParams:
    name: str
    tone: Tone = Tone.FRIENDLY
    tags: list[str] = field(default_factory=list)
    options: Options | None = None


@dataclass
class GreeterResult:
    message: str


class Greeter(Tool[GreeterParams, GreeterResult]):
    """Greets someone by name."""

    async def execute(self, input: ToolInput[GreeterParams]) -> ToolOutput[GreeterResult]:
        raise RuntimeError("never run at plan time")
