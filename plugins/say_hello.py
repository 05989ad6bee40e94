"""The seed's "Hello World" of tool calling."""

from sidespin.tools import tool


@tool(read_only=True)
def say_hello(name: str) -> str:
    """Greet someone by name.

    Args:
        name: who to greet, e.g. "World"
    """
    return f"Hello, {name}!"
