"""Forecast tools in the agentc TDK style: class attributes, read statically."""

from agentc_tools import Schema, Tool, ToolInput, ToolOutput

UNITS = ["celsius", "fahrenheit"]

# A module-level constant the class refers to: still a literal.
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name, e.g. Paris."},
        "units": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
    },
    "required": ["city"],
}


class DailyForecast(Tool):
    description = "Forecast for the next days."
    parameters = Schema({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
        },
        "required": ["city", "days"],
    })

    async def execute(self, input: ToolInput) -> ToolOutput:
        raise RuntimeError("never run at plan time")


class Weather(Tool):
    """Current weather for a city.

    This docstring is not the description: the attribute is.
    """

    name = "current_weather"
    description = (
        "Current weather for a city "
        "(temperature and conditions)."
    )
    schema = WEATHER_SCHEMA


class Untyped(Tool):
    description = "A schema that is computed, which agentform cannot read."
    schema = build_schema()


class Alerts(Tool):
    name = "alerts"
    description = """
        Weather alerts for a region.
        Severe ones first.
    """
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
