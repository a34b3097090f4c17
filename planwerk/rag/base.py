"""The retrieval seam: what the retrieve node needs from any retriever."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from typing_extensions import TypedDict


class Hit(TypedDict):
    """One retrieved chunk, as it is kept in the state and sent in the ``retrieval`` event."""

    text: str
    score: float
    """Relevance in [0, 1] (higher is better); what the threshold is compared against."""
    source: str
    """Where the chunk comes from, e.g. ``Razepato.txt#3`` (file name and chunk number)."""


@runtime_checkable
class Retriever(Protocol):
    """Anything that turns a query into ranked hits. Blocking; the node runs it in a worker thread."""

    def search(self, query: str, k: int = 4) -> list[Hit]:
        """The top ``k`` hits above the retriever's relevance threshold, best first."""
        ...
