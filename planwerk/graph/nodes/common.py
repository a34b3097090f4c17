"""Helpers the nodes share: the profile and model of a run, usage accounting, the conversation before the question."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import date
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.func import task
from langgraph.runtime import Runtime

from planwerk.checks import AnswerCheck, build_answer_check
from planwerk.core.answers.render import QUOTE_WITHHELD, without_quotes
from planwerk.core.extract import EXTRACT_TOOL, extract_spec, returns_text
from planwerk.core.language import detect_language
from planwerk.core.tools import ToolSpec
from planwerk.graph.context import Context
from planwerk.graph.nodes.chat import is_conversation, question_index, question_text
from planwerk.graph.state import AgentState
from planwerk.models.replay import estimate_tokens
from planwerk.profiles import Profile
from planwerk.prompts.answer_refs import QUOTE_RULES
from planwerk.prompts.grounding import REPAIR_INSTRUCTIONS
from planwerk.prompts.texts import ANSWER_INSTRUCTIONS, texts_for
from planwerk.tools.base import ToolSource

if TYPE_CHECKING:
    from planwerk.graph.deps import Deps
    from planwerk.prompts.texts import PromptTexts


def context_of(runtime: Runtime[Context]) -> Context:
    """The run's context; the defaults when the caller passed none (``graph.ainvoke(...)`` without ``context=``)."""
    return runtime.context if runtime.context is not None else Context()


def person_texts(question: str, profile: Profile) -> PromptTexts:
    """The texts a person reads during a run (a question asked back, the chat's progress lines) in the language of
    ``question`` (:func:`planwerk.core.language.detect_language`; the profile's when the question shows none).
    What the planner reads stays in the profile's language: an English question to a German profile is asked back
    in English (issue 32)."""
    return texts_for(detect_language(question, default=profile.language))


def today_of(context: Context) -> date:
    """The date the prompt calls today."""
    return date.fromisoformat(context.today) if context.today else date.today()


def prompt_today(context: Context, profile: Profile) -> date | None:
    """The date the prompts call today; ``None`` for a profile without dates (its prompts name no date at all)."""
    return today_of(context) if profile.uses_dates else None


def visible_specs(tools: ToolSource, profile: Profile) -> dict[str, ToolSpec]:
    """The tools the planner is shown: the loaded ones the profile allows, and the built-in ``extract`` step where
    the profile offers it (:func:`builtin_specs`)."""
    allowed = profile.allowed_tools
    shown = {name: spec for name, spec in tools.specs.items() if allowed is None or name in allowed}
    return {**shown, **builtin_specs(shown, profile)} if shown else shown


def builtin_specs(loaded: Mapping[str, ToolSpec], profile: Profile) -> dict[str, ToolSpec]:
    """planwerk's own tools for ``profile`` beside the ``loaded`` ones: ``extract`` when the profile offers it, a
    loaded tool returns text to read (:func:`returns_text`) and no loaded tool has that name (a server's tool wins).

    Without a tool that returns text the step has nothing to read: on a function-calling leaderboard's tools (no
    annotations, values all in the question) the packaged 0.5B model planned ``extract`` over text it wrote itself
    (the prompt's date, a formula, the question) in 24 replies to 18 entries, and five entries ended with no plan."""
    if not profile.extract_step or EXTRACT_TOOL in loaded or not any(returns_text(s) for s in loaded.values()):
        return {}
    return {EXTRACT_TOOL: extract_spec(texts_for(profile).extract_description)}


def changing_tools(deps: Deps, profile: Profile) -> set[str]:
    """The tools declared to change something: MCP ``destructiveHint``, or the profile's ``approve`` list."""
    return {name for name, spec in deps.tools.specs.items() if spec.destructive} | set(profile.approve)


def answer_check_for(state: AgentState, context: Context, profile: Profile, deps: Deps) -> AnswerCheck:
    """The check every answer to the current question goes through, the planner's own ``final`` included
    (blocking: gazetteer and date parsing; run it in a worker thread)."""
    # What else the user said: earlier turns and answers to questions asked back are sources too. Earlier answers
    # were drawn from earlier calls: where this question's calls delivered, they ground nothing (a follow-up for
    # another day was answered with the earlier day's values from the conversation, BENCHMARKS.md §12 session 8).
    history = history_before_question(state)
    delivered = any(call.get("status") == "ok" for call in state.get("calls", []))
    asked = [str(m.content) for m in history if not (delivered and isinstance(m, AIMessage))]
    asked += [str(v) for k, v in (state.get("user") or {}).items() if k != "raw" and isinstance(v, str | int | float)]
    return build_answer_check(
        question_of(state),
        calls=state.get("calls", []),
        hits=state.get("hits", []),
        asked=asked,
        today=prompt_today(context, profile),
        plan=state.get("plan"),
        output_schemas={name: spec.output_schema for name, spec in deps.tools.specs.items()},
        answer_is_last_result=profile.answer_is_last_result,
        retrieval_query=state.get("retrieval_query"),
        refusals=tuple(profile.refusals.values()),
        acting={name for name, spec in deps.tools.specs.items() if spec.acts} | profile.approve,
        changing=changing_tools(deps, profile),
        earlier=[str(m.content) for m in history if isinstance(m, HumanMessage)],
        language=detect_language(question_of(state), default=profile.language),
        domain=profile.domain,
        instructions=(*ANSWER_INSTRUCTIONS, *QUOTE_RULES, *REPAIR_INSTRUCTIONS),
    )


def usage_of(reply: AIMessage, prompt: list[BaseMessage]) -> dict[str, float]:
    """Model call counters from a reply (estimated when the model reports none)."""
    usage = reply.usage_metadata
    if usage:
        prompt_tokens, completion_tokens = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    else:
        prompt_tokens = sum(estimate_tokens(str(m.content)) for m in prompt)
        completion_tokens = estimate_tokens(str(reply.content))
    return {"llm_calls": 1, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}


def history_before_question(state: AgentState) -> list[BaseMessage]:
    """The conversation before the current question (earlier turns of the thread): questions, answers and
    questions asked back, without the progress, plan and tool messages a chat shows
    (:mod:`planwerk.graph.nodes.chat`). Quotations in earlier answers are withheld."""
    messages = list(state.get("messages", []))
    index = question_index(messages)
    earlier = [m for m in messages[: len(messages) - 1 if index is None else index] if is_conversation(m)]
    return [_unquoted(m) for m in earlier]


def _unquoted(message: BaseMessage) -> BaseMessage:
    """An answer without the quotations planwerk inserted (:func:`planwerk.core.answers.render.without_quotes`): a
    quoted file is a third party's text, which no later model call of the thread reads (the planner plans before
    any result is read, and so it stays)."""
    if not isinstance(message, AIMessage) or not isinstance(message.content, str):
        return message
    content = without_quotes(message.content, QUOTE_WITHHELD)
    return message if content == message.content else message.model_copy(update={"content": content})


def question_of(state: AgentState) -> str:
    """The current question, derived from the thread's messages (:func:`planwerk.graph.nodes.chat.question_index`):
    the state keeps it once, as the message it came in."""
    return question_text(state.get("messages", []))


def reply_text(reply: Any) -> str:
    """A model reply's text content."""
    return reply.text if hasattr(reply, "text") else str(reply)


def counters(usage: Mapping[str, float]) -> dict[str, int]:
    """Usage counters as integers."""
    return {key: int(usage.get(key, 0)) for key in ("llm_calls", "prompt_tokens", "completion_tokens")}


_MARKERS_RUN: set[str] = set()
"""Tokens of model-call markers whose body ran in this process (a replayed marker's token never gets here)."""


@task(name="planwerk_model_call")
def _model_call_marker(token: str) -> bool:
    """Durably note that a node is about to call the model (its write is checkpointed as soon as it returns)."""
    _MARKERS_RUN.add(token)
    return True


async def lost_model_calls() -> int:
    """Call right before a model call in a node: how many model calls earlier runs of this node started and then
    lost (a process killed or a crash before the node finished), so ``llm_calls`` counts them too.

    Each model call is preceded by a LangGraph task; a re-run of the node gets the tasks that already finished from
    the checkpoint instead of running them again, so every replayed marker is one model call made before. (Their
    tokens are unknown and not counted.)
    """
    lost = 0
    while True:
        token = uuid.uuid4().hex
        await _model_call_marker(token)
        if token in _MARKERS_RUN:
            _MARKERS_RUN.discard(token)
            return lost
        lost += 1
