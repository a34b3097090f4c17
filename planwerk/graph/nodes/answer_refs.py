"""The finalizer's answer by reference: slots of this run, the prompt that shows them, the grammar, the rendering.

Where the run's model can decode under an EBNF grammar (:class:`~planwerk.models.base.SupportsPlanGrammar`: the
local HF models, an endpoint that takes a ``grammar`` field) and ``Context.constrained_decoding`` and
``Context.answer_by_reference`` are on, the answer model is shown the results as placeholders with their values and
decodes under :func:`planwerk.core.answers.grammar.answer_grammar`: its numbers, dates and times from results are
placeholders planwerk renders. Any other model (a replay script, a LangChain model without grammars) is prompted
as before, but its answer is rendered too: a placeholder that names a slot is written out, anything else stays.

Quotations (``Context.answer_quotes``, on by default, with or without answers by reference): a result's free text
(a file, a message) that no later call of the plan took is a ``quote`` slot. The model is shown its placeholder,
never its text, and where it writes the placeholder planwerk inserts the text as a fenced quotation: "what
does the file say" has an answer, and what a third party wrote reaches the user marked as quoted data, never as
the model's words or instructions to it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage
from langgraph.constants import TAG_NOSTREAM

from planwerk.checks import consumed_calls
from planwerk.core.answers.grammar import answer_grammar, known_numbers
from planwerk.core.answers.render import RenderedAnswer, ValueStyle, render_answer, settled_text
from planwerk.core.answers.slots import QUOTE_SLOT_LIMITS, Slot, collect_slots
from planwerk.core.language import Language
from planwerk.graph.context import Context
from planwerk.graph.nodes.common import history_before_question, prompt_today, question_of
from planwerk.graph.state import AgentState
from planwerk.models.base import SupportsPlanGrammar
from planwerk.models.rendering import RenderingChatModel
from planwerk.profiles import Profile
from planwerk.prompts.answer_refs import build_reference_messages, reference_texts
from planwerk.prompts.render import trim_history
from planwerk.prompts.texts import texts_for

if TYPE_CHECKING:
    from planwerk.graph.deps import Deps

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReferenceAnswer:
    """How one answer is written by reference."""

    slots: Mapping[str, Slot]
    style: ValueStyle
    model: Any | None = None
    """The answer model bound to the answer grammar; ``None`` when the model cannot be constrained."""
    messages: list[BaseMessage] | None = None
    """The prompt with placeholders (only with :attr:`model`: an unconstrained model gets the usual prompt)."""
    grammar: str | None = None

    @property
    def quotes(self) -> dict[str, Slot]:
        """The quotable free texts among :attr:`slots`."""
        return {name: slot for name, slot in self.slots.items() if slot.kind == "quote"}

    @property
    def constrained(self) -> bool:
        """Whether the answer is decoded under the grammar."""
        return self.model is not None

    def render(self, text: str) -> RenderedAnswer:
        """``text`` with its placeholders written out."""
        return render_answer(text, self.slots, self.style)

    def rendering(self, model: Any) -> RenderingChatModel:
        """The answer model (the grammar-bound one where there is one, else ``model``) with its placeholders written
        out, streaming the rendering as far as it has settled; the raw placeholder tokens do not stream."""
        return RenderingChatModel(
            model=self.model if self.model is not None else model,
            render=lambda text: self.render(text).text,
            settle=lambda text: settled_text(text, self.slots),
            model_tags=(TAG_NOSTREAM,),
        )


def _result_slot(calls: Sequence[Mapping[str, Any]], slots: Mapping[str, Slot]) -> str | None:
    """The slot of the last successful call's value: the call id itself, or its one number."""
    done = [c for c in calls if c.get("status") == "ok"]
    if not done:
        return None
    call_id = str(done[-1].get("id"))
    if call_id in slots and slots[call_id].kind != "quote":
        return call_id
    numbers = [n for n, s in slots.items() if n.startswith(call_id + ".") and s.kind == "number"]
    return numbers[0] if len(numbers) == 1 else None


def answer_slots(state: AgentState, context: Context, deps: Deps) -> dict[str, Slot]:
    """The slots an answer may name: every value of the run's successful calls when ``Context.answer_by_reference``
    is on, and (``Context.answer_quotes``) the free texts of calls whose results no later call took: a text a later
    call read (an extract, a summary) was read for that call, not for the user."""
    calls = state.get("calls", [])
    schemas = {name: spec.output_schema for name, spec in deps.tools.specs.items()}
    slots = collect_slots(calls, schemas) if context.answer_by_reference else {}
    if context.answer_quotes:
        taken = consumed_calls(state.get("plan"))
        unread = [call for call in calls if str(call.get("id")) not in taken]
        quotes = collect_slots(unread, schemas, QUOTE_SLOT_LIMITS)
        slots |= {name: slot for name, slot in quotes.items() if slot.kind == "quote"}
    return slots


def reference_answer(
    state: AgentState,
    context: Context,
    profile: Profile,
    language: Language,
    deps: Deps,
    model: Any,
    *,
    answer_is_result: bool = False,
    key: tuple[str, str] | None = None,
) -> ReferenceAnswer | None:
    """The run's answer by reference, or ``None`` when it names no slot (``Context.answer_by_reference`` off and no
    quotable text). Only quotes when ``answer_by_reference`` is off: the usual prompt lists them
    (:func:`planwerk.prompts.answer_refs.quote_rule`) and the answer is rendered. Blocking: the grammar compiles
    here; run it in a worker thread. ``answer_is_result``: the last call's value answers the question (its
    placeholder is named in the instructions); ``key``: the context's key sentence and its source."""
    slots = answer_slots(state, context, deps)
    if not context.answer_by_reference:
        return ReferenceAnswer(slots, reference_texts(language).style) if slots else None
    calls = state.get("calls", [])
    style = reference_texts(language).style
    if not (context.constrained_decoding and isinstance(model, SupportsPlanGrammar)):
        return ReferenceAnswer(slots, style)
    history = history_before_question(state)
    hits = state.get("hits", [])
    user = [str(v) for k, v in (state.get("user") or {}).items() if k != "raw" and isinstance(v, str | int | float)]
    # Digits the model may write itself: the question's and the conversation's; the retrieved context's only when
    # no call delivered (a chunk is quoted, not referenced: its sentences are prose, and the answer check reads them
    # as today). With results beside it, a chunk's numbers were stray digits for the answer (measured on travel w5:
    # a chunk's "10" became "10 km/h" beside a forecast).
    sources = [question_of(state), *(str(m.content) for m in history), *user]
    if not any(call.get("status") == "ok" for call in calls):
        sources += [str(hit.get("text", "")) for hit in hits] + [str(hit.get("source", "")) for hit in hits]
    grammar = answer_grammar(slots, known_numbers(sources), result_alone=answer_is_result)
    try:
        bound = model.with_plan_grammar(grammar)
    except ValueError as error:  # xgrammar refused the grammar: answer unconstrained, as before
        log.warning("answer grammar not usable, answering without it: %s", error)
        return ReferenceAnswer(slots, style)
    messages = build_reference_messages(
        persona=profile.persona_for_answer(any(call.get("status") == "ok" for call in calls)),
        question=question_of(state),
        today=prompt_today(context, profile),
        calls=calls,
        slots=slots,
        hits=hits,
        history=trim_history(history, context.history_max_tokens),
        texts=texts_for(profile),
        language=language,
        result_slot=_result_slot(calls, slots) if answer_is_result else None,
        key=key,
    )
    return ReferenceAnswer(slots, style, model=bound, messages=messages, grammar=grammar)
