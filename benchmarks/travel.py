"""The travel+context benchmark: German and English questions through the real graph, offline.

Each question (``benchmarks/data/travel_bench/questions.json``) names its category (weather in one city, two cities,
date ranges, activity spots, parks, context questions from the retrieval corpus, out-of-domain, follow-ups), the
tools a good plan calls, and the facts a good answer states. :func:`run_travel` asks every question through
:class:`planwerk.agent.Agent` (profile ``travel``, the packaged corpus, the bundled travel and math MCP servers) and
scores per question:

- **plan valid**: a plan passed the plan check;
- **expected tools**: the tools the run called (failed calls included) are one of the question's tool sets;
- **grounded**: the final answer passes :func:`planwerk.checks.check_answer` against the run's call
  results, retrieved chunks and question (computed here again, independent of the finalizer's own verdict);
- **model grounded**: the answer a user reads is the model's own (first or regenerated), not the deterministic
  fallback the finalizer builds when the model's answers fail the check twice, nor the fixed no-plan text;
- **facts**: every expected fact group has one alternative in the answer (text, a number with rounding, or a name
  from the run's results);
- **strict** (issue 30): the answer is right for its referent (:mod:`benchmarks.honest`: the question's
  language, its places named, its days in the calls and the answer, no other referent's date or place, the calls'
  argument values); a wrong answer does not pass;
- where the answer came from: kept as the model wrote it, regenerated, or the fallback;
- model calls, tokens, plan attempts and seconds.

Offline: the travel server talks to :class:`RecordedUpstream`, a local HTTP server that answers with real responses
of Nominatim, Open-Meteo and Overpass recorded in January 2026 (``benchmarks/data/travel_bench/upstream``, see its
NOTICE). What was not recorded is answered with HTTP 503, as an unreachable service would: a question about it must
get an honest "unavailable" answer. "Today" is pinned to :data:`TODAY` for the prompt and the server, so the
recorded forecast days are the forecast.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from langchain_core.language_models import BaseChatModel

from planwerk.checks import GroundingReport
from planwerk.graph.context import AnswerResults

DATA = Path(__file__).parent / "data" / "travel_bench"
TODAY = "2026-01-16"
"""The day the recorded forecast starts: the prompt's and the travel server's "today"."""
CATEGORIES: tuple[str, ...] = (
    "weather",
    "two_cities",
    "date_range",
    "spots",
    "parks",
    "context",
    "out_of_domain",
    "follow_up",
)
"""The question categories, in the order the report lists them."""


# --- questions --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """One benchmark question with what a good run does."""

    qid: str
    text: str
    language: str
    category: str
    tools: tuple[frozenset[str], ...]
    """Acceptable sets of tools called (any one); ``frozenset()`` means no tool at all (context, refusal)."""
    facts: tuple[tuple[Any, ...], ...]
    """Fact groups; each needs one alternative in the answer: a text, ``{"number": x, "unit": u}`` (a number
    rounded or truncated as the answer check does) or ``{"result": key}`` (a value of ``key`` in a call result)."""
    plan: Mapping[str, Any]
    """A reference plan (what a perfect planner writes); :func:`replay_script` replays it."""
    answer: str
    """A reference answer that passes the answer check and holds the facts."""
    history: tuple[Mapping[str, Any], ...] = ()
    """Earlier turns of the same thread (follow-ups): ``{"text", "plan", "answer"}`` each, asked first."""
    note: str = ""
    """Why the question is in the set (e.g. "not recorded: the answer must say the service is unavailable")."""


def _question(raw: Mapping[str, Any]) -> Question:
    tools = raw.get("tools", [])
    # One set written as a flat list, several as a list of lists.
    sets = [tools] if not tools or isinstance(tools[0], str) else tools
    question = Question(
        qid=str(raw["id"]),
        text=str(raw["text"]),
        language=str(raw["language"]),
        category=str(raw["category"]),
        tools=tuple(frozenset(s) for s in sets),
        facts=tuple(tuple(group) if isinstance(group, list) else (group,) for group in raw.get("facts", [])),
        plan=raw["plan"],
        answer=str(raw["answer"]),
        history=tuple(raw.get("history", [])),
        note=str(raw.get("note", "")),
    )
    for group in question.facts:  # a malformed fact fails at load time, not after a slow model run
        for fact in group:
            fact_present("", fact)
    return question


def load_questions(
    limit: int | None = None, *, category: str | None = None, ids: Sequence[str] | None = None
) -> list[Question]:
    """The packaged questions, optionally one ``category``, the given ``ids``, and the first ``limit``; ``ValueError``
    for an unknown category or id."""
    text = (DATA / "questions.json").read_text(encoding="utf-8")
    questions = [_question(raw) for raw in json.loads(text)["questions"]]
    if category is not None:
        if category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}; expected one of {', '.join(CATEGORIES)}")
        questions = [q for q in questions if q.category == category]
    if ids is not None:
        wanted = set(ids)
        if unknown := wanted - {q.qid for q in questions}:
            raise ValueError(
                f"unknown question id(s) {', '.join(sorted(unknown))}"
                + (f" in category {category!r}" if category is not None else "")
                + f"; expected ids such as {', '.join(q.qid for q in questions[:4])}"
            )
        questions = [q for q in questions if q.qid in wanted]
    return questions[:limit] if limit is not None else questions


# --- the recorded upstream --------------------------------------------------------------------------------------

PLACES: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("barcelona", "barcelone", "barcellona"), ("41.3825802_2.177073", "Barcelona, Catalunya")),
    **dict.fromkeys(("rom", "rome", "roma"), ("41.8933203_12.4829321", "Roma, Lazio, Italia")),
    **dict.fromkeys(("palma", "palma de mallorca", "mallorca"), ("39.5695818_2.6500745", "Palma, Illes Balears")),
}
"""Destination names (first part, case-folded) -> the recorded Nominatim coordinates' file key and a display name.
Only coordinates were recorded; the display names are written here."""

ACTIVITY_TAGS: dict[str, Callable[[Mapping[str, str]], bool]] = {
    "beach": lambda t: t.get("natural") == "beach",
    "sightseeing": lambda t: t.get("tourism") == "attraction" or "historic" in t or t.get("amenity") == "museum",
    "running": lambda t: t.get("leisure") == "park" or t.get("highway") == "pedestrian",
    "parks": lambda t: t.get("leisure") == "park",
}
"""What each activity's Overpass selectors match (``planwerk.tools.servers.travel.spots.SELECTORS``)."""

OVERPASS_FILES: dict[str, tuple[str, ...]] = {
    "beach": ("overpass_10el_2026-01-16T152158_fbe39af2.json",),
    "sightseeing": (
        "overpass_80el_2026-01-15T155550_bc85a7ff.json",
        "overpass_80el_2026-01-23T162732_7e642a72.json",
    ),
    "running": ("overpass_80el_2026-01-15T155654_0fd3bf5d.json",),
    # A running query's answer holds the parks (leisure=park) a parks query around the same point returns.
    "parks": ("overpass_80el_2026-01-16T151956_8f979496.json",),
}
"""Recorded Overpass answers by activity (Barcelona for all, Rome for sightseeing); hiking was never recorded."""

POINT_TOLERANCE_DEG = 0.1
"""How far (degrees) a weather request may be from a recorded point: Open-Meteo snaps to a grid of that size."""
AREA_TOLERANCE_KM = 25.0
"""How far a spots request may be from the middle of a recorded answer's elements and still be answered by it."""


def _upstream_file(name: str) -> Any:
    body = json.loads((DATA / "upstream" / name).read_text(encoding="utf-8"))
    if isinstance(body, dict):
        body.pop("_cached_at", None)  # the recorder's bookkeeping, not part of the response
    return body


def _haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 6371.0 * 2 * math.asin(math.sqrt(a))


def _position(element: Mapping[str, Any]) -> tuple[float, float] | None:
    where = element if element.get("lat") is not None else element.get("center") or {}
    if where.get("lat") is None or where.get("lon") is None:
        return None
    return float(where["lat"]), float(where["lon"])


class RecordedResponses:
    """The recorded bodies and the rules that pick one for a request (pure: no sockets; the stub calls it)."""

    def __init__(self) -> None:
        names = [p.name for p in (DATA / "upstream").iterdir() if p.name.endswith(".json")]
        self.coordinates = {
            key: _upstream_file(name)
            for name in names
            if name.startswith("nominatim-coords_") and (key := "_".join(name.split("_")[1:3]))
        }
        self.weather = [_upstream_file(name) for name in sorted(names) if name.startswith("open-meteo_")]

    def nominatim(self, query: str) -> tuple[int, Any]:
        """``/search?q=…``: the recorded coordinates of a known destination, else 503 (not recorded)."""
        first = query.split(",")[0].strip().casefold()
        place = PLACES.get(first) or PLACES.get(query.strip().casefold())
        if place is None:
            return 503, {"error": f"not recorded: Nominatim search for {query!r}"}
        key, display = place
        coords = self.coordinates[key]
        return 200, [{"lat": str(coords["lat"]), "lon": str(coords["lon"]), "display_name": display}]

    def open_meteo(self, params: Mapping[str, str]) -> tuple[int, Any]:
        """Forecast or archive: the requested days of a recorded body at a point within the grid tolerance."""
        try:
            lat, lon = float(params["latitude"]), float(params["longitude"])
            start, end = params["start_date"], params["end_date"]
        except (KeyError, ValueError):
            return 400, {"error": True, "reason": "latitude, longitude, start_date and end_date are required"}
        for body in self.weather:
            times: list[str] = body["daily"]["time"]
            near = abs(body["latitude"] - lat) <= POINT_TOLERANCE_DEG and abs(body["longitude"] - lon) <= (
                POINT_TOLERANCE_DEG
            )
            if near and times[0] <= start and end <= times[-1]:
                keep = [i for i, day in enumerate(times) if start <= day <= end]
                daily = {k: [v[i] for i in keep] for k, v in body["daily"].items()}
                return 200, {**body, "daily": daily}
        return 503, {"error": f"not recorded: Open-Meteo {lat},{lon} {start}..{end}"}

    def overpass(self, query: str) -> tuple[int, Any]:
        """The recorded elements of the query's activity within its radius of its point, nearest first."""
        from planwerk.tools.servers.travel.spots import SELECTORS

        activity = next((a for a, sels in SELECTORS.items() if all(s in query for s in sels)), None)
        around = re.search(r"around:(\d+),(-?[\d.]+),(-?[\d.]+)", query)
        limit = re.search(r"out center (\d+)", query)
        if activity is None or around is None:
            return 400, {"error": True, "reason": "not an Overpass query of the travel server"}
        radius_km, lat, lon = int(around[1]) / 1000, float(around[2]), float(around[3])
        for name in OVERPASS_FILES.get(activity, ()):
            elements = [(e, p) for e in _upstream_file(name)["elements"] if (p := _position(e)) is not None]
            middle = (statistics.fmean(p[0] for _, p in elements), statistics.fmean(p[1] for _, p in elements))
            if _haversine_km(lat, lon, *middle) > AREA_TOLERANCE_KM:
                continue
            matching = ACTIVITY_TAGS[activity]
            found = sorted(
                (
                    (_haversine_km(lat, lon, *p), e)
                    for e, p in elements
                    if matching(e.get("tags") or {}) and _haversine_km(lat, lon, *p) <= radius_km
                ),
                key=lambda pair: pair[0],
            )
            count = int(limit[1]) if limit else len(found)
            return 200, {"version": 0.6, "elements": [e for _, e in found[:count]]}
        return 503, {"error": f"not recorded: Overpass {activity} around {lat},{lon}"}


class _Handler(BaseHTTPRequestHandler):
    recorded: RecordedResponses
    requests: list[str]

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.requests.append(f"GET {url.path} {query}")
        if url.path == "/search":
            self._send(*self.recorded.nominatim(query.get("q", "")))
        elif url.path in ("/v1/forecast", "/v1/archive"):
            self._send(*self.recorded.open_meteo(query))
        else:
            self._send(404, {"error": True, "reason": f"no such path {url.path}"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        form = parse_qs(self.rfile.read(length).decode())
        query = form.get("data", [""])[0]
        self.requests.append(f"POST {self.path} {query!r}")
        self._send(*self.recorded.overpass(query))

    def log_message(self, format: str, *args: Any) -> None:  # the bench prints its own progress
        pass


@contextmanager
def recorded_upstream() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server answering as Nominatim, Open-Meteo and Overpass from the recorded responses; yields
    its base URL and the list of requests it receives."""
    requests: list[str] = []
    handler = type("RecordedHandler", (_Handler,), {"recorded": RecordedResponses(), "requests": requests})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()


def offline_config(base: str) -> dict[str, Any]:
    """The bundled travel and math servers, the travel server pointed at ``base``: no cache (every call replays),
    no HTTP retries (a missing recording is final), today pinned to :data:`TODAY`."""
    env = {
        "NOMINATIM_URL": f"{base}/search",
        "OPEN_METEO_FORECAST_URL": f"{base}/v1/forecast",
        "OPEN_METEO_ARCHIVE_URL": f"{base}/v1/archive",
        "OVERPASS_URL": f"{base}/api/interpreter",
        "PLANWERK_CACHE_DIR": "off",
        "PLANWERK_TODAY": TODAY,
        "PLANWERK_HTTP_RETRIES": "0",
    }
    return {
        "mcpServers": {
            "travel": {
                "command": "${PYTHON}",
                "args": ["-m", "planwerk.tools.servers.travel", "stdio"],
                "env": env,
                "timeout": 60,
            },
            "math": {"command": "${PYTHON}", "args": ["-m", "planwerk.tools.servers.math", "stdio"], "timeout": 30},
        }
    }


# --- scoring ----------------------------------------------------------------------------------------------------


def _fold(text: str) -> str:
    # Decimal commas read as points, so "13,6" in an answer matches the fact "13.6".
    return re.sub(r"(?<=\d),(?=\d)", ".", text).casefold()


def _result_values(value: Any, key: str) -> Iterator[str]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            if k == key and isinstance(v, str | int | float) and not isinstance(v, bool):
                yield str(v)
            else:
                yield from _result_values(v, key)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _result_values(item, key)


def fact_present(answer: str, fact: Any, calls: Sequence[Mapping[str, Any]] = ()) -> bool:
    """Whether ``answer`` states ``fact`` (one alternative of a fact group; see :attr:`Question.facts`)."""
    from planwerk.text.dates import find_date_claims
    from planwerk.text.numbers import UNITS, SourceNumber, find_numbers, number_grounded

    if isinstance(fact, str):
        return _fold(fact) in _fold(answer)
    if isinstance(fact, Mapping) and "number" in fact:
        unit = fact.get("unit")
        # A unit the check does not know would fail inside it: such a fact is a text fact, not a number fact.
        if unit is not None and unit not in UNITS:
            raise ValueError(f"unknown unit {unit!r} in fact {fact!r}; known: {', '.join(sorted(UNITS))}")
        source = SourceNumber(float(fact["number"]), unit)
        dates = [(c.start, c.end) for c in find_date_claims(answer)]
        return any(number_grounded(claim, [source]) for claim in find_numbers(answer, skip=dates))
    if isinstance(fact, Mapping) and "result" in fact:
        values = {
            v
            for call in calls
            if call.get("status") == "ok"
            for v in _result_values(call.get("result"), fact["result"])
        }
        folded = _fold(answer)
        return any(_fold(v) in folded for v in values if v.strip())
    raise ValueError(f"unknown fact {fact!r}: expected a text, {{'number': ...}} or {{'result': key}}")


def missing_facts(answer: str, question: Question, calls: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """The fact groups of ``question`` the answer does not state (each as its alternatives, for people)."""
    return [
        " | ".join(json.dumps(f, ensure_ascii=False) if not isinstance(f, str) else f for f in group)
        for group in question.facts
        if not any(fact_present(answer, fact, calls) for fact in group)
    ]


def check_grounded(
    answer: str,
    *,
    question: str,
    calls: Sequence[Mapping[str, Any]],
    hits: Sequence[Mapping[str, Any]],
    asked: Sequence[str] = (),
    plan: Mapping[str, Any] | None = None,
    output_schemas: Mapping[str, Mapping[str, Any] | None] | None = None,
    today: str = TODAY,
    retrieval_query: str | None = None,
    earlier: Sequence[str] = (),
) -> GroundingReport:
    """The finalizer's answer check (:func:`planwerk.checks.build_answer_check`) on a finished run: every
    number, date and place against the results, chunks and question; failed services named; a context answer's
    source and facts."""
    from planwerk.checks import build_answer_check
    from planwerk.core.language import detect_language
    from planwerk.profiles import PROFILES
    from planwerk.prompts.texts import ANSWER_INSTRUCTIONS

    check = build_answer_check(
        question,
        calls=calls,
        hits=hits,
        asked=asked,
        today=date.fromisoformat(today),
        plan=plan,
        output_schemas=output_schemas or {},
        retrieval_query=retrieval_query,
        refusals=tuple(PROFILES["travel"].refusals.values()),
        earlier=earlier,
        language=detect_language(question, PROFILES["travel"].language),
        domain=PROFILES["travel"].domain,
        instructions=ANSWER_INSTRUCTIONS,
    )
    return check(answer)


# --- results ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuestionResult:
    """What one question produced and how it scored."""

    qid: str
    category: str
    language: str
    question: str
    answer: str | None
    valid_plan: bool
    expected_tools: bool
    grounded: bool
    model_grounded: bool
    facts_ok: bool
    tools_called: tuple[str, ...] = ()
    expected: tuple[tuple[str, ...], ...] = ()
    missing_facts: tuple[str, ...] = ()
    grounding_problems: tuple[str, ...] = ()
    """The bench's own check of the final answer (kind: claim)."""
    finalizer_problems: tuple[str, ...] = ()
    """What the finalizer found wrong with the model's first answer (before regenerating)."""
    answer_source: str | None = None
    rejected: tuple[str, ...] = ()
    """Each answer the check rejected, with its problems (``answer_rejected`` events), to judge whether a correct
    answer was rejected (issue 30)."""
    strict_problems: tuple[str, ...] = ()
    """What makes the answer wrong for its referent (:func:`benchmarks.honest.strict_problems`)."""
    failed_calls: tuple[str, ...] = ()
    """``tool: kind: error`` of each failed call."""
    calls: tuple[str, ...] = ()
    """``tool {resolved arguments as JSON}`` of each call that ran, to see why one failed (a place, a date, a
    radius the recording does not cover)."""
    plan_errors: tuple[str, ...] = ()
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    plan_attempts: int = 0
    wall_s: float = 0.0
    error: str | None = None

    @property
    def passed(self) -> bool:
        """Everything right: valid plan, expected tools, grounded, the expected facts and right for its referent."""
        return self.valid_plan and self.expected_tools and self.grounded and self.facts_ok and self.strict

    @property
    def strict(self) -> bool:
        """Right for its referent: no :attr:`strict_problems`."""
        return not self.strict_problems

    @property
    def answer_kind(self) -> str:
        """Kept as written, regenerated or fallback (:func:`benchmarks.domains.answer_kind`)."""
        from benchmarks.domains import answer_kind

        return answer_kind(self.answer_source)


_SCORES = ("valid_plan", "expected_tools", "grounded", "model_grounded", "facts_ok", "strict", "passed")


@dataclass(frozen=True)
class Report:
    """A whole run."""

    model: str
    results: tuple[QuestionResult, ...]
    wall_s: float
    setup_s: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The figures as one JSON-able object: totals, by category, and the questions that did not pass."""

        def figures(group: Sequence[QuestionResult]) -> dict[str, Any]:
            n = max(len(group), 1)
            row: dict[str, Any] = {"questions": len(group)}
            for score in _SCORES:
                count = sum(bool(getattr(r, score)) for r in group)
                row[score] = count
                row[f"{score}_rate"] = round(count / n, 4)
            row["llm_calls_per_question"] = round(sum(r.llm_calls for r in group) / n, 3)
            row["seconds_per_question"] = round(sum(r.wall_s for r in group) / n, 3)
            return row

        by_category = {c: [r for r in self.results if r.category == c] for c in CATEGORIES}
        return {
            "benchmark": "travel",
            "model": self.model,
            "today": TODAY,
            **figures(self.results),
            "prompt_tokens_per_question": round(
                sum(r.prompt_tokens for r in self.results) / max(len(self.results), 1), 1
            ),
            "plan_attempts_per_question": round(
                sum(r.plan_attempts for r in self.results) / max(len(self.results), 1), 3
            ),
            "answer_sources": dict(
                sorted(
                    {
                        s: sum((r.answer_source or "none") == s for r in self.results)
                        for s in {r.answer_source or "none" for r in self.results}
                    }.items()
                )
            ),
            "answer_kinds": {
                kind: {
                    "answers": sum(r.answer_kind == kind for r in self.results),
                    "passed": sum(r.passed for r in self.results if r.answer_kind == kind),
                }
                for kind in ("kept", "regenerated", "fallback", "none")
            },
            "by_category": {c: figures(group) for c, group in by_category.items() if group},
            "failures": [
                {
                    "id": r.qid,
                    "category": r.category,
                    "failed": [s for s in _SCORES[:-1] if not getattr(r, s)],
                    "tools_called": list(r.tools_called),
                    "missing_facts": list(r.missing_facts),
                    "grounding_problems": list(r.grounding_problems),
                    "strict_problems": list(r.strict_problems),
                    "answer_source": r.answer_source,
                    "error": r.error,
                }
                for r in self.results
                if not (r.passed and r.model_grounded)
            ],
            "wall_s": round(self.wall_s, 3),
            "setup_s": round(self.setup_s, 3),
        } | dict(self.extra)


def result_json(result: QuestionResult) -> dict[str, Any]:
    """One question's result, JSON-able (a line of the ``--results`` JSONL file)."""
    return asdict(result) | {"passed": result.passed, "strict": result.strict, "answer_kind": result.answer_kind}


def results_json(report: Report) -> list[dict[str, Any]]:
    """Every question's result, JSON-able (for a JSONL file next to the summary)."""
    return [result_json(result) for result in report.results]


# --- runs -------------------------------------------------------------------------------------------------------

Tick = Callable[[QuestionResult], None]


def _problem_text(problem: Any) -> str:
    detail = problem.claim or problem.tool or problem.source
    return f"{problem.kind}: {detail}" if detail else str(problem.kind)


async def ask_question(question: Question, agent: Any) -> QuestionResult:
    """Ask ``question`` (after its history, in one thread) through ``agent`` and score the last turn."""
    from benchmarks.domains import rejected_answers
    from benchmarks.honest import Referent, load_referents, strict_problems
    from planwerk.tools.servers.travel.spots import ACTIVITY_NAMES

    thread = uuid.uuid4().hex
    for turn in question.history:
        await agent.ask(str(turn["text"]), thread_id=thread)
    started = time.perf_counter()
    reply = await agent.ask(question.text, thread_id=thread)
    wall = time.perf_counter() - started
    state = await agent.state(thread)
    # This turn's calls only: a follow-up's thread also holds the earlier turn's (the log is reset per turn).
    calls = list(state.get("calls", []))
    hits = list(state.get("hits", []))
    plan = state.get("plan")
    answer = reply.answer or ""
    # A run that waits for a person has no final metadata: its model calls are the turn's usage in the state.
    meta = reply.metadata or dict(state.get("usage") or {})
    called = tuple(sorted({str(c["tool"]) for c in calls if c.get("status") != "skipped"}))
    # The conversation before this question (a follow-up's earlier turn) is a source, as the finalizer has it.
    history = [str(m.content) for m in state.get("messages", [])[:-2]]
    schemas = {name: spec.output_schema for name, spec in agent.tools_specs.items()}
    report = check_grounded(
        answer,
        question=question.text,
        calls=calls,
        hits=hits,
        asked=history,
        plan=plan,
        output_schemas=schemas,
        retrieval_query=state.get("retrieval_query"),
        earlier=[str(turn["text"]) for turn in question.history],
    )
    source = meta.get("answer_source")
    strict = strict_problems(
        answer,
        language=question.language,
        calls=[(str(c["tool"]), dict(c.get("args") or {})) for c in calls if c.get("status") != "skipped"],
        referent=load_referents().get(question.qid, Referent()),
        aliases=ACTIVITY_NAMES,
    )
    return QuestionResult(
        qid=question.qid,
        category=question.category,
        language=question.language,
        question=question.text,
        answer=reply.answer,
        valid_plan=plan is not None,
        expected_tools=frozenset(called) in question.tools,
        grounded=report.ok and bool(answer.strip()),
        model_grounded=report.ok and source in ("planner", "model", "regenerated", "amended"),
        facts_ok=not missing_facts(answer, question, calls),
        tools_called=called,
        expected=tuple(tuple(sorted(s)) for s in question.tools),
        missing_facts=tuple(missing_facts(answer, question, calls)),
        grounding_problems=tuple(_problem_text(p) for p in report.problems),
        finalizer_problems=tuple(str(p) for p in meta.get("grounding_problems", [])),
        answer_source=source,
        rejected=rejected_answers(reply.events),
        strict_problems=tuple(strict),
        failed_calls=tuple(
            f"{c['tool']}: {c.get('kind')}: {str(c.get('error'))[:160]}" for c in calls if c.get("status") != "ok"
        ),
        calls=tuple(
            f"{c['tool']} {json.dumps(c.get('args'), ensure_ascii=False, default=str)}"
            for c in calls
            if c.get("status") != "skipped"
        ),
        plan_errors=tuple(str(e)[:200] for e in state.get("plan_errors", [])),
        llm_calls=int(meta.get("llm_calls", 0)),
        prompt_tokens=int(meta.get("prompt_tokens", 0)),
        completion_tokens=int(meta.get("completion_tokens", 0)),
        plan_attempts=int(meta.get("plan_attempts", 0)),
        wall_s=round(wall, 3),
    )


class _BenchAgent:
    """The agent plus its tools' specs (the check needs the output schemas)."""

    def __init__(self, agent: Any, tools: Any):
        self._agent = agent
        self.tools_specs = tools.specs

    async def ask(self, text: str, *, thread_id: str) -> Any:
        return await self._agent.ask(text, thread_id=thread_id)

    async def state(self, thread_id: str) -> Any:
        return await self._agent.state(thread_id)


async def run_travel(
    model: str | BaseChatModel,
    *,
    questions: Sequence[Question] | None = None,
    limit: int | None = None,
    category: str | None = None,
    tick: Tick | None = None,
    max_plan_attempts: int = 3,
    embedding_model: str = "default",
    answer_results: AnswerResults = "json",
    answer_by_reference: bool = False,
    answer_model: str = "profile",
) -> Report:
    """Every question through the real graph against the recorded upstream; one agent (MCP sessions, retriever,
    model) for the whole run, a fresh thread per question. ``embedding_model``, ``answer_results`` and
    ``answer_by_reference`` are the :class:`~planwerk.graph.context.Context` fields of those names;
    ``answer_model`` names the model that writes the answers: ``profile`` is the travel profile's answer model where
    ``model`` is the profile's model, else ``model`` (:func:`bench_answer_model`)."""
    from benchmarks.nestful import chat_model_for
    from planwerk.agent import Agent
    from planwerk.graph.context import Context
    from planwerk.tools.mcp import open_tools

    chosen = list(questions) if questions is not None else load_questions(limit, category=category)
    if questions is not None and (category or limit):
        chosen = [q for q in chosen if category is None or q.category == category][:limit]
    started = time.perf_counter()
    spec = model if isinstance(model, str) else type(model).__name__
    chat_model = await asyncio.to_thread(chat_model_for, model) if isinstance(model, str) else model
    answer_spec = bench_answer_model(model, answer_model)
    context = Context(
        answer_model=answer_spec if answer_spec is not None else "profile",
        profile="travel",
        today=TODAY,
        max_plan_attempts=max_plan_attempts,
        embedding_model=embedding_model,
        answer_results=answer_results,
        answer_by_reference=answer_by_reference,
    )
    with recorded_upstream() as (base, requests):
        async with open_tools(offline_config(base)) as tools:
            missing = {"geocode", "get_weather", "get_parks", "get_spots", "rank_spots"} - set(tools.specs)
            if missing:
                unavailable = getattr(tools, "unavailable", {})
                raise RuntimeError(f"the travel server lacks {', '.join(sorted(missing))} ({dict(unavailable)})")
            async with Agent(model=chat_model, profile="travel", tools=tools, context=context) as agent:
                bench_agent = _BenchAgent(agent, tools)
                setup = time.perf_counter() - started
                results = []
                for question in chosen:
                    try:
                        result = await ask_question(question, bench_agent)
                    except Exception as error:  # one question's crash is a failed question, not the end of the run
                        result = QuestionResult(
                            question.qid,
                            question.category,
                            question.language,
                            question.text,
                            None,
                            False,
                            False,
                            False,
                            False,
                            False,
                            error=f"run failed: {type(error).__name__}: {error}",
                        )
                    results.append(result)
                    if tick:
                        tick(result)
        extra = {
            "upstream_requests": len(requests),
            "answer_by_reference": answer_by_reference,
            "answer_model": answer_spec or spec,
        }
    return Report(spec, tuple(results), time.perf_counter() - started, setup, extra)


def bench_answer_model(model: str | BaseChatModel, answer_model: str) -> str | None:
    """The spec of the model that writes the bench's answers where it is not ``model`` itself, else ``None``:
    ``answer_model`` as given, or for ``profile`` the travel profile's answer model where ``model`` is the profile's
    model (the bench loads ``model`` itself, so the run's ``Context.model`` does not say ``profile``)."""
    from planwerk.models.specs import PROFILE_MODEL
    from planwerk.profiles import get_profile

    if answer_model.strip() != PROFILE_MODEL:
        return None if answer_model == model else answer_model
    profile = get_profile("travel")
    if model != profile.model or profile.answer_model in (None, model):
        return None
    return profile.answer_model


def replay_script(questions: Sequence[Question]) -> list[str]:
    """The replies a perfect model gives (reference plan, then reference answer, per turn): a replay file.

    A plan with a ``final`` (a refusal) needs no answer call. A turn not in German (the travel corpus's language)
    first gets its retrieval translation (:mod:`planwerk.graph.nodes.retrieve`); the script answers it with the question
    itself, which retrieval takes as "no translation" and searches as asked, so the reference runs retrieve what
    they always did."""
    from planwerk.core.language import detect_language

    script: list[str] = []
    for question in questions:
        turns = [*question.history, {"text": question.text, "plan": question.plan, "answer": question.answer}]
        for turn in turns:
            if detect_language(str(turn.get("text", "")), default="de") != "de":
                script.append(str(turn["text"]))
            script.append(json.dumps(turn["plan"], ensure_ascii=False))
            if not turn["plan"].get("final"):
                script.append(str(turn["answer"]))
    return script


def write_replay(questions: Sequence[Question], path: Path) -> Path:
    """:func:`replay_script` as a ``replay:`` file."""
    path.write_text(json.dumps(replay_script(questions), ensure_ascii=False, indent=1), encoding="utf-8")
    return path
