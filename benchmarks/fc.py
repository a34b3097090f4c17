"""Single-turn function calling on foreign tool sets: planwerk against the same model prompted plainly.

The entries are a sample of the Berkeley Function Calling Leaderboard (``benchmarks/data/bfcl``, see its NOTICE):
simple, multiple, parallel, parallel-multiple and irrelevance, each also from the "live" (user-contributed) sets
where there is one. For every entry:

- **plain**: the model gets the leaderboard's own prompt (a system prompt with the functions as JSON, asking for
  ``[func(arg=val), ...]`` and nothing else) and the question; its reply is parsed as Python calls, as the
  leaderboard parses replies of prompted models.
- **planwerk**: the entry's functions are served as tools by an MCP server of their own (stdio,
  :mod:`benchmarks.fc_server`); the agent (profile ``generic-en``, no hand-written example for these tools, no
  retrieval) runs on the question up to its answer (the run stops before the answer is written: the leaderboard
  scores calls); the tool calls it actually made are scored.

Both are scored by the leaderboard's AST checker (:mod:`benchmarks.bfcl_checker`: function name, required
arguments, accepted values); for the irrelevance categories an entry is right when no call was made.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from benchmarks.bfcl_checker import Language, ast_checker

System = Literal["plain", "planwerk"]
SYSTEMS: tuple[System, ...] = ("plain", "planwerk")
Split = Literal["tune", "report", "all", "holdout"]
TODAY = "2026-11-28"
"""planwerk's "today" in these runs. The planner's prompt names the date, so a run that took the real one planned
otherwise from one day to the next: parallel_multiple_25 and live_irrelevance_330 of the report half, the same code
(4bb2cbc), right on 2026-11-27 and wrong on 2026-11-28. Pinned to the day the holdout split was first measured."""

PLAIN_SYSTEM_PROMPT = """You are an expert in composing functions. You are given a question and a set of possible \
functions. Based on the question, you will need to make one or more function/tool calls to achieve the purpose.
If none of the functions can be used, point it out. If the given question lacks the parameters required by the \
function, also point it out.
You should only return the function calls in your response.

If you decide to invoke any of the function(s), you MUST put it in the format of [func_name1(params_name1=params_value1\
, params_name2=params_value2...), func_name2(params)]
You SHOULD NOT include any other text in the response.

At each turn, you should try your best to complete the tasks requested by the user within the current turn. Continue \
to output functions to call until you have fulfilled the user's request to the best of your ability. Once you have \
no more functions to call, the system will consider the current turn complete and proceed to the next turn or task.

Here is a list of functions in JSON format that you can invoke.
{functions}
"""
"""The leaderboard's default system prompt for prompted models (bfcl_eval/constants/default_prompts.py)."""

TYPE_NAMES = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "any": "string",
    "bool": "boolean",
    "list": "array",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
}
"""The leaderboard's type names that JSON Schema spells otherwise (its GORILLA_TO_OPENAPI table)."""

IRRELEVANCE = ("irrelevance", "live_irrelevance")
PLAIN_MAX_NEW_TOKENS = 256
"""The plain model's reply is cut here (the leaderboard allows more; a reply this long is prose, which its parser
reads as no call, and on a CPU each token costs)."""


@dataclass(frozen=True)
class Entry:
    """One benchmark entry."""

    id: str
    category: str
    question: str
    functions: list[dict[str, Any]]
    possible_answer: list[dict[str, Any]] | None
    split: Literal["tune", "report", "holdout"]


@dataclass(frozen=True)
class Outcome:
    """What one system did on one entry."""

    calls: list[dict[str, Any]]
    """The calls as the checker reads them: ``[{name: {arg: value}}]``."""
    correct: bool
    error: str = ""
    reply: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class EntryResult:
    """Both systems on one entry."""

    entry: Entry
    outcomes: dict[str, Outcome] = field(default_factory=dict)


def served_name(name: str) -> str:
    """A function name as a tool name: dots become underscores (as the leaderboard serves them to models whose tool
    names may not hold dots; its checker compares the same way)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def tool_schema(node: Any) -> Any:
    """A leaderboard parameter document as JSON Schema (its own type names converted, recursively)."""
    if isinstance(node, list):
        return [tool_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: tool_schema(value) for key, value in node.items()}
    kind = converted.get("type")
    if isinstance(kind, str) and kind in TYPE_NAMES:
        converted["type"] = TYPE_NAMES[kind]
    return converted


def served_tools(functions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The MCP tools (name, description, inputSchema) that serve ``functions``."""
    tools = []
    for function in functions:
        schema = tool_schema(function.get("parameters") or {"type": "object", "properties": {}})
        schema.setdefault("type", "object")
        tools.append(
            {
                "name": served_name(function["name"]),
                "description": function.get("description", ""),
                "inputSchema": schema,
            }
        )
    return tools


def load_entries(
    split: Split = "report",
    *,
    categories: Iterable[str] | None = None,
    ids: Iterable[str] | None = None,
    limit_per_category: int | None = None,
    path: Path | None = None,
) -> list[Entry]:
    """The sample's entries of ``split`` (within each category, even positions tune, odd ones report; ``holdout``:
    the entries of ``holdout.jsonl``, drawn apart by :mod:`benchmarks.bfcl_sample`), optionally only
    ``categories``, ``ids`` or the first ``limit_per_category`` of each category."""
    data = Path(__file__).parent / "data" / "bfcl"
    source = path or data / ("holdout.jsonl" if split == "holdout" else "sample.jsonl")
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    position: dict[str, int] = {}
    entries = []
    for row in rows:
        index = position.get(row["category"], 0)
        position[row["category"]] = index + 1
        question = "\n".join(str(m["content"]) for m in row["messages"] if m["role"] == "user")
        entries.append(
            Entry(
                row["id"],
                row["category"],
                question,
                row["functions"],
                row["possible_answer"],
                "holdout" if split == "holdout" else "tune" if index % 2 == 0 else "report",
            )
        )
    known = sorted({e.category for e in entries})
    wanted_categories = set(categories) if categories is not None else None
    if wanted_categories is not None and (unknown := wanted_categories - set(known)):
        raise ValueError(f"unknown categories {sorted(unknown)}; expected some of {known}")
    wanted_ids = set(ids) if ids is not None else None
    if wanted_ids is not None and (unknown := wanted_ids - {e.id for e in entries}):
        raise ValueError(f"unknown entry ids {sorted(unknown)}")
    chosen = [
        e
        for e in entries
        if (split == "all" or e.split == split or wanted_ids is not None)
        and (wanted_categories is None or e.category in wanted_categories)
        and (wanted_ids is None or e.id in wanted_ids)
    ]
    if limit_per_category is not None:
        taken: dict[str, int] = {}
        kept = []
        for e in chosen:
            if taken.get(e.category, 0) < limit_per_category:
                taken[e.category] = taken.get(e.category, 0) + 1
                kept.append(e)
        chosen = kept
    return chosen


def parse_calls(reply: str) -> list[dict[str, Any]]:
    """A prompted model's reply as calls ``[{name: {arg: value}}]``, parsed as the leaderboard parses them (Python
    call syntax inside ``[...]``); ``[]`` when the reply holds no parsable call list."""
    text = reply.strip()
    text = re.sub(r"^```(?:\w+)?\s*|\s*```$", "", text).strip()
    if not text.startswith("["):
        text = f"[{text}]"
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return []
    body = tree.body
    items = body.elts if isinstance(body, ast.List | ast.Tuple) else [body]
    calls = []
    for item in items:
        if not isinstance(item, ast.Call):
            return []
        try:
            arguments = {kw.arg: ast.literal_eval(kw.value) for kw in item.keywords if kw.arg}
        except (ValueError, SyntaxError):
            return []
        calls.append({served_name(ast.unparse(item.func)): arguments})
    return calls


def score(entry: Entry, calls: list[dict[str, Any]]) -> tuple[bool, str]:
    """Whether ``calls`` are right for ``entry`` (the leaderboard's AST checker; irrelevance: no call), and why not."""
    if entry.category in IRRELEVANCE:
        return (not calls, "" if not calls else "a call was made where none fits")
    if not calls:
        return False, "no call"
    checker_category = (
        "parallel" if "parallel" in entry.category else "multiple" if "multiple" in entry.category else "simple"
    )
    try:
        verdict = ast_checker(
            entry.functions, calls, entry.possible_answer, Language.PYTHON, checker_category, "planwerk"
        )
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:  # a reply the checker cannot read
        return False, f"checker: {type(error).__name__}: {error}"
    return bool(verdict["valid"]), "; ".join(map(str, verdict.get("error", [])))[:300]


def plain_messages(entry: Entry) -> list[Any]:
    """The leaderboard's prompt for ``entry``: its system prompt with the functions (served names) as JSON, then the
    question."""
    from langchain_core.messages import HumanMessage, SystemMessage

    functions = [{**f, "name": served_name(f["name"])} for f in entry.functions]
    return [
        SystemMessage(PLAIN_SYSTEM_PROMPT.format(functions=json.dumps(functions, indent=4))),
        HumanMessage(entry.question),
    ]


async def run_plain(model: Any, entry: Entry) -> Outcome:
    """The model prompted plainly on ``entry``."""
    start = time.monotonic()
    # A right reply is a call list of a few dozen tokens; prose runs to the cap and parses as no call anyway.
    reply = await model.bind(max_new_tokens=PLAIN_MAX_NEW_TOKENS).ainvoke(plain_messages(entry))
    text = str(reply.content)
    calls = parse_calls(text)
    correct, error = score(entry, calls)
    return Outcome(calls, correct, error, text[:500], round(time.monotonic() - start, 1))


async def run_planwerk(model_spec: str, entry: Entry, context: Any, folder: Path) -> Outcome:
    """planwerk on ``entry``: its functions served by their own MCP server, the calls the agent made scored."""
    from planwerk.agent import Agent

    start = time.monotonic()
    tools = served_tools(entry.functions)
    tools_file = folder / f"{served_name(entry.id)}.tools.json"
    tools_file.write_text(json.dumps(tools), encoding="utf-8")
    config = folder / f"{served_name(entry.id)}.mcp.json"
    server = {"command": sys.executable, "args": ["-m", "benchmarks.fc_server", str(tools_file)], "timeout": 30}
    config.write_text(json.dumps({"mcpServers": {"fc": server}}), encoding="utf-8")
    names = {t["name"] for t in tools}
    events: list[dict[str, Any]] = []
    async with Agent(model=model_spec, mcp_config=config, retriever=False, context=context) as agent:
        assert agent.graph is not None
        run_config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 100}
        # The leaderboard scores calls, not answers: the run stops before the answer is written.
        async for chunk in agent.graph.astream(
            {"messages": [{"role": "user", "content": entry.question}]},
            run_config,
            context=context,
            stream_mode="custom",
            interrupt_before=["answer"],
        ):
            events.append(chunk)
    latest: dict[str, dict[str, Any]] = {}
    for event in events:  # a retried call keeps its id: its last attempt counts once
        if event["event"] == "tool_call" and event["tool"] in names:
            latest[event["id"]] = {event["tool"]: dict(event["args"])}
    calls = list(latest.values())
    correct, error = score(entry, calls)
    plans = [e.get("plan") for e in events if e["event"] == "plan"]
    replans = [f"{e['decision']}: {e['reason'][:300]}" for e in events if e["event"] == "replan"]
    text = json.dumps({"plans": plans, "replans": replans}, ensure_ascii=False, default=str)
    return Outcome(calls, correct, error, text[:1500], round(time.monotonic() - start, 1))


async def run_fc(
    model_spec: str,
    entries: Sequence[Entry],
    *,
    systems: Sequence[System] = SYSTEMS,
    tick: Callable[[EntryResult], None] | None = None,
) -> FcReport:
    """Both systems (or ``systems``) on every entry, with the same model."""
    import asyncio

    from planwerk.graph.context import Context
    from planwerk.models.specs import load_chat_model

    model = await asyncio.to_thread(load_chat_model, model_spec) if "plain" in systems else None
    context = replace(Context(), profile="generic-en", approve_destructive=False, max_plan_attempts=2, today=TODAY)
    results = []
    with tempfile.TemporaryDirectory(prefix="planwerk-fc-") as folder:
        for entry in entries:
            outcomes: dict[str, Outcome] = {}
            if "plain" in systems:
                outcomes["plain"] = await run_plain(model, entry)
            if "planwerk" in systems:
                outcomes["planwerk"] = await run_planwerk(model_spec, entry, context, Path(folder))
            result = EntryResult(entry, outcomes)
            results.append(result)
            if tick:
                tick(result)
    return FcReport(model_spec, tuple(systems), results)


@dataclass(frozen=True)
class FcReport:
    """The figures of a run."""

    model: str
    systems: tuple[str, ...]
    results: list[EntryResult]

    def summary(self) -> dict[str, Any]:
        """Right answers per category and overall, per system."""
        categories: dict[str, dict[str, Any]] = {}
        for result in self.results:
            row = categories.setdefault(result.entry.category, {"entries": 0} | {s: 0 for s in self.systems})
            row["entries"] += 1
            for system, outcome in result.outcomes.items():
                row[system] += outcome.correct
        overall = {"entries": len(self.results)} | {
            s: sum(r.outcomes[s].correct for r in self.results if s in r.outcomes) for s in self.systems
        }
        splits = sorted({r.entry.split for r in self.results})
        return {
            "model": self.model,
            "split": splits[0] if len(splits) == 1 else "mixed",
            "categories": categories,
            "overall": overall,
            "seconds": {
                s: round(sum(r.outcomes[s].seconds for r in self.results if s in r.outcomes), 1) for s in self.systems
            },
        }


def result_json(result: EntryResult) -> dict[str, Any]:
    """One entry's result as a JSON object (for ``--results``)."""
    return {
        "id": result.entry.id,
        "category": result.entry.category,
        "split": result.entry.split,
        **{
            system: {
                "correct": o.correct,
                "calls": o.calls,
                "error": o.error,
                "reply": o.reply,
                "seconds": o.seconds,
            }
            for system, o in result.outcomes.items()
        },
    }
