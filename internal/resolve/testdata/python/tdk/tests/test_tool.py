# Tests are not searched: this class must not make "Weather" ambiguous.
class Weather:
    name = "current_weather"
    description = "test double"
    schema = {"type": "object"}
