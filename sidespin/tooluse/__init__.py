"""Tool use for llama.cpp models: `Decider(llama).decide(messages, tools)`, the calls a conversation's last message
asks for; its stages in order in `pipeline`, the offer in `offer`, relevance in `relevance`, the model's questions
in `model`, values said in `values`, rules for kinds of server in `shapes`."""

from sidespin.tooluse.model import CallFormat, Llama
from sidespin.tooluse.relevance import Embedder
from sidespin.tooluse.offer import SHORTLIST, offered_table, tables
from sidespin.tooluse.pipeline import FIT, THRESHOLD, Decider

__all__ = ["CallFormat", "Decider", "Embedder", "FIT", "Llama", "SHORTLIST", "THRESHOLD", "offered_table", "tables"]
