"""Profiles: persona, allowed tools and corpus. Another domain is a new profile, not a new graph.

A profile is a built-in name (:data:`PROFILES`), ``auto`` (the default: ``travel`` with the bundled servers,
``generic`` with servers of your own MCP config) or the path of a TOML profile file (:class:`ProfileFile`, see
docs/profiles.md), so a new domain needs no code.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError, field_validator

from planwerk.checks.domain import NO_DOMAIN, AnswerDomain, Domain
from planwerk.core.language import Language
from planwerk.core.plan import PlanFormat
from planwerk.models.specs import PACKAGED_MATH_MODEL, PROFILE_MODEL, parse_model_spec
from planwerk.prompts import generic
from planwerk.prompts.math import MATH_PERSONA
from planwerk.prompts.travel import PERSONA as TRAVEL_PERSONA
from planwerk.prompts.travel import REFUSAL_OUT_OF_SCOPE, REFUSAL_OUT_OF_SCOPE_EN

AUTO = "auto"
"""The default profile spec: ``travel`` when the bundled servers are loaded (no MCP config given), ``generic``
when the tools come from an MCP config of the user's (they are not the travel ones)."""


@dataclass(frozen=True)
class Profile:
    """What the agent is for."""

    name: str
    persona: str
    """The system prompt's first part: who the assistant is and what it refuses."""
    answer_persona: str | None = None
    """The finalizer's system prompt once a tool call has delivered, when it differs from :attr:`persona`: who the
    assistant is without the rule for declining (declining is the planner's decision; a finalizer shown the refusal
    sentence copied it although results were there). ``None``: :attr:`persona`."""
    allowed_tools: frozenset[str] | None = None
    """Tool names plans may use (enforced by the plan check); ``None`` allows every loaded tool."""
    corpus: str | None = "default"
    """Which retrieval corpus to search: ``default`` is the packaged one, a path is a folder or file of documents,
    ``None`` disables retrieval."""
    examples: str = "travel"
    """Which example library to choose few-shot examples from: a packaged one's name (``travel``, ``math``,
    ``generic``) or the absolute path of a JSON file of examples."""
    language: Language = "de"
    """The language of the protocol, the rules, the repair feedback and planwerk's own texts for this profile."""
    uses_dates: bool = True
    """Whether dates in the question are resolved in code and named in the planner's prompt (travel: yes; math: no,
    its numbers are not dates)."""
    approve: frozenset[str] = frozenset()
    """Tool names whose calls pause for a person's approval (besides tools a server marks destructive)."""
    refusals: Mapping[str, str] = field(default_factory=dict)
    """The profile's refusal by language code: the deterministic answer when the answer check failed twice and no
    tool ran and no retrieved chunk answers (an out-of-domain question); without one, a generic honest sentence."""
    answer_is_last_result: bool = False
    """Whether the answer is the last call's result (a calculation chain): the answer check then requires it,
    and the deterministic answer states it ("The result is 126.")."""
    sourced_numbers: bool = False
    """Whether a precise number (two decimals or more) a plan writes into an argument must come from the question,
    the conversation, the context or an earlier result (:mod:`planwerk.core.literals`). Travel: yes, coordinates
    come from ``geocode``; math: no, a constant such as 2.54 is the model's to write."""
    plan_format: PlanFormat = "json"
    """How the planner writes its plan (see :data:`PlanFormat`); the examples are shown in the same form."""
    every_question_number: bool = False
    """Whether a plan whose calls take some of the numbers the question states but not others is asked once per
    planning round whether those are further values, one call each
    (:func:`planwerk.core.literals.unused_question_numbers`). On for the generic profiles and profile files: a
    question about foreign tools often lists several values for one tool. Off for travel and math, whose questions
    state numbers no call takes (a budget, a word problem's data)."""
    names_in_question: bool = False
    """Whether a plan is asked once per planning round about what the question names by name and the plan leaves
    out: a loaded tool no call uses (:func:`planwerk.core.question_fit.unplanned_named_tools`), or an optional
    argument a call leaves out (:func:`planwerk.core.question_fit.unfilled_named_arguments`); and about a tool that
    shares clearly more words with the question than the plan's one tool
    (:func:`planwerk.core.question_fit.better_fitting_tool`). On for the generic
    profiles and profile files, where a question often asks for two tools' results or gives optional values; off
    for travel and math, whose examples show the chains and arguments their questions need."""
    extract_step: bool = False
    """Whether the planner may call the built-in ``extract`` step (:mod:`planwerk.core.extract`): typed values out
    of a result's text, read by a separate model call, so a later call can take them without the planner reading
    the text. On for the generic profiles and profile files."""
    approve_extracted: bool = True
    """Whether a call of a tool that acts waits for a person's approval when an argument comes from an
    ``extract`` of untrusted text (the interrupt names the value and where it came from)."""
    approve_unanchored: bool = True
    """Whether the calls of a plan anchored in nothing the person said (no planned tool shares a word with the
    question, none of its values is stated), written again after the check asked whether it was meant, wait for a
    person's approval naming the values the model chose. About where the values came from, not what the tool does:
    asked also where ``Context.approve_destructive`` is off."""
    plan_rounds: int = 0
    """How many more planning rounds a plan may ask for with ``"next_round": true`` (read first, then plan the rest
    from a summary of the results, :mod:`planwerk.core.rounds`); 0: plans are made in one round."""
    rounds_raw_text: bool = False
    """Whether a later round's planner sees the results' text (clipped); off: typed values only, so text planted in
    a result cannot change which tools are called."""
    probe_results: bool = False
    """Whether a tool that only reads (MCP ``readOnlyHint``), declares no output schema and needs no argument is
    called once before the first plan, so the catalog shows the fields of a real result; off: the catalog says its
    result fields are unknown."""
    model: str = "default"
    """The chat model spec of a run that names none (``Context.model`` is ``profile``): ``default`` is the packaged
    Qwen2.5-Coder-0.5B (:mod:`planwerk.models.specs` lists the forms)."""
    answer_model: str | None = None
    """The chat model spec that writes the answers (the first draft and its regeneration) of a run that names no
    model (``Context.model`` and ``Context.answer_model`` both ``profile``); ``None``: :attr:`model` writes them
    too. Planning, translation and extraction stay with :attr:`model`."""
    enforce_roots: bool = False
    """Whether a tool call whose arguments name a file outside its MCP server's configured ``roots`` is refused
    before it is sent (failure kind ``forbidden``; :mod:`planwerk.tools.paths` says what counts as a file
    argument). Off: roots are only offered to the servers, which may ignore them."""
    domain: Domain = NO_DOMAIN
    """What the answer checks know of the profile's domain (tool labels, condition words, field units, estimate
    flags; a profile file's ``[answers]`` table, :class:`~planwerk.checks.domain.AnswerDomain`)."""

    def persona_for_answer(self, delivered: bool) -> str:
        """The finalizer's system prompt: :attr:`answer_persona` when a call delivered (``delivered``) and the
        profile has one, else :attr:`persona`."""
        return self.answer_persona if delivered and self.answer_persona else self.persona


def packaged_domain(name: str) -> Domain:
    """The domain knowledge of a packaged profile: the ``[answers]`` table of ``data/profiles/<name>-answers.toml``."""
    text = resources.files("planwerk").joinpath("data").joinpath("profiles").joinpath(f"{name}-answers.toml")
    return Domain.parse(tomllib.loads(text.read_text(encoding="utf-8"))["answers"])


PROFILES: dict[str, Profile] = {
    # A trip planner also calculates budgets and distances: the travel profile may use the math tools too.
    "travel": Profile(
        name="travel",
        persona=TRAVEL_PERSONA,
        refusals={"de": REFUSAL_OUT_OF_SCOPE, "en": REFUSAL_OUT_OF_SCOPE_EN},
        sourced_numbers=True,
        domain=packaged_domain("travel"),
    ),
    "math": Profile(
        name="math",
        persona=MATH_PERSONA,
        corpus=None,
        examples="math",
        language="en",
        uses_dates=False,
        answer_is_last_result=True,
        # A calculation as Python arithmetic: twice the NESTFUL test score of JSON plans at a quarter of the tokens
        # with the 0.5B model (BENCHMARKS.md §2).
        plan_format="expression",
        # The 1.5B model plans calculations nearly three times as often right as the 0.5B one (NESTFUL test:
        # 22 % against 8 %, BENCHMARKS.md §2) at about a third of its speed on a CPU; a wrong number is the costlier
        # failure here. Travel keeps the 0.5B model: the 1.5B passed fewer of the travel set's questions (22 of 36
        # against 29 at c6f53e9, BENCHMARKS.md §12) at 1.7 times the time a question.
        model=PACKAGED_MATH_MODEL,
    ),
    # Any tools: no domain of its own, no corpus (the travel corpus would answer questions about other things).
    # German like the project's other texts; generic-en is the same profile with the English protocol.
    "generic": Profile(
        name="generic",
        persona=generic.PERSONA_DE,
        answer_persona=generic.ANSWER_PERSONA_DE,
        corpus=None,
        examples="generic",
        language="de",
        refusals=generic.REFUSALS,
        extract_step=True,
        every_question_number=True,
        names_in_question=True,
    ),
    "generic-en": Profile(
        name="generic-en",
        persona=generic.PERSONA_EN,
        answer_persona=generic.ANSWER_PERSONA_EN,
        corpus=None,
        examples="generic",
        language="en",
        refusals=generic.REFUSALS,
        extract_step=True,
        every_question_number=True,
        names_in_question=True,
    ),
}

PROFILE_FILE_SUFFIX = ".toml"
"""Profile files are TOML (multi-line personas read well there)."""


def auto_profile_name(mcp_config: str | os.PathLike[str] | None) -> str:
    """What ``auto`` stands for: ``travel`` with the bundled servers (``mcp_config`` empty), ``generic`` with a
    config of the user's (its tools are not the travel ones; ``--profile travel`` still picks travel there)."""
    return "travel" if not mcp_config else "generic"


def get_profile(spec: str, *, mcp_config: str | os.PathLike[str] | None = None) -> Profile:
    """The profile ``spec`` names: a built-in name, ``auto`` (see :func:`auto_profile_name`, which needs the run's
    ``mcp_config``) or the path of a TOML profile file. ``ValueError`` naming the known ones otherwise, or saying
    what is wrong with the file."""
    if spec == AUTO:
        spec = auto_profile_name(mcp_config)
    if spec in PROFILES:
        return PROFILES[spec]
    if is_profile_path(spec):
        return load_profile_file(spec)
    known = ", ".join([AUTO, *sorted(PROFILES)])
    raise ValueError(
        f"unknown profile {spec!r}; known profiles: {known}, or the path of a {PROFILE_FILE_SUFFIX} profile file"
    )


def is_profile_path(spec: str) -> bool:
    """Whether ``spec`` names a profile file rather than a built-in profile (it ends in ``.toml`` or has a slash)."""
    return spec.endswith(PROFILE_FILE_SUFFIX) or "/" in spec or os.sep in spec


# --- profile files ----------------------------------------------------------------------------------------------

ToolName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Text = Annotated[str, StringConstraints(min_length=1)]


class ProfileFile(BaseModel):
    """The contents of a profile file (TOML). Every key but ``persona`` is optional; unknown keys are errors.

    Paths (``examples``, ``corpus``) are relative to the profile file's folder.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Text | None = None
    """Shown in logs; default: the file name without ``.toml``."""
    persona: Text = Field(description="the system prompt's first part: who the assistant is and what it refuses")
    language: Language = "en"
    """The language of planwerk's protocol and texts for this profile (answers follow the question's language)."""
    allowed_tools: list[ToolName] | None = None
    """The tools plans may use; omitted: every loaded tool."""
    approve: list[ToolName] = []
    """Tools whose calls wait for a person's approval (besides those a server marks destructive)."""
    examples: Text = "generic"
    """A packaged example library (``generic``, ``travel``, ``math``) or a JSON file of examples."""
    corpus: Text | None = None
    """A folder or file of documents to retrieve from, ``default`` for the packaged travel corpus; omitted: none."""
    uses_dates: bool = True
    """Resolve dates in the question in code and name today's date in the planner's prompt."""
    answer_is_last_result: bool = False
    """The answer is the last call's result (calculation chains)."""
    sourced_numbers: bool = False
    """Precise numbers in a plan's arguments must come from the question, the context or earlier results."""
    plan_format: PlanFormat = "json"
    """``json`` plans, or ``expression``: one arithmetic expression compiled into the calls (calculation tools)."""
    every_question_number: bool = True
    """Ask a plan once whether numbers of the question that no call takes, while calls take others, are further
    values (one call each)."""
    names_in_question: bool = True
    """Ask a plan once about a tool, or a call once about an optional argument, that the question names by its name
    and the plan leaves out."""
    model: Text = "default"
    """The chat model spec for runs that name none: ``default``, ``qwen2.5-coder-1.5b``, ``hf:...``, ``gguf:...``,
    ``endpoint:...``."""
    answer_model: Text | None = None
    """The chat model spec that writes the answers for runs that name no model; omitted: ``model``."""
    refusals: dict[Language, Text] = {}
    """The sentence for an out-of-domain question, by language; default: the generic refusal."""
    answer_persona: Text | None = None
    """The finalizer's system prompt once a tool has delivered (the persona without its rule for declining);
    omitted: ``persona``."""
    enforce_roots: bool = False
    """Refuse tool calls whose arguments name a file outside the MCP server's ``roots`` (kind ``forbidden``)."""
    extract_step: bool = True
    """Offer the planner the built-in ``extract`` step (typed values out of a result's text, read apart)."""
    approve_extracted: bool = True
    """Calls of tools that act wait for approval when an argument comes from an ``extract``; false relaxes it."""
    approve_unanchored: bool = True
    """Calls of a plan anchored in nothing the person said, written again after the check asked, wait for approval;
    false relaxes it."""
    answers: AnswerDomain = AnswerDomain()
    """The domain's knowledge for the answer checks (``[answers]``: tool labels, condition words, field units, …)."""
    plan_rounds: int = Field(default=0, ge=0, le=3)
    """More planning rounds a plan may ask for with ``"next_round": true`` (0 to 3)."""
    rounds_raw_text: bool = False
    """Later rounds see the results' text (clipped); false: typed values only."""
    probe_results: bool = False
    """Call read-only tools without arguments or output schema once, to show their result fields."""

    @field_validator("model", "answer_model")
    @classmethod
    def _model_spec(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if value.strip() == PROFILE_MODEL:
            raise ValueError(f"{PROFILE_MODEL!r} would name the profile itself; expected a model spec such as default")
        parse_model_spec(value)  # ValueError naming the accepted forms
        return value.strip()


class ExampleEntry(BaseModel):
    """One example of an examples file: a question and the plan that answers it."""

    model_config = ConfigDict(extra="allow")

    question: Text
    plan: dict[str, Any]


_EXAMPLES_ADAPTER: TypeAdapter[list[ExampleEntry]] = TypeAdapter(list[ExampleEntry])


def load_profile_file(path: str | os.PathLike[str]) -> Profile:
    """Read, validate and convert a TOML profile file; ``ValueError`` naming the file, the field and what was
    expected. Cached while the file is unchanged (the nodes ask for the run's profile many times)."""
    file = Path(path).expanduser().resolve()
    try:
        stat = file.stat()
    except OSError as error:
        raise ValueError(f"profile file {path}: cannot read it ({error.strerror or error})") from None
    if not file.is_file():
        raise ValueError(f"profile file {path}: not a file; expected a {PROFILE_FILE_SUFFIX} profile file")
    return _load_profile_file(str(file), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _load_profile_file(path: str, mtime_ns: int, size: int) -> Profile:
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as error:
        raise ValueError(f"profile file {path}: cannot read it ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ValueError(f"profile file {path}: not UTF-8 text; expected a TOML file") from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"profile file {path}: not valid TOML ({error})") from None
    try:
        parsed = ProfileFile.model_validate(data)
    except ValidationError as error:
        raise ValueError(f"profile file {path}: {_problems(error)}") from None
    return Profile(
        name=parsed.name or file.stem,
        persona=parsed.persona,
        answer_persona=parsed.answer_persona,
        allowed_tools=frozenset(parsed.allowed_tools) if parsed.allowed_tools is not None else None,
        corpus=_corpus(parsed.corpus, file),
        examples=_examples(parsed.examples, file),
        language=parsed.language,
        uses_dates=parsed.uses_dates,
        approve=frozenset(parsed.approve),
        refusals=dict(parsed.refusals) or dict(generic.REFUSALS),
        answer_is_last_result=parsed.answer_is_last_result,
        sourced_numbers=parsed.sourced_numbers,
        plan_format=parsed.plan_format,
        every_question_number=parsed.every_question_number,
        names_in_question=parsed.names_in_question,
        model=parsed.model,
        answer_model=parsed.answer_model,
        enforce_roots=parsed.enforce_roots,
        extract_step=parsed.extract_step,
        approve_extracted=parsed.approve_extracted,
        approve_unanchored=parsed.approve_unanchored,
        domain=Domain.parse(parsed.answers),
        plan_rounds=parsed.plan_rounds,
        rounds_raw_text=parsed.rounds_raw_text,
        probe_results=parsed.probe_results,
    )


def _problems(error: ValidationError) -> str:
    """Pydantic's errors as ``field: message`` (``extra_forbidden`` says which keys are allowed)."""
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "top level"
        if item["type"] == "extra_forbidden" and len(item["loc"]) == 1:
            message = f"unknown key; expected one of {', '.join(ProfileFile.model_fields)}"
        elif item["type"] == "missing":
            message = "missing; it is required"
        else:
            message = item["msg"]
        problems.append(f"{where}: {message}")
    return "; ".join(problems)


def _corpus(corpus: str | None, file: Path) -> str | None:
    if corpus is None or corpus == "default":
        return corpus
    where = (file.parent / Path(corpus).expanduser()).resolve()
    if not where.exists():
        raise ValueError(f"profile file {file}: corpus: {where} does not exist; expected a folder or file of documents")
    return str(where)


def _examples(examples: str, file: Path) -> str:
    packaged = resources.files("planwerk.prompts").joinpath("examples", f"{examples}.json")
    if "/" not in examples and not examples.endswith(".json") and packaged.is_file():
        return examples
    where = (file.parent / Path(examples).expanduser()).resolve()
    try:
        text = where.read_text(encoding="utf-8")
    except OSError as error:
        names = ", ".join(sorted(p.name.removesuffix(".json") for p in _packaged_libraries()))
        raise ValueError(
            f"profile file {file}: examples: cannot read {where} ({error.strerror or error}); expected a JSON file "
            f"of examples or a packaged library ({names})"
        ) from None
    try:
        _EXAMPLES_ADAPTER.validate_python(json.loads(text))
    except (ValueError, ValidationError) as error:
        detail = _problems(error) if isinstance(error, ValidationError) else str(error)
        raise ValueError(f"profile file {file}: examples: {where}: {detail}") from None
    return str(where)


def _packaged_libraries() -> list[Any]:
    return [p for p in resources.files("planwerk.prompts").joinpath("examples").iterdir() if p.name.endswith(".json")]
