def double(n: int) -> int:
    return n * 2


print(double(21))
