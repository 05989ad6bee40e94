"""`ScriptedBackend`, a fake model replaying scripted turns, as the tests import it.

It lives with the other backends (`sidespin.llm.scripted`): the backend factory builds it for
the backend "scripted", and the backends' package imports nothing from `sidespin.testing`.
"""

from sidespin.llm.scripted import Item, ScriptedBackend, Turn

__all__ = ["ScriptedBackend", "Item", "Turn"]
