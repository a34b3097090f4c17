"""A chat model that shows another model's reply rendered, streamed as far as the rendering has settled.

An answer by reference is decoded as text with placeholders (``{wx.temp}``) that planwerk writes out. A chat that
streamed the raw tokens would show placeholders; one that waited for the rendering would show nothing until the
model is done. :class:`RenderingChatModel` sits between: it reads the model's tokens (the model's own run is tagged
so that LangGraph's ``messages`` stream skips it), and streams, under its own run, the rendering of the part of the
reply that later tokens cannot change (the caller's ``settle``). Its reply is the whole rendering; the reply as the
model wrote it is kept in ``response_metadata[WRITTEN_KEY]`` (a repair prompt shows the model its own text).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManager, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata, add_usage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig

WRITTEN_KEY = "planwerk_written"
"""The ``response_metadata`` key of a :class:`RenderingChatModel` reply that holds the reply as the model wrote it."""


class RenderingChatModel(BaseChatModel):
    """``model``'s reply passed through ``render``; while it decodes, ``render(settle(text so far))`` streams (on the
    async path, which the graph takes; a synchronous call gets the whole rendering at once)."""

    model: Runnable[Any, Any]
    """The model that writes (bound to its grammar where it has one)."""
    render: Callable[[str], str]
    """The reply as the model wrote it → the text a person reads."""
    settle: Callable[[str], str]
    """A partly decoded reply → its longest prefix whose rendering no later token changes."""
    model_tags: Sequence[str] = ()
    """Tags of the inner model's run (``nostream``: its raw tokens are not what a chat should show)."""

    @property
    def _llm_type(self) -> str:
        return "planwerk-rendering"

    def _inner_config(
        self, run_manager: AsyncCallbackManagerForLLMRun | CallbackManagerForLLMRun | None
    ) -> RunnableConfig:
        config: RunnableConfig = {"tags": list(self.model_tags)}
        if run_manager is not None:
            # The inner run is this run's child (an LLM run manager has no get_child): tracing and LangGraph's
            # stream handler see it, and its tags keep it out of the messages stream.
            child = CallbackManager(handlers=[], parent_run_id=run_manager.run_id)
            child.set_handlers(run_manager.inheritable_handlers)
            child.add_tags(run_manager.inheritable_tags)
            child.add_metadata(run_manager.inheritable_metadata)
            config["callbacks"] = child
        return config

    def _result(self, reply: Any) -> ChatResult:
        written = reply.text if isinstance(reply, BaseMessage) else str(reply)
        usage = reply.usage_metadata if isinstance(reply, AIMessage) else None
        message = AIMessage(self.render(written), response_metadata={WRITTEN_KEY: written}, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._result(self.model.invoke(messages, config=self._inner_config(run_manager)))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._result(await self.model.ainvoke(messages, config=self._inner_config(run_manager)))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        stream = _RenderedStream(self.render, self.settle)
        async for chunk in self.model.astream(messages, config=self._inner_config(run_manager)):
            if (piece := stream.add(chunk)) is not None:
                yield piece
        yield stream.last()


class _RenderedStream:
    """The rendered text shown so far of one reply being decoded."""

    def __init__(self, render: Callable[[str], str], settle: Callable[[str], str]) -> None:
        self.render, self.settle = render, settle
        self.written = ""
        self.shown = ""
        self.usage: UsageMetadata | None = None

    def _piece(self, rendered: str, **fields: Any) -> ChatGenerationChunk | None:
        # A rendering that does not extend what was shown cannot be taken back from a stream: the final message
        # (the caller's rendering of the whole reply, under the same id) corrects it.
        delta = rendered[len(self.shown) :] if rendered.startswith(self.shown) else ""
        if not delta and not fields:
            return None
        self.shown += delta
        return ChatGenerationChunk(message=AIMessageChunk(content=delta, **fields))

    def add(self, chunk: Any) -> ChatGenerationChunk | None:
        """The next piece to show after the model's ``chunk`` (``None``: nothing settled yet)."""
        self.written += chunk.text if isinstance(chunk, BaseMessage) else str(chunk)
        if isinstance(chunk, AIMessageChunk) and chunk.usage_metadata:
            self.usage = add_usage(self.usage, chunk.usage_metadata) if self.usage else chunk.usage_metadata
        return self._piece(self.render(self.settle(self.written)))

    def last(self) -> ChatGenerationChunk:
        """The rest of the rendering, with the reply as written and the model's usage."""
        piece = self._piece(
            self.render(self.written), response_metadata={WRITTEN_KEY: self.written}, usage_metadata=self.usage
        )
        assert piece is not None
        return piece
