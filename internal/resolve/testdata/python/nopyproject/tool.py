def tool(x: int) -> int:
    return x
