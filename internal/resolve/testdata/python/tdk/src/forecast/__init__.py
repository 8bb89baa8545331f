from forecast.tool import DailyForecast, Weather

__all__ = ["DailyForecast", "Weather"]
