def mean(values: list[float]) -> float:
    """Arithmetic mean of the values."""
    import numpy

    return float(numpy.mean(values))
