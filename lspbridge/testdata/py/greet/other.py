import greet

OTHER: str = greet.greet("alice")
