"""The command line: ``planwerk ask``, ``chat``, ``resume``, ``state``, ``index`` and ``bench`` (which forwards to
``python -m benchmarks`` in a checkout).

Threads live in a SQLite file (``$PLANWERK_HOME/threads.sqlite``), so a thread survives the process.
``--json`` prints one event per line as JSON, for programs.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import date
from pathlib import Path
from typing import Annotated, Any, NoReturn, cast, get_args

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from planwerk.agent import Agent, check_thread_id, read_state
from planwerk.core.language import Language, detect_language
from planwerk.core.plan import Plan
from planwerk.graph.context import Context, PlanFormatChoice
from planwerk.home import planwerk_home
from planwerk.prompts.texts import texts_for
from planwerk.rag.cli import index_app
from planwerk.serving.locking import DEFAULT_THREAD_WAIT_S

app = typer.Typer(
    name="planwerk",
    help="Plan tool chains with a local model, run them through MCP tools, answer from the results.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
console = Console(stderr=False, highlight=False)
errors = Console(stderr=True, highlight=False)


ThreadOption = Annotated[str | None, typer.Option("--thread", "-t", help="Thread id (a new one when omitted).")]
ModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        help="profile (the profile's model: qwen2.5-coder-1.5b for math, default for the others) | default "
        "(qwen2.5-coder-0.5b) | qwen2.5-coder-1.5b | qwen2.5-coder-0.5b-q4_0 | qwen2.5-coder-0.5b-q8_0 "
        "| hf:<id or folder> | gguf:<file>[#<tokenizer>] | endpoint:<url> | replay:<file>",
    ),
]
AnswerModelOption = Annotated[
    str,
    typer.Option(
        "--answer-model",
        help="The model that writes the answers (planning stays with --model): profile (the profile's answer "
        "model, or --model where that names one) | any --model spec",
    ),
]
McpOption = Annotated[Path | None, typer.Option("--mcp-config", help='An {"mcpServers": ...} JSON file.')]
ProfileOption = Annotated[
    str,
    typer.Option(
        "--profile",
        help="auto (travel with the bundled servers, generic with --mcp-config) | travel | math | generic | "
        "generic-en | a TOML profile file (see docs/profiles.md)",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="One JSON event per line.")]
DbOption = Annotated[Path | None, typer.Option("--db", help="SQLite file for threads.")]
TodayOption = Annotated[str | None, typer.Option("--today", help="ISO date the prompt calls today.")]
RetrievalOption = Annotated[bool, typer.Option("--retrieval/--no-retrieval", help="Search the profile's corpus.")]
ToolTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--tool-timeout",
        min=0.001,
        help="Seconds one tool call may take, for every tool (default: each MCP server's configured timeout).",
    ),
]
PlanFormatOption = Annotated[
    str,
    typer.Option(
        "--plan-format",
        help="profile (the profile's own: expression for math, json for the others) | json | expression",
    ),
]
WaitOption = Annotated[
    float,
    typer.Option(
        "--wait",
        min=0,
        help="Seconds to wait while another planwerk process runs a turn on the same thread (0: fail at once).",
    ),
]


def _agent(
    model: str,
    profile: str,
    mcp_config: Path | None,
    db: Path | None,
    today: str | None,
    retrieval: bool,
    wait: float = DEFAULT_THREAD_WAIT_S,
    tool_timeout: float | None = None,
    plan_format: str = "profile",
    answer_model: str = "profile",
) -> Agent:
    if today is not None:
        _check_today(today)
    if plan_format not in get_args(PlanFormatChoice):
        raise ValueError(f"--plan-format {plan_format!r}: expected profile, json or expression")
    if mcp_config is not None and not mcp_config.is_file():
        raise ValueError(f'MCP config file not found: {mcp_config}; expected a JSON file with "mcpServers"')
    return Agent(
        model=model,
        answer_model=answer_model,
        profile=profile,
        mcp_config=mcp_config,
        retriever=retrieval,
        db=_threads_db(db),
        context=Context(today=today, tool_timeout_s=tool_timeout, plan_format=cast(PlanFormatChoice, plan_format)),
        thread_wait_s=wait,
    )


def _check_today(today: str) -> None:
    try:
        date.fromisoformat(today)
    except ValueError:
        raise ValueError(f"--today {today!r} is no date; expected YYYY-MM-DD, e.g. 2026-11-22") from None


def _new_or_given(thread: str | None) -> str:
    """The given thread id, checked before anything starts (an empty one is an error, not a new thread)."""
    return uuid.uuid4().hex[:12] if thread is None else check_thread_id(thread)


def _threads_db(db: Path | None) -> Path:
    """The SQLite file the threads live in: ``--db``, else ``$PLANWERK_HOME/threads.sqlite``."""
    return db or planwerk_home() / "threads.sqlite"


class EventPrinter:
    """Readable output for people: what was found, planned, called, and the answer."""

    def __init__(self, console: Console):
        self.console = console
        self.language: Language = "de"
        """The current question's language (from its ``start`` event): progress lines are written in it."""

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event["event"]
        show = self.console.print
        if kind == "start":
            self.language = detect_language(event["question"], default=self.language)
        elif kind == "server_error":
            show(f"[red]  ⚠ MCP-Server {escape(event['server'])} nicht verfügbar:[/red] {escape(event['error'])}")
        elif kind == "retrieval":
            for hit in event["hits"]:
                show(f"[dim]  📄 {escape(hit['source'])} ({hit['score']:.2f}): {escape(hit['text'][:90])}…[/dim]")
        elif kind == "plan":
            for index, step in enumerate(Plan.from_stored(event["plan"]).steps):
                calls = ", ".join(f"{call.id}={call.name}" for call in step.tools)
                show(f"[cyan]  plan step {index}:[/cyan] {escape(step.description)} [dim]({calls})[/dim]")
            if repairs := plan_repairs(event):
                show(f"[dim]  ✎ im Code korrigiert: {escape(repairs)}[/dim]")
        elif kind == "step":
            show(f"[cyan]  ▸ step {event['index']}:[/cyan] {', '.join(event['calls'])}")
        elif kind == "approval_required":
            call = f"{event['tool']}({escape(_short(event['args']))})"
            show(f"[yellow]  ⏸ {event['id']}[/yellow] {call} wartet auf Freigabe")
        elif kind == "tool_call":
            retry = f" [dim](Versuch {event['attempt']})[/dim]" if event.get("attempt", 1) > 1 else ""
            show(f"[blue]  → {event['id']}[/blue] {event['tool']}({escape(_short(event['args']))}){retry}")
        elif kind == "tool_progress":
            total = f"/{event['total']:g}" if event.get("total") is not None else ""
            note = f" {escape(event['message'])}" if event.get("message") else ""
            show(f"[dim]  … {event['id']} {event['progress']:g}{total}{note}[/dim]")
        elif kind == "sampling_request":
            asked = escape(event["prompt"][:120])
            show(f"[magenta]  ? {event['id']}[/magenta] {escape(event['server'])} fragt das Modell: {asked}")
        elif kind == "sampling_result":
            said = escape(event["error"]) if event.get("error") else escape(_short(event.get("text", "")))
            show(f"[magenta]  ! {event['id']}[/magenta] {said}")
        elif kind == "tool_result":
            show(f"[green]  ✓ {event['id']}[/green] {escape(_short(event['result']))}")
        elif kind == "tool_error":
            again = " [dim](wird wiederholt)[/dim]" if event.get("retrying") else ""
            show(
                f"[red]  ✗ {event['id']}[/red] [dim]{event.get('kind', 'error')}:[/dim] {escape(event['error'])}{again}"
            )
        elif kind == "replan":
            show(f"[yellow]  ↺ {escape(event['reason'][:300])}[/yellow]")
        elif kind == "answer_rejected":
            # A short line in the question's language; the problems are written for the model (the repair request)
            # and stay in the event and the metadata.
            texts = texts_for(self.language)
            line = texts.answer_revising if event["next"] == "regenerate" else texts.answer_from_results
            show(f"[yellow]  ↻ {escape(line)}[/yellow]")
        elif kind == "final_answer":
            meta = event["metadata"]
            show(Panel(escape(event["answer"]), title="Antwort", border_style="green"))
            show(
                f"[dim]{meta['llm_calls']} model calls, {meta['prompt_tokens']}+{meta['completion_tokens']} tokens, "
                f"{meta['tool_calls']} tool calls, {meta['duration_s']:.1f} s · thread {event['thread_id']}[/dim]"
            )
        elif kind == "interrupt" and event.get("kind") == "elicitation":
            lines = [event.get("question", ""), event.get("form", "") or event.get("url", "")]
            if event.get("error"):
                lines.append(f"Nicht angenommen: {event['error']}")
            lines.append("Antwort: planwerk resume --thread … '<JSON>' | decline | cancel")
            title = f"Rückfrage von {event.get('server', 'MCP-Server')}"
            show(Panel(escape("\n".join(line for line in lines if line)), title=title, border_style="yellow"))
        elif kind == "interrupt":
            title = "Freigabe" if event.get("kind") == "approval" else "Rückfrage"
            show(Panel(escape(event.get("question", "")), title=title, border_style="yellow"))


def plan_repairs(event: dict[str, Any]) -> str:
    """What the plan check changed in code before the plan ran (re-ordered steps, places completed, substituted or
    written as names, a contradicted call's places swapped), in one line; empty when nothing."""
    parts = ["Schritte umgeordnet"] if event.get("reordered") else []
    if event.get("completed"):
        parts.append("ergänzt für " + ", ".join(event["completed"]))
    parts += [f"{s['old']} → {s['new']}" for s in event.get("substituted") or ()]
    parts += [f"{n['old']} → {n['new']} ({n['call_id']})" for n in event.get("named") or ()]
    if event.get("swapped"):
        parts.append("Orte getauscht in " + ", ".join(event["swapped"]))
    return "; ".join(parts)


def answer_value(answer: str | None) -> Any:
    """A resume answer from the command line: a JSON object (an approval's ``{"action": "edit", "args": ...}``)
    when it is one, else the text (a reply to ``ask_user``, or ``approve`` / ``reject``)."""
    if answer is not None and answer.lstrip().startswith("{"):
        try:
            return json.loads(answer)
        except ValueError as error:
            raise ValueError(f"the answer looks like JSON but does not parse ({error}); expected an object") from None
    return answer


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def _json_line(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


async def _drive(
    stream: AsyncIterator[dict[str, Any]], sink: Callable[[dict[str, Any]], None], progress: bool
) -> dict[str, Any] | None:
    """Feed events to ``sink`` (with a live progress line for people); return the last interrupt, if any."""
    interrupt = None
    status = console.status("[bold]planwerk arbeitet …", spinner="dots") if progress else None
    if status:
        status.start()
    try:
        async for event in stream:
            if status:
                status.update(f"[bold]planwerk arbeitet …[/bold] [dim]{event['event']}[/dim]")
            sink(event)
            if event["event"] == "interrupt":
                interrupt = event
    finally:
        if status:
            status.stop()
    return interrupt


def _run(coro_factory: Callable[[], Any]) -> Any:
    try:
        return asyncio.run(coro_factory())
    except (ValueError, KeyError, RuntimeError, OSError, sqlite3.Error) as error:
        _fail(error)


def _fail(error: BaseException) -> NoReturn:
    """One line on stderr and exit code 2: what went wrong, never a traceback."""
    message = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
    if isinstance(error, sqlite3.Error):  # SQLite's messages name no file: say where it happened
        message = f"the threads file failed: {message}"
    elif isinstance(error, OSError) and error.filename is not None and error.strerror:
        message = f"{error.strerror}: {error.filename}"
    # soft_wrap: one line however long, not wrapped at the 80 columns rich assumes without a terminal.
    errors.print(f"[red]planwerk: error:[/red] {escape(str(message))}", soft_wrap=True)
    raise typer.Exit(2) from None


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    thread: ThreadOption = None,
    model: ModelOption = "profile",
    answer_model: AnswerModelOption = "profile",
    mcp_config: McpOption = None,
    profile: ProfileOption = "auto",
    json_output: JsonOption = False,
    db: DbOption = None,
    today: TodayOption = None,
    retrieval: RetrievalOption = True,
    wait: WaitOption = DEFAULT_THREAD_WAIT_S,
    tool_timeout: ToolTimeoutOption = None,
    plan_format: PlanFormatOption = "profile",
) -> None:
    """Answer one question (on a new or an existing thread)."""

    async def main() -> None:
        thread_id = _new_or_given(thread)
        async with _agent(
            model, profile, mcp_config, db, today, retrieval, wait, tool_timeout, plan_format, answer_model
        ) as agent:
            sink = _json_line if json_output else EventPrinter(console)
            pending = await _drive(agent.events(question, thread_id=thread_id), sink, not json_output)
            if pending and not json_output:
                console.print(f'[dim]Antworte mit: planwerk resume --thread {thread_id} "<Antwort>"[/dim]')

    _run(main)


@app.command()
def resume(
    thread: Annotated[str, typer.Option("--thread", "-t", help="The thread to resume.")],
    answer: Annotated[str | None, typer.Argument(help="Answer to the agent's question; omit to continue.")] = None,
    model: ModelOption = "profile",
    answer_model: AnswerModelOption = "profile",
    mcp_config: McpOption = None,
    profile: ProfileOption = "auto",
    json_output: JsonOption = False,
    db: DbOption = None,
    today: TodayOption = None,
    retrieval: RetrievalOption = True,
    wait: WaitOption = DEFAULT_THREAD_WAIT_S,
    tool_timeout: ToolTimeoutOption = None,
    plan_format: PlanFormatOption = "profile",
) -> None:
    """Answer an ``ask_user`` question, or finish a run that was killed, without repeating finished tool calls."""

    async def main() -> None:
        # A clear error for an unknown thread id before any MCP server starts or the model loads.
        await read_state(thread, db=_threads_db(db))
        async with _agent(
            model, profile, mcp_config, db, today, retrieval, wait, tool_timeout, plan_format, answer_model
        ) as agent:
            sink = _json_line if json_output else EventPrinter(console)
            await _drive(agent.events(thread_id=thread, resume=answer_value(answer)), sink, not json_output)

    _run(main)


@app.command()
def state(
    thread: Annotated[str, typer.Option("--thread", "-t", help="The thread.")],
    db: DbOption = None,
) -> None:
    """Print a thread's state (conversation, plan, results, call log, answer) as JSON."""

    async def main() -> None:
        values = await read_state(thread, db=_threads_db(db))  # checkpoints only: no MCP server, no model
        # The plan's message names its calls (the chat's tool-call view); each call's result is a "tool" message.
        values["messages"] = [
            {
                "role": m.type,
                "content": m.content,
                **({"tool_calls": calls} if (calls := getattr(m, "tool_calls", None)) else {}),
            }
            for m in values.get("messages", [])
        ]
        _json_line(values)

    _run(main)


@app.command()
def chat(
    thread: ThreadOption = None,
    model: ModelOption = "profile",
    answer_model: AnswerModelOption = "profile",
    mcp_config: McpOption = None,
    profile: ProfileOption = "auto",
    db: DbOption = None,
    today: TodayOption = None,
    retrieval: RetrievalOption = True,
    wait: WaitOption = DEFAULT_THREAD_WAIT_S,
    tool_timeout: ToolTimeoutOption = None,
    plan_format: PlanFormatOption = "profile",
) -> None:
    """A conversation on one thread; an empty line or Ctrl-D ends it."""

    async def main() -> None:
        thread_id = _new_or_given(thread)
        async with _agent(
            model, profile, mcp_config, db, today, retrieval, wait, tool_timeout, plan_format, answer_model
        ) as agent:
            console.print(f"[dim]planwerk chat · thread {thread_id} · leere Zeile beendet[/dim]")
            printer = EventPrinter(console)
            while True:
                try:
                    question = (await asyncio.to_thread(console.input, "[bold]Du:[/bold] ")).strip()
                except EOFError:
                    break
                if not question:
                    break
                pending = await _drive(agent.events(question, thread_id=thread_id), printer, True)
                while pending:
                    reply = (await asyncio.to_thread(console.input, "[bold]Du:[/bold] ")).strip()
                    try:
                        resume_with = answer_value(reply)
                        pending = await _drive(agent.events(thread_id=thread_id, resume=resume_with), printer, True)
                    except ValueError as error:  # e.g. an approval answer that is none of the accepted forms
                        errors.print(f"[red]{escape(str(error))}[/red]")

    _run(main)


app.add_typer(index_app, name="index", help="Build and search the retrieval index.")


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
"""The benchmarks' folder in a checkout: beside the package, not installed with it."""


@app.command(
    "bench",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def bench(ctx: typer.Context) -> None:
    """The benchmarks: forwards to ``python -m benchmarks`` in a checkout (they are not installed with planwerk)."""
    if not (BENCHMARKS / "__main__.py").is_file():
        errors.print(
            "planwerk bench: the benchmarks are not part of the installed package; in a checkout of planwerk, run "
            "`python -m benchmarks --help` from its root (see BENCHMARKS.md)"
        )
        raise typer.Exit(2)
    # A process of its own: the package imports nothing of the benchmarks (they import planwerk).
    paths = [str(BENCHMARKS.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    raise typer.Exit(subprocess.call([sys.executable, "-m", "benchmarks", *ctx.args], env=env))


def main() -> None:
    """Console entry point."""
    app()


if __name__ == "__main__":
    main()
