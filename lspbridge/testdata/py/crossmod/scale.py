def scale(n: int) -> int:
    return n * 3
