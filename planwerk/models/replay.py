"""A chat model that replays recorded replies: demos, tests and bug reports without a model.

``replay:<file>`` names a JSON array of strings; each model call returns the next one. Asking for more than the
file holds raises :class:`ReplayExhaustedError` with a clear message. Token counts are estimated from the text
(word pieces), so the metadata of a replayed run is comparable across engines. Sampling options (``temperature``,
``seed``: :meth:`ReplayChatModel.with_sampling` or ``bind``) are accepted, recorded in ``call_options`` and ignored.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import Field, PrivateAttr

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class ReplayExhaustedError(RuntimeError):
    """The replay model was asked for more replies than it was given."""


def estimate_tokens(text: str) -> int:
    """A rough token count (words and punctuation): what a replayed call would have cost."""
    return len(_TOKEN.findall(text))


def _message_text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)


class ReplayChatModel(BaseChatModel):
    """Returns ``responses`` in order, one per call, across all threads of the process."""

    responses: list[str]
    source: str = "inline"
    """Where the responses came from (file path), for error messages."""
    _position: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    """Every prompt the model was given, in order (tests inspect what the engine sent)."""
    call_options: list[dict[str, Any]] = Field(default_factory=list)
    """The options of every call (``temperature``, ``seed``, ...), in order, beside ``prompts``; they change nothing."""

    @classmethod
    def from_file(cls, path: str | Path) -> ReplayChatModel:
        """Load a JSON array of strings; raises ``ValueError`` saying what was expected."""
        file = Path(path)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ValueError(f"replay file not found: {file}") from None
        except json.JSONDecodeError as error:
            raise ValueError(f"replay file {file} is not JSON ({error}); expected a JSON array of strings") from None
        if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
            raise ValueError(f"replay file {file} must hold a JSON array of strings, one reply per model call")
        return cls(responses=data, source=str(file))

    @classmethod
    def of(cls, responses: Sequence[str]) -> ReplayChatModel:
        """A replay model over inline replies."""
        return cls(responses=list(responses))

    @property
    def _llm_type(self) -> str:
        return "planwerk-replay"

    @property
    def calls(self) -> int:
        """How many replies were handed out."""
        return self._position

    def with_sampling(
        self, temperature: float, *, seed: int | None = None, top_p: float | None = None
    ) -> Runnable[Any, Any]:
        """This model (the same position in the replies) with the sampling options bound: recorded, not used."""
        options = {} if top_p is None else {"top_p": top_p}
        return self.bind(temperature=temperature, seed=seed, **options)

    def _next(self, messages: list[BaseMessage], options: dict[str, Any] | None = None) -> str:
        with self._lock:
            if self._position >= len(self.responses):
                raise ReplayExhaustedError(
                    f"replay model ({self.source}) was asked for reply {self._position + 1}, "
                    f"but holds only {len(self.responses)}"
                )
            text = self.responses[self._position]
            self._position += 1
            self.prompts.append(list(messages))
            self.call_options.append(dict(options or {}))
            return text

    def _usage(self, messages: list[BaseMessage], text: str) -> UsageMetadata:
        prompt = sum(estimate_tokens(_message_text(m)) for m in messages)
        completion = estimate_tokens(text)
        return UsageMetadata(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = self._next(messages, kwargs)
        message = AIMessage(content=text, usage_metadata=self._usage(messages, text))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        text = self._next(messages, kwargs)
        pieces = re.findall(r"\S+\s*|\s+", text) or [""]
        for index, piece in enumerate(pieces):
            usage = self._usage(messages, text) if index == len(pieces) - 1 else None
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece, usage_metadata=usage))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
