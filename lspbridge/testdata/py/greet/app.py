from greet import greet

MESSAGE: str = greet("bob")
