def tool() -> int:
    return 1
