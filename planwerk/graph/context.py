"""The runtime context: per-assistant and per-run configuration (not state). Studio renders it as a form.

Each field's description lives in ``field(metadata={"description": ...})``: that is what reaches the JSON schema
the LangGraph server hands to Studio (``graph.get_context_jsonschema()``); attribute docstrings do not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, get_args

MAX_PLAN_SAMPLES = 16
"""The most plans one self-consistency call samples (a batch this wide is already slow on a CPU)."""

ProfileName = Literal["auto", "travel", "math", "generic", "generic-en"]
"""``auto`` and the names in :data:`planwerk.profiles.PROFILES`, spelled out so the schema lists them (a test keeps
both equal); a profile may also be the path of a profile file."""

PlanFormatChoice = Literal["profile", "json", "expression"]
"""How the planner writes plans: the profile's own way, or one of :data:`planwerk.core.plan.PlanFormat`."""

AnswerResults = Literal["values", "words", "json"]
"""How the answer model is shown the tool results (see :attr:`Context.answer_results`)."""


@dataclass(kw_only=True)
class Context:
    """How a run behaves. Every field can be set per assistant and per run."""

    model: str = field(
        default="profile",
        metadata={
            "description": "Chat model spec: 'profile' (the profile's model: the packaged Qwen2.5-Coder-1.5B for "
            "math, the 0.5B one for the others), 'default' (the packaged Qwen2.5-Coder-0.5B), 'qwen2.5-coder-1.5b', "
            "'qwen2.5-coder-0.5b-q4_0' (the 0.5B requantized to Q4_0), 'hf:<hub id or folder>', "
            "'gguf:<file>[#<tokenizer>]', 'endpoint:<url>' (an OpenAI-compatible server) or "
            "'replay:<file>' (recorded replies, for tests and demos). On a server, files only from the operator's "
            "PLANWERK_MODEL_DIRS and endpoints only from PLANWERK_ALLOWED_ENDPOINTS."
        },
    )
    answer_model: str = field(
        default="profile",
        metadata={
            "description": "The chat model that writes the answers (planning, translation and extraction stay with "
            "'model'): 'profile' (the profile's answer model where 'model' is 'profile' too, else 'model') or a "
            "model spec of the forms 'model' takes, under the same operator rules."
        },
    )
    profile: ProfileName | str = field(
        default="auto",
        metadata={
            "description": "The profile: persona, language, the tools plans may use, tools needing approval, "
            "examples and the retrieval corpus. A built-in name, 'auto' (travel with the bundled servers, generic "
            "with an MCP config of your own) or a TOML profile file (on a server, one in the operator's "
            "PLANWERK_PROFILE_DIRS)."
        },
    )
    mcp_config: str | None = field(
        default=None,
        metadata={
            "description": 'An {"mcpServers": ...} JSON file; on a server, one in the operator\'s folder '
            "PLANWERK_MCP_CONFIGS (by name), never inline JSON. Empty: the bundled travel and math servers."
        },
    )
    retrieval_k: int = field(default=4, metadata={"description": "How many chunks to retrieve for a question."})
    catalog_max_tokens: int = field(
        default=12_000,
        metadata={
            "description": "Largest tool catalog in the planner's prompt, in tokens (estimated): with more tools, "
            "those most relevant to the question are shown and a catalog_capped event says how many were left out."
        },
    )
    translate_queries: bool = field(
        default=True,
        metadata={
            "description": "Search the corpus with the question translated into the profile's language (one short "
            "model call) when it was asked in another; the default embedder is English-only. Not with a "
            "multilingual embedder (embedding_model='embeddinggemma'), which matches across languages."
        },
    )
    retrieval_threshold: float | None = field(
        default=None,
        metadata={"description": "Minimum relevance (0 to 1) of a retrieved chunk; empty: the calibrated default."},
    )
    max_plan_attempts: int = field(
        default=3,
        metadata={"description": "Planner calls per question before planwerk gives an honest failure answer."},
    )
    tool_timeout_s: float | None = field(
        default=None,
        metadata={
            "description": "Timeout of one tool call, in seconds, for every tool; empty: each MCP server's own "
            "configured timeout (its 'timeout', default 30 s)."
        },
    )
    tool_retry_attempts: int = field(
        default=2,
        metadata={
            "description": "Attempts of a tool call whose failure is transient (timeout, server unavailable), "
            "the first included; 1 disables retries."
        },
    )
    approve_destructive: bool = field(
        default=True,
        metadata={
            "description": "Pause before calls to tools a server marks destructive (MCP destructiveHint) or the "
            "profile lists in its approve set, and wait for a person's approval."
        },
    )
    max_concurrency: int = field(default=8, metadata={"description": "Tool calls in flight at once."})
    max_argument_bytes: int = field(
        default=1_000_000,
        metadata={
            "description": "Largest resolved arguments of one tool call, as JSON bytes (estimated while $refs "
            "resolve); a call over it fails with kind ref instead of building the arguments."
        },
    )
    history_max_tokens: int = field(
        default=2000,
        metadata={"description": "The conversation is trimmed to about this many tokens before it reaches the model."},
    )
    constrained_decoding: bool = field(
        default=True,
        metadata={
            "description": "Generate plans under a grammar where the model supports it: the plan's JSON schema, or "
            "the expressions the loaded tools can compute (plan_format expression)."
        },
    )
    plan_examples: int = field(
        default=2,
        metadata={
            "description": "How many solved example plans the planner is shown, chosen per question by similarity "
            "from the profile's library (small models copy the shape of what they are shown)."
        },
    )
    plan_format: PlanFormatChoice = field(
        default="profile",
        metadata={
            "description": "How the planner writes a plan: 'profile' (the profile's own way: expressions for math, "
            "JSON for the others), 'json' (steps of calls passing results on with $ref) or 'expression' (one "
            "arithmetic expression whose operators and function calls become the tool calls; for calculation tools "
            "that return one number: the 0.5B model solved 16 of 196 NESTFUL test samples so, 8 with JSON plans)."
        },
    )
    retry_temperature: float = field(
        default=0.7,
        metadata={
            "description": "Sampling temperature of a planner call after a rejected or failed plan, and of the "
            "answer written again after a rejected one (greedy decoding would repeat the same reply); plan retries "
            "also see other examples. 0 keeps retries greedy."
        },
    )
    retry_top_p: float = field(
        default=0.8,
        metadata={
            "description": "Nucleus cut-off of those retries: only the most likely next tokens that together hold "
            "this share of the probability are sampled (1 samples from all of them). 0.8 is the value Qwen "
            "publishes in its Qwen2.5 instruct models' generation settings; the long tail of a small model's "
            "distribution is noise."
        },
    )
    answer_repeat_penalty: float = field(
        default=1.05,
        metadata={
            "description": "Penalty on the tokens an answer in words already produced (its last 64, never the "
            "prompt's), on the local models (llama.cpp, transformers): a positive logit is divided by it. 1.05 is "
            "the value Qwen publishes in its Qwen2.5 instruct models' generation settings; 1 switches it off. Plans, "
            "answers by reference and extractions decode without it."
        },
    )
    plan_samples: int = field(
        default=1,
        metadata={
            "description": "Self-consistency: how many plans the planner samples in one batched generation; the "
            "valid ones run side by side and the answer is the last result most of them reach. 1 switches it off. "
            "Used only where the answer is the last result (the math profile) and no planned tool is destructive "
            "or needs approval (running several plans would repeat side effects)."
        },
    )
    sample_temperature: float = field(
        default=0.7,
        metadata={"description": "Sampling temperature of the self-consistency plans (see plan_samples)."},
    )
    embedding_model: str = field(
        default="default",
        metadata={
            "description": "The retrieval embedder: 'default' (the packaged all-MiniLM-L6-v2, English-only), "
            "'embeddinggemma' (multilingual EmbeddingGemma-300M, installed by "
            "scripts/setup.d/50-embeddinggemma.sh; for German or mixed-language corpora) or a sentence-transformers "
            "folder (on a server, one in the operator's PLANWERK_MODEL_DIRS). Each embedder keeps its own index. "
            "The planner's example ranking keeps the default."
        },
    )
    answer_results: AnswerResults = field(
        default="values",
        metadata={
            "description": "How the answer model reads the tool results: 'values' (default: per call its values "
            "typed and clipped, numbers with units and dates in the question's language; a result's free text is "
            "withheld and marked as data, so an instruction a third party planted in a file or message never "
            "reaches the answer prompt), 'words' (one sentence per reported call, as the deterministic answer "
            "writes them) or 'json' (the raw call log, free text included). Use the planner's extract step to read "
            "values out of free text."
        },
    )
    answer_by_reference: bool = field(
        default=False,
        metadata={
            "description": "Answers by reference (default off: with it on, the packaged 0.5B model on transformers "
            "answered two time questions with 'The time is' and no value, which the check, trusting the grammar, "
            "let pass; tests/test_profiles_real_model.py): where the model decodes under a grammar (the local "
            "transformers and llama.cpp models, an endpoint that takes grammars; constrained_decoding on), it is "
            "shown the results as placeholders ({call.field} = value) and writes placeholders instead of numbers, "
            "dates and times, under a grammar that admits only this run's placeholders and the question's and the "
            "conversation's digits (the context's when no call delivered); planwerk writes each value with its unit "
            "and dates in the question's language, and the answer check skips the number, date and time rules "
            "this construction guarantees. Placeholders in any model's answer are written out. A model without "
            "grammars (a replay script, an endpoint without grammar support) answers in plain text, checked in "
            "full. Off (the default): every model answers in plain text, checked in full."
        },
    )
    answer_quotes: bool = field(
        default=True,
        metadata={
            "description": "Quotations (default on): a result's free text (a file, a message) that no later call "
            "took is offered to the answer model as a placeholder, never its text; where the "
            "model writes the placeholder, planwerk inserts the text as a fenced quotation (markdown inside is not "
            "rendered), so 'what does the file say' gets the file's words, marked as quoted. The answer check and "
            "later model calls never read a quotation. Off: a free text is only ever shown as its length."
        },
    )
    today: str | None = field(
        default=None,
        metadata={
            "description": "ISO date (YYYY-MM-DD) the prompt calls today; empty: the real date "
            "(set it for reproducible runs)."
        },
    )
    learn_examples: bool = field(
        default=False,
        metadata={
            "description": "Save a plan whose calls all succeeded as a few-shot example for similar questions "
            "($PLANWERK_HOME/examples.jsonl), so the planner learns from its own clean runs."
        },
    )

    def __post_init__(self) -> None:
        # A zero or negative limit would silently disable timeouts or planning: say so at once.
        for name in (
            "tool_timeout_s",
            "tool_retry_attempts",
            "max_concurrency",
            "max_argument_bytes",
            "max_plan_attempts",
            "retrieval_k",
            "history_max_tokens",
            "plan_examples",
            "catalog_max_tokens",
        ):
            value = getattr(self, name)
            if name == "tool_timeout_s" and value is None:  # each server's own timeout
                continue
            # inf and nan pass "<= 0": inf as a timeout overflows asyncio's timer, nan disables every comparison.
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"Context.{name} must be a positive number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"Context.{name} must be a finite number, got {value!r}")
        # An attempt count of 1.5 means nothing; an engine would round it one way or the other without a word.
        if isinstance(self.plan_samples, bool) or not isinstance(self.plan_samples, int):
            raise ValueError(f"Context.plan_samples must be a whole number, got {self.plan_samples!r}")
        if not 1 <= self.plan_samples <= MAX_PLAN_SAMPLES:
            raise ValueError(f"Context.plan_samples must be 1 to {MAX_PLAN_SAMPLES}, got {self.plan_samples!r}")
        threshold = self.retrieval_threshold
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, int | float) or not math.isfinite(threshold)
        ):
            raise ValueError(f"Context.retrieval_threshold must be a finite number or null, got {threshold!r}")
        sample_temperature = self.sample_temperature
        if isinstance(sample_temperature, bool) or not isinstance(sample_temperature, int | float):
            raise ValueError(f"Context.sample_temperature must be a number, got {sample_temperature!r}")
        if not 0 < sample_temperature <= 2:
            raise ValueError(f"Context.sample_temperature must be above 0 and at most 2, got {sample_temperature!r}")
        for name in ("tool_retry_attempts", "plan_examples"):
            if not isinstance(getattr(self, name), int):
                raise ValueError(f"Context.{name} must be a whole number, got {getattr(self, name)!r}")
        # 0 is greedy; above 2 a small model writes noise, not another plan.
        temperature = self.retry_temperature
        if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not 0 <= temperature <= 2:
            raise ValueError(f"Context.retry_temperature must be a number from 0 to 2, got {temperature!r}")
        top_p = self.retry_top_p
        if isinstance(top_p, bool) or not isinstance(top_p, int | float) or not 0 < top_p <= 1:
            raise ValueError(f"Context.retry_top_p must be a number above 0 and at most 1, got {top_p!r}")
        penalty = self.answer_repeat_penalty
        if isinstance(penalty, bool) or not isinstance(penalty, int | float) or not 1 <= penalty <= 2:
            raise ValueError(f"Context.answer_repeat_penalty must be a number from 1 (none) to 2, got {penalty!r}")
        if self.plan_format not in get_args(PlanFormatChoice):
            raise ValueError(f"Context.plan_format must be 'profile', 'json' or 'expression', got {self.plan_format!r}")
        for name in ("approve_destructive", "answer_by_reference", "answer_quotes"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"Context.{name} must be true or false, got {getattr(self, name)!r}")
