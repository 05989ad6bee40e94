"""sidespin: a local-first chat server in which a language model uses tools."""

__version__ = "0.1.0"
