def one() -> int:
    return "one"


def two() -> int:
    return undefined_two


def three() -> str:
    return 3
