def echo(text: str) -> str:
    """Echo the text back."""
    return text
