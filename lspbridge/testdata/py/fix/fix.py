TWO = 2


def half(n: int) -> float:
    return n / TWOO
