def search(wrong: int):
    """A test module: never searched."""
