"""The composition root: the one place a :class:`~planwerk.graph.context.Context` becomes the graph's collaborators.

Both faces build their graph from :func:`open_deps`: the LangGraph server's factory once per run
(:func:`planwerk.serving.server.make_graph`) and :class:`planwerk.agent.Agent` once per ``async with``. So the model,
the MCP tools and the retriever are resolved the same way whoever asks:

- the **model** from ``Context.model``, or the profile's model when it says ``profile``
  (:func:`~planwerk.graph.run_context.model_spec_of`), loaded off the event loop (loaded models are cached per process;
  a ``replay:`` spec starts a fresh replay on every load), unless the caller hands in a model object;
- the **tools** from ``Context.mcp_config`` (the bundled servers when empty), one MCP session per server for as
  long as the context manager is open, unless the caller hands in a tool source it owns;
- the **retriever** of the profile's corpus, loaded once per process off the event loop; a failed load is logged
  and remembered for :data:`RETRIEVER_RETRY_S`, and runs go on without retrieval meanwhile.

Reading a thread needs none of this: a graph built with ``Deps()`` reads checkpoints without tools or a model.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from langchain_core.language_models import BaseChatModel

from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.run_context import answer_model_spec_of, model_spec_of, names_answer_model
from planwerk.models import specs
from planwerk.profiles import get_profile
from planwerk.rag.base import Retriever
from planwerk.tools.base import ToolSource
from planwerk.tools.config import load_config

log = logging.getLogger(__name__)

RETRIEVER_RETRY_S = 300.0
"""After a failed retriever load, runs go without retrieval for this long before the next attempt."""


class _Default(enum.Enum):
    PROFILE_RETRIEVER = "the profile's shared retriever"


PROFILE_RETRIEVER: Final = _Default.PROFILE_RETRIEVER
"""``open_deps(retriever=...)``'s default: the profile's corpus, through the per-process cache."""
RetrieverChoice = Retriever | None | Literal[_Default.PROFILE_RETRIEVER]
"""What ``open_deps(retriever=...)`` takes: a retriever, ``None`` (no retrieval) or :data:`PROFILE_RETRIEVER`."""


@contextlib.asynccontextmanager
async def open_deps(
    context: Context,
    *,
    chat_model: BaseChatModel | None = None,
    answer_chat_model: BaseChatModel | None = None,
    tools: ToolSource | None = None,
    retriever: Retriever | Literal[_Default.PROFILE_RETRIEVER] | None = PROFILE_RETRIEVER,
) -> AsyncIterator[Deps]:
    """The graph's collaborators for ``context``, open for the life of the ``async with`` block.

    ``chat_model`` replaces the model ``context.model`` names and writes the answers too, unless the run names an
    answer model of its own (``Context.answer_model``); ``answer_chat_model`` replaces the model that writes them;
    ``tools`` replaces the MCP servers of ``context.mcp_config`` (the caller owns its lifetime); ``retriever=None``
    disables retrieval and a retriever object replaces the profile's. Raises what the model spec or the MCP config
    raise (``ValueError`` and kin) before anything is yielded.
    """
    # Blocking work (config file, model, index) runs in threads, concurrently: the event loop stays free for the
    # server's other runs, and a cold start costs the slowest load, not their sum.
    spec, answer_spec = model_spec_of(context), answer_model_spec_of(context)
    # A given model writes the answers of its plans too, unless the run names an answer model of its own.
    own_answer_model = answer_chat_model is None and (
        names_answer_model(context) if chat_model is not None else answer_spec != spec
    )
    config, model, answer_model, found = await asyncio.gather(
        _load_config(context) if tools is None else _given(None),
        _load_model(spec) if chat_model is None else _given(chat_model),
        _load_model(answer_spec) if own_answer_model else _given(answer_chat_model),
        shared_retriever(context) if retriever is PROFILE_RETRIEVER else _given(retriever),
    )
    answer_model = answer_model or model
    if tools is not None:
        yield Deps(chat_model=model, answer_chat_model=answer_model, tools=tools, retriever=found)
        return
    # Imported here, not at the top: reading a thread must not pay for the MCP stack (and tests patch it).
    from planwerk.tools.mcp import open_tools

    async with open_tools(config) as opened:
        yield Deps(chat_model=model, answer_chat_model=answer_model, tools=opened, retriever=found)


async def _given(value: Any) -> Any:
    """``value`` as an awaitable, so given and resolved collaborators share one ``gather``."""
    return value


async def _load_config(context: Context) -> Any:
    return await asyncio.to_thread(load_config, context.mcp_config)


async def _load_model(spec: str) -> BaseChatModel:
    return await asyncio.to_thread(specs.load_chat_model, spec)  # the module's: tests patch it there


# --- the retriever, once per process --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Loaded:
    """A retriever load's outcome: the retriever, or the time it failed."""

    retriever: Retriever | None
    failed_at: float | None = None


_retrievers: dict[tuple[str, str], _Loaded] = {}
_retriever_lock = threading.Lock()


def _load_retriever_blocking(corpus: str, embedding_model: str = "default") -> Retriever | None:
    """Load (or reuse) the retriever of ``corpus`` embedded by ``embedding_model``; ``None`` (logged) when loading
    fails. Runs in a thread."""
    key = (corpus, embedding_model)
    with _retriever_lock:  # concurrent first runs load once; later runs find the cache
        cached = _retrievers.get(key)
        if cached is not None and (cached.failed_at is None or time.monotonic() - cached.failed_at < RETRIEVER_RETRY_S):
            return cached.retriever
        try:
            # Imported here, not at the top: the index needs faiss, which a run without retrieval never loads.
            from planwerk.rag.retriever import load_retriever

            model = None if embedding_model == "default" else embedding_model
            retriever = load_retriever(None if corpus == "default" else [Path(corpus)], model=model)
        except Exception as error:  # a run without retrieval beats no run at all
            log.warning(
                "retriever for corpus %r could not be loaded, runs go on without retrieval "
                "(next attempt in %.0f s): %s: %s",
                corpus,
                RETRIEVER_RETRY_S,
                type(error).__name__,
                error,
            )
            _retrievers[key] = _Loaded(None, failed_at=time.monotonic())
            return None
        _retrievers[key] = _Loaded(retriever)
        return retriever


async def shared_retriever(context: Context) -> Retriever | None:
    """The profile's retriever, loaded once per process off the event loop; ``None`` without a corpus."""
    corpus = get_profile(context.profile, mcp_config=context.mcp_config).corpus
    if corpus is None:
        return None
    return await asyncio.to_thread(_load_retriever_blocking, corpus, context.embedding_model)
