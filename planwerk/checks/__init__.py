"""The answer checks: is an answer grounded, honest about failures, in the question's language, about what was
asked? A table of small rules (:data:`RULES`) over one typed input; per-language words are data
(``planwerk/checks/words/<language>.toml``), a domain's knowledge is profile data (:class:`Domain`, a profile
file's ``[answers]`` table). Pure, except :func:`build_answer_check`, which reads the gazetteer and the analyzer.

Stable entry points (other modules call only these):

- ``build_answer_check(question, calls=…, hits=…, today=…, plan=…, output_schemas=…, …) -> AnswerCheck``: the check
  of one question's answers, from a run's records; ``check(answer) -> Report``.
- ``check_answer(answer, sources, settings, constrained=False) -> Report``: the rules on one answer (``sources``
  from :func:`collect_sources`, ``settings`` a :class:`CheckSettings`); ``constrained``: the answer was decoded
  under the answer grammar (answers by reference), so the rules it guarantees (``Rule.by_construction``: numbers,
  dates, clock times) are skipped; ``AnswerCheck(answer, constrained=…)`` the same.
- ``Report.ok``; ``Report.problems``: :class:`Problem` s, each with ``kind`` (:data:`ProblemKind`), the
  offending ``claim`` and ``message(language)`` (the problem in words).

Rules: ``empty``, ``form`` (repetitive, raw JSON), ``grounded`` (numbers with units, clock times and dates are in the
results, chunks, question or conversation; a time inside an ISO datetime counts; skipped for a constrained answer),
``withheld`` (no number a failed call would have delivered), ``places`` (places and countries are in a source), the
failed service (named; nothing it would have delivered stated), ``pairs`` (a value stated for a place is one of that
place's own, each asked place gets its own), the last result, repeats (echo, restated, refused),
``language``, ``referent`` (the asked place and days, a follow-up's carried over), ``off_topic``, ``estimate``,
``action`` (no action claimed without a successful call of a tool that acts), ``context`` (source and facts),
``unstated`` (last resort).
"""

from planwerk.checks.assemble import (
    AnswerCheck,
    build_answer_check,
    consumed_calls,
    estimated_results,
    last_result_of,
    reported_calls,
)
from planwerk.checks.context import KeyFacts
from planwerk.checks.domain import NO_DOMAIN, AnswerDomain, Domain
from planwerk.checks.rules import (
    RULES,
    CheckSettings,
    GroundingReport,
    Problem,
    ProblemKind,
    Report,
    Rule,
    check_answer,
)
from planwerk.checks.sources import DOWN_KINDS, Sources, Withheld, collect_sources, withheld_calls

__all__ = [
    "DOWN_KINDS",
    "NO_DOMAIN",
    "RULES",
    "AnswerCheck",
    "AnswerDomain",
    "CheckSettings",
    "Domain",
    "GroundingReport",
    "KeyFacts",
    "Problem",
    "ProblemKind",
    "Report",
    "Rule",
    "Sources",
    "Withheld",
    "build_answer_check",
    "check_answer",
    "collect_sources",
    "consumed_calls",
    "estimated_results",
    "last_result_of",
    "reported_calls",
    "withheld_calls",
]
