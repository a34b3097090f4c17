"""What the graph's nodes are given: the seams that tests and applications swap."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from planwerk.core.tools import ToolError, ToolSpec
from planwerk.models import specs
from planwerk.rag.base import Retriever
from planwerk.tools.base import ToolSource


class NoTools:
    """A tool source with no tools: the planner can only answer with ``final``."""

    @property
    def specs(self) -> Mapping[str, ToolSpec]:
        return {}

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        raise ToolError(f"no tools are loaded, so {name!r} cannot run", tool=name, kind="invalid_arguments")


@dataclass
class Deps:
    """The graph's collaborators. ``None`` means: resolve from the run's :class:`~planwerk.graph.context.Context`."""

    chat_model: BaseChatModel | None = None
    """The model; when ``None`` it is loaded (once per process) from ``Context.model``."""
    answer_chat_model: BaseChatModel | None = None
    """The model that writes the answers; when ``None``, the one :meth:`model_for` gives for the answer model's spec
    (:func:`planwerk.graph.runtime.open_deps` sets it from ``Context.answer_model``)."""
    tools: ToolSource = field(default_factory=NoTools)
    """Where tools come from (MCP sessions opened by the caller for the life of the run)."""
    retriever: Retriever | None = None
    """The retriever; ``None`` skips retrieval."""
    _resolved: dict[str, BaseChatModel] = field(default_factory=dict, init=False, repr=False)
    _call_slots: dict[int, asyncio.Semaphore] = field(default_factory=dict, init=False, repr=False)
    probed: dict[str, dict[str, Any] | None] = field(default_factory=dict, init=False, repr=False)
    """Output schemas seen by probing calls, by tool name (``None``: probed, nothing to show); see
    :mod:`planwerk.graph.nodes.probe`."""

    def call_slots(self, limit: int) -> asyncio.Semaphore:
        """The semaphore that bounds tool calls in flight over these deps (one per limit, shared by all runs)."""
        if limit not in self._call_slots:
            self._call_slots[limit] = asyncio.Semaphore(limit)
        return self._call_slots[limit]

    async def model_for(self, spec: str) -> BaseChatModel:
        """The bound model, or the one ``spec`` names, loaded off the event loop once for these deps.

        Resolved models are kept here, not only in the process-wide cache: a ``replay:`` spec loads a fresh
        replay each time, and the planner and the finalizer of one graph must share it.
        """
        if self.chat_model is not None:
            return self.chat_model
        return await self._loaded(spec)

    async def answer_model_for(self, spec: str) -> BaseChatModel:
        """The model that writes the answers: :attr:`answer_chat_model`, else :meth:`model_for` ``spec``."""
        if self.answer_chat_model is not None:
            return self.answer_chat_model
        return await self.model_for(spec)

    async def _loaded(self, spec: str) -> BaseChatModel:
        if spec not in self._resolved:
            # specs.load_chat_model, the module's attribute: tests patch it there
            self._resolved[spec] = await asyncio.to_thread(specs.load_chat_model, spec)
        return self._resolved[spec]
