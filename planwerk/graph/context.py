"""The runtime context: per-assistant and per-run configuration (not state). Studio renders it as a form."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(kw_only=True)
class Context:
    """How a run behaves. Every field can be set per assistant and per run."""

    model: str = "default"
    """Chat model spec: ``default``, ``hf:<id or folder>``, ``gguf:<file>[#<tokenizer>]``, ``endpoint:<url>``,
    ``replay:<file>``."""
    profile: str = "travel"
    """Which profile (persona, allowed tools, corpus) to use."""
    mcp_config: str | None = None
    """Path of an ``{"mcpServers": ...}`` JSON file; the bundled servers when empty."""
    retrieval_k: int = 4
    """How many chunks to retrieve."""
    retrieval_threshold: float | None = None
    """Minimum relevance of a chunk; the retriever's calibrated default when empty."""
    max_plan_attempts: int = 3
    """Planner calls per question before planwerk gives an honest failure answer."""
    tool_timeout_s: float = 30.0
    """Timeout of one tool call."""
    max_concurrency: int = 8
    """Tool calls in flight at once."""
    history_max_tokens: int = 2000
    """The conversation is trimmed to this many tokens (approximate) before it reaches the model."""
    constrained_decoding: bool = True
    """Generate plans under a JSON schema when the model supports it."""
    today: str | None = None
    """ISO date the prompt calls "today"; the real date when empty (set it for reproducible runs)."""
    learn_examples: bool = False
    """Save a plan whose calls all succeeded as a few-shot example for similar questions
    (``$PLANWERK_HOME/examples.jsonl``), so the planner learns from its own clean runs."""

    def __post_init__(self) -> None:
        # A zero or negative limit would silently disable timeouts or planning: say so at once.
        for name in ("tool_timeout_s", "max_concurrency", "max_plan_attempts", "retrieval_k", "history_max_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"Context.{name} must be a positive number, got {value!r}")
