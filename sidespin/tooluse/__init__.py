"""Tool use for llama.cpp models: the decision pipeline (`pipeline`), read in order in one file.

`Decider(llama).decide(messages, tools)` returns the calls a conversation's last message asks for. What the model is
offered is in `offer`, how relevance is ranked in `relevance`, what it is asked in `model`, which values count as
said in `values`, and the rules for kinds of server in `shapes`.
"""

from sidespin.tooluse.call_format import CallFormat, Llama
from sidespin.tooluse.embeddings import Embedder
from sidespin.tooluse.offer import SHORTLIST, offered_table, tables
from sidespin.tooluse.pipeline import FIT, THRESHOLD, Decider

__all__ = ["CallFormat", "Decider", "Embedder", "FIT", "Llama", "SHORTLIST", "THRESHOLD", "offered_table", "tables"]
