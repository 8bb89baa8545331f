def lookup(title: str) -> str:
    """Find a note by its title."""
    raise RuntimeError("never run at plan time")
