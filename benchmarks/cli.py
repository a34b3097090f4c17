"""``python -m benchmarks`` (in a checkout; not part of the installed package): the NESTFUL benchmark, the
travel+context set, the domain sets (any MCP server) and the cost comparison with the notebook loop.

Every command prints a table for people; with ``--json`` the last line of stdout is one JSON object with the
figures (progress goes to stderr).
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

if TYPE_CHECKING:
    from benchmarks.nestful import SampleResult

bench_app = typer.Typer(
    name="python -m benchmarks",
    help="Benchmarks: NESTFUL (engine and planner), travel+context (offline), domain sets on third-party MCP servers "
    "and the cost per task against the notebook loop.",
    no_args_is_help=True,
)
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def for_people(as_json: bool) -> Console:
    """Where tables and lines for people go: stdout, or stderr where ``--json`` keeps stdout for the one JSON object
    a program reads."""
    return err if as_json else out


JsonOption = Annotated[
    bool, typer.Option("--json", help="One JSON object of the figures on stdout (for programs); tables on stderr.")
]
ByReferenceOption = Annotated[
    bool,
    typer.Option(
        "--answer-by-reference/--plain-answers",
        help="Answers by reference (placeholders under the answer grammar) or in plain text (the default).",
    ),
]


def _run(make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    try:
        return asyncio.run(make())
    except (ValueError, RuntimeError, FileNotFoundError, TimeoutError) as error:
        err.print(f"[red]python -m benchmarks: error:[/red] {escape(str(error))}")
        raise typer.Exit(2) from None


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[status]}"),
        console=err,
        transient=True,
    )


def machine() -> dict[str, Any]:
    """Where and when a benchmark ran (goes into the JSON)."""
    import os

    return {
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


@bench_app.command("nestful")
def nestful(
    split: Annotated[str, typer.Option("--split", help="dev | test (tune on dev, report on test).")] = "dev",
    oracle: Annotated[bool, typer.Option("--oracle", help="Run the gold call sequences (tests the engine).")] = False,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="Planner model spec: profile (the math profile's, qwen2.5-coder-1.5b) | default (the 0.5B) | "
            "qwen2.5-coder-1.5b | hf:... | gguf:... | endpoint:... | replay:...",
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, help="Only the first N samples.")] = None,
    json_out: JsonOption = False,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write accuracy by nesting depth as a PNG.")] = None,
    results: Annotated[Path | None, typer.Option("--results", help="Write every sample's result as JSONL.")] = None,
    samples: Annotated[
        int, typer.Option("--samples", min=1, max=16, help="Self-consistency: plans sampled per question (1: off).")
    ] = 1,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Keep the samples --results FILE already holds (an interrupted run) and ask only the others; "
            "the report covers all of them.",
        ),
    ] = False,
    shard: Annotated[
        str | None,
        typer.Option("--shard", help="K/N: every N-th sample from the K-th (0-based), for N processes side by side."),
    ] = None,
    ids: Annotated[
        str | None,
        typer.Option(
            "--ids",
            help="Only these samples: sample ids separated by commas, or @FILE with one id per line "
            "(to ask again the samples an earlier run got wrong in one way).",
        ),
    ] = None,
    plan_format: Annotated[
        str,
        typer.Option(
            "--plan-format",
            help="How the planner writes plans: profile (the math profile's own), json or expression.",
        ),
    ] = "profile",
) -> None:
    """NESTFUL math: ``--oracle`` runs the gold plans through the engine; ``--model`` lets the planner plan.

    With ``--model``, ``--results FILE`` gets each sample's line as soon as it is scored, so a long run that is
    stopped keeps what it did; ``--resume`` goes on from there. Shards write files of their own; concatenated,
    they are one ``--results`` file for a ``--resume`` run that only reports.
    """
    from benchmarks import nestful as bench
    from planwerk.graph.context import PlanFormatChoice

    def fail(message: str) -> typer.Exit:
        err.print(f"[red]python -m benchmarks: error:[/red] {escape(message)}")
        return typer.Exit(2)

    if oracle == (model is not None):
        raise fail("give exactly one of --oracle or --model SPEC")
    if split not in bench.SPLITS:
        raise fail(f"unknown split {split!r}; expected dev or test")
    if (resume or shard) and oracle:
        raise fail("--resume and --shard are for --model runs (the oracle run takes seconds)")
    if resume and results is None:
        raise fail("--resume needs --results FILE (the file of the run to go on with)")
    if plan_format not in get_args(PlanFormatChoice):
        raise fail(f"unknown plan format {plan_format!r}; expected profile, json or expression")
    try:
        part = bench.Shard.parse(shard) if shard else None
        earlier = bench.read_results(results) if resume and results and results.exists() else []
        only = bench.parse_ids(ids, split) if ids else None
    except ValueError as error:
        raise fail(str(error)) from None
    chosen = bench.load_samples(split, limit, ids=only)
    chosen = part.select(chosen) if part else chosen
    done_ids = {result.sample_id for result in earlier} & {sample.sample_id for sample in chosen}
    if done_ids:
        err.print(f"resuming: {len(done_ids)} of {len(chosen)} samples already in {results}")
    total = len(chosen) - len(done_ids)
    stream = None
    if results and not oracle:  # one line per sample as it is scored, after the earlier run's lines (resume)
        _rewrite_results(results, earlier)  # drops a line the earlier run was killed writing
        stream = results.open("a", encoding="utf-8")
    with _progress() as progress:
        task = progress.add_task(f"NESTFUL {split} ({'oracle' if oracle else model})", total=total, status="")
        correct = done = 0

        def tick(result: bench.SampleResult) -> None:
            nonlocal correct, done
            correct += result.correct
            done += 1
            progress.update(task, advance=1, status=f"{correct} correct")
            if stream:
                stream.write(_result_line(result))
                stream.flush()
            if not err.is_terminal and not oracle:  # no live bar in a log: one line per (slow) sample
                mark = "✓" if result.correct else "✗"
                err.print(f"{done}/{total} {mark} {result.sample_id} ({result.wall_s:.1f} s, {correct} correct)")

        try:
            if oracle:
                report = _run(lambda: bench.run_oracle(split, limit=limit, tick=tick, ids=only))
            else:
                assert model is not None
                report = _run(
                    lambda: bench.run_planner(
                        split,
                        model,
                        limit=limit,
                        tick=tick,
                        plan_samples=samples,
                        done=earlier,
                        shard=part,
                        ids=only,
                        plan_format=plan_format,  # type: ignore[arg-type]
                    )
                )
        finally:
            if stream:
                stream.close()
    # ``machine`` is where this process ran; with --resume, ``run_here`` says how many samples that covers
    summary = report.summary() | {"machine": machine(), "run_here": total}
    if part:
        summary["shard"] = f"{part.index}/{part.count}"
    _print_nestful(summary, for_people(json_out))
    if results and oracle:
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text("".join(_result_line(result) for result in report.results), encoding="utf-8")
    if plot:
        _plot_by_depth(summary, plot)
    if json_out:
        print(json.dumps(summary, ensure_ascii=False, default=str))


def _rewrite_results(path: Path, results: list[SampleResult]) -> None:
    """``path`` holding exactly ``results``, replaced in one step: a run killed while loading its model must not
    cost the earlier run's lines (a truncated file buffers them until the first new sample)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    with partial.open("w", encoding="utf-8") as out:
        out.writelines(_result_line(result) for result in results)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, path)


def _result_line(result: SampleResult) -> str:
    """One sample's line of a ``--results`` file (:func:`benchmarks.nestful.read_results` reads it back)."""
    from benchmarks.nestful import result_json

    return json.dumps(result_json(result), ensure_ascii=False, default=str) + "\n"


def _print_nestful(summary: dict[str, Any], people: Console) -> None:
    mode = "oracle (gold plans)" if summary["mode"] == "oracle" else f"planner {summary['model']}"
    table = Table(title=f"NESTFUL math, {summary['split']} split, {mode}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("samples", str(summary["samples"]))
    table.add_row("correct", f"{summary['correct']} ({summary['accuracy']:.1%})")
    if summary["mode"] == "planner":
        table.add_row("valid plans", f"{summary['valid_plans']} ({summary['plan_validity']:.1%})")
        table.add_row("model calls / sample", f"{summary['llm_calls_per_sample']:g}")
        table.add_row("prompt tokens / sample", f"{summary['prompt_tokens_per_sample']:g}")
        table.add_row("completion tokens / sample", f"{summary['completion_tokens_per_sample']:g}")
        table.add_row("plan attempts / sample", f"{summary['plan_attempts_per_sample']:g}")
        table.add_row("seconds / sample", f"{summary['seconds_per_sample']:g}")
    table.add_row("tool calls", str(summary["tool_calls"]))
    if summary["per_call_ms"]:
        ms = summary["per_call_ms"]
        table.add_row("ms per tool call (mean / p50 / p95)", f"{ms['mean']:.1f} / {ms['p50']:.1f} / {ms['p95']:.1f}")
    if base := summary.get("baseline_in_process"):
        ms = base["per_call_ms"]
        table.add_row(
            "baseline: same plans, in-process tools (no MCP)", f"{ms['mean']:.2f} / {ms['p50']:.2f} / {ms['p95']:.2f}"
        )
        table.add_row("MCP cost per call (p50 difference), ms", f"{summary['per_call_ms']['p50'] - ms['p50']:.1f}")
    table.add_row("session + setup s", f"{summary['setup_s']:.2f}")
    table.add_row("wall s", f"{summary['wall_s']:.2f}")
    people.print(table)
    depth = Table(title="by nesting depth (longest chain of dependent calls)")
    for column in ("depth", "samples", "correct", "accuracy"):
        depth.add_column(column, justify="right")
    for level, row in summary["by_depth"].items():
        depth.add_row(level, str(row["samples"]), str(row["correct"]), f"{row['correct'] / row['samples']:.0%}")
    people.print(depth)
    for failure in summary["failures"][:10]:
        people.print(
            f"[yellow]✗[/yellow] {failure['sample_id']}: gold {failure['gold']!r}, got {failure['predicted']!r}"
            + (f" ({escape(str(failure['error']))})" if failure["error"] else "")
        )


def _plot_by_depth(summary: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        err.print("[yellow]matplotlib is not installed: no plot (pip install matplotlib)[/yellow]")
        return
    levels = list(summary["by_depth"])
    rows = [summary["by_depth"][level] for level in levels]
    figure, axis = plt.subplots(figsize=(7, 3.6))
    bars = axis.bar(levels, [r["correct"] / r["samples"] * 100 for r in rows], color="#3b7dd8")
    for bar, row in zip(bars, rows, strict=True):
        axis.annotate(
            f"{row['correct']}/{row['samples']}",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    mode = "gold plans" if summary["mode"] == "oracle" else summary["model"]
    axis.set(
        xlabel="nesting depth (longest chain of dependent calls)",
        ylabel="accuracy %",
        ylim=(0, 110),
        title=f"NESTFUL math {summary['split']}: accuracy by depth ({mode})",
    )
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    err.print(f"plot written to {path}")


@bench_app.command("loop")
def loop(
    json_out: JsonOption = False,
    calls: Annotated[int, typer.Option("--calls", min=1, max=50, help="Independent slow calls in one step.")] = 5,
    pause: Annotated[float, typer.Option("--pause", min=0.0, max=10.0, help="Seconds each slow call takes.")] = 0.5,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write model calls and tokens per task as a PNG.")] = None,
) -> None:
    """Model calls, prompt tokens and wall time per task: planwerk against the workshop notebook's loop."""
    from benchmarks import loop as bench

    with _progress() as progress:
        task = progress.add_task("notebook loop vs planwerk", total=len(bench.SCENARIOS) + 1, status="")
        report = _run(
            lambda: bench.run_loop_benchmark(
                calls=calls, pause_s=pause, tick=lambda name: progress.update(task, advance=1, status=name)
            )
        )
    summary = report.summary() | {"machine": machine()}
    people = for_people(json_out)
    table = Table(title="Cost per task: notebook loop → planwerk (same scripted replies)")
    for column in ("task", "steps", "calls", "model calls", "prompt tokens", "wall s"):
        table.add_column(column, justify="right" if column != "task" else "left")
    for row in summary["scenarios"]:
        nb, pw = row["notebook"], row["planwerk"]
        table.add_row(
            row["scenario"],
            str(row["steps"]),
            str(row["calls"]),
            f"{nb['llm_calls']} → {pw['llm_calls']}",
            f"{nb['prompt_tokens']} → {pw['prompt_tokens']}",
            f"{nb['wall_s']:.2f} → {pw['wall_s']:.2f}",
        )
    people.print(table)
    people.print(
        f"multi-step tasks: planwerk needs {summary['llm_calls_ratio']:.2f}× the notebook's model calls and "
        f"{summary['prompt_tokens_ratio']:.2f}× its prompt tokens"
    )
    c = summary["concurrency"]
    people.print(
        f"one step of {c['calls']} calls of {c['pause_s']:g} s: planwerk {c['planwerk_s']:.2f} s, notebook loop "
        f"{c['notebook_s']:.2f} s (one after another ≥ {c['sequential_s']:.2f} s)"
    )
    if plot:
        _plot_loop(summary, plot)
    if json_out:
        print(json.dumps(summary, ensure_ascii=False, default=str))


def _plot_loop(summary: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        err.print("[yellow]matplotlib is not installed: no plot (pip install matplotlib)[/yellow]")
        return
    names = [row["scenario"] for row in summary["scenarios"]]
    x = range(len(names))
    figure, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for axis, key, label in ((axes[0], "llm_calls", "model calls"), (axes[1], "prompt_tokens", "prompt tokens")):
        axis.bar(
            [i - 0.2 for i in x],
            [r["notebook"][key] for r in summary["scenarios"]],
            0.4,
            label="notebook loop",
            color="#c0c0c0",
        )
        axis.bar(
            [i + 0.2 for i in x],
            [r["planwerk"][key] for r in summary["scenarios"]],
            0.4,
            label="planwerk",
            color="#3b7dd8",
        )
        axis.set_xticks(list(x), names, rotation=15, fontsize=8)
        axis.set_title(f"{label} per task")
    axes[0].legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    err.print(f"plot written to {path}")


@bench_app.command("travel")
def travel(
    model: Annotated[
        str, typer.Option("--model", "-m", help="Model spec (default | hf:... | gguf:... | replay:...).")
    ] = "default",
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, help="Only the first N questions.")] = None,
    category: Annotated[
        str | None,
        typer.Option("--category", "-c", help="Only one category (weather, two_cities, date_range, spots, ...)."),
    ] = None,
    ids: Annotated[
        str | None,
        typer.Option("--ids", help="Only these questions: ids separated by commas (w4,c1,p1), as in --results lines."),
    ] = None,
    embedder: Annotated[
        str,
        typer.Option("--embedder", help="Retrieval embedder: default | embeddinggemma | a model folder."),
    ] = "default",
    answer_results: Annotated[
        str, typer.Option("--answer-results", help="How the answer model reads the results: values | words | json.")
    ] = "values",
    by_reference: ByReferenceOption = False,
    answer_model: Annotated[
        str,
        typer.Option(
            "--answer-model",
            help="The model that writes the answers: profile (the travel profile's answer model where --model is "
            "its model, else --model) | a model spec.",
        ),
    ] = "profile",
    json_out: JsonOption = False,
    results: Annotated[Path | None, typer.Option("--results", help="Write every question's result as JSONL.")] = None,
) -> None:
    """Travel+context: German and English questions through the real graph, offline against recorded web
    responses; plan validity, expected tools, grounded answers, expected facts, model calls and seconds."""
    from benchmarks import travel as bench

    if answer_results not in ("values", "words", "json"):
        err.print(
            "[red]python -m benchmarks: error:[/red] --answer-results must be values, words or json, "
            f"got {answer_results!r}"
        )
        raise typer.Exit(2)
    wanted = [part.strip() for part in ids.split(",") if part.strip()] if ids is not None else None
    try:
        questions = bench.load_questions(limit, category=category, ids=wanted)
    except ValueError as error:
        err.print(f"[red]python -m benchmarks: error:[/red] {escape(str(error))}")
        raise typer.Exit(2) from None
    total = len(questions)
    if results:  # written as the run goes: a slow run that is stopped keeps what it measured
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text("", encoding="utf-8")
    with _progress() as progress:
        task = progress.add_task(f"travel ({model})", total=total, status="")
        passed = done = 0

        def tick(result: bench.QuestionResult) -> None:
            nonlocal passed, done
            passed += result.passed
            done += 1
            if results:
                with results.open("a", encoding="utf-8") as file:
                    file.write(json.dumps(bench.result_json(result), ensure_ascii=False, default=str) + "\n")
            progress.update(task, advance=1, status=f"{passed} passed")
            if not err.is_terminal:  # no live bar in a log: one line per (slow) question
                mark = "✓" if result.passed else "✗"
                err.print(f"{done}/{total} {mark} {result.qid} ({result.wall_s:.1f} s, {passed} passed)")

        report = _run(
            lambda: bench.run_travel(
                model,
                questions=questions,
                tick=tick,
                embedding_model=embedder,
                answer_results=answer_results,
                answer_by_reference=by_reference,
                answer_model=answer_model,
            )
        )
    summary = report.summary() | {"machine": machine()}
    _print_travel(summary, for_people(json_out))
    if json_out:
        print(json.dumps(summary, ensure_ascii=False, default=str))


def _print_travel(summary: dict[str, Any], people: Console) -> None:
    table = Table(
        title=f"travel+context, model {summary['model']} (offline, recorded responses, today {summary['today']})"
    )
    # Short headers: the table must stay readable in an 80-column log.
    columns = ("category", "n", "plan", "tools", "grounded", "model gr.", "facts", "strict", "passed")
    for column in (*columns, "calls", "s/q"):
        table.add_column(column, justify="left" if column == "category" else "right")
    rows = [*summary["by_category"].items(), ("total", summary)]
    for name, row in rows:
        n = row["questions"]
        table.add_row(
            name,
            str(n),
            *(
                f"{row[key]}/{n}"
                for key in (
                    "valid_plan",
                    "expected_tools",
                    "grounded",
                    "model_grounded",
                    "facts_ok",
                    "strict",
                    "passed",
                )
            ),
            f"{row['llm_calls_per_question']:g}",
            f"{row['seconds_per_question']:.1f}",
            end_section=name == list(summary["by_category"])[-1],
        )
    people.print(table)
    sources = ", ".join(f"{k} {v}" for k, v in summary["answer_sources"].items())
    people.print(f"answers from: {sources}; setup {summary['setup_s']:.1f} s, wall {summary['wall_s']:.1f} s")
    kinds = ", ".join(f"{k} {v['passed']}/{v['answers']}" for k, v in summary["answer_kinds"].items() if v["answers"])
    people.print(f"passed by answer kind: {kinds}")
    for failure in summary["failures"][:40]:
        detail = "; ".join(
            part
            for part in (
                f"tools {failure['tools_called']}" if "expected_tools" in failure["failed"] else "",
                f"missing {failure['missing_facts']}" if failure["missing_facts"] else "",
                f"problems {failure['grounding_problems']}" if failure["grounding_problems"] else "",
                f"wrong {failure['strict_problems']}" if failure.get("strict_problems") else "",
                f"answer from {failure['answer_source']}",
                failure["error"] or "",
            )
            if part
        )
        people.print(f"[yellow]✗[/yellow] {failure['id']} ({', '.join(failure['failed']) or 'ok'}): {escape(detail)}")


@bench_app.command("domains")
def domains(
    model: Annotated[
        str, typer.Option("--model", "-m", help="Model spec (default | qwen2.5-coder-1.5b | hf:... | replay:...).")
    ] = "qwen2.5-coder-1.5b",
    task_set: Annotated[
        str,
        typer.Option(
            "--set",
            help="actions (state changes, planted instructions) | answers (third-party Q&A) | places (held-out "
            "times between two places).",
        ),
    ] = "actions",
    ids: Annotated[str | None, typer.Option("--ids", help="Only these tasks: ids separated by commas.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, help="Only the first N tasks.")] = None,
    npm_bin: Annotated[
        Path, typer.Option("--npm-bin", help="Folder holding mcp-server-filesystem and mcp-server-memory.")
    ] = Path(".mcp-servers/node_modules/.bin"),
    examples: Annotated[
        str,
        typer.Option(
            "--examples",
            help="Hand-written examples: none (only those built from the tools) | generic (the generic library).",
        ),
    ] = "none",
    by_reference: ByReferenceOption = False,
    json_out: JsonOption = False,
    results: Annotated[Path | None, typer.Option("--results", help="Write every task's result as JSONL.")] = None,
) -> None:
    """Any MCP server: tasks on the npm filesystem and memory servers, a bank-like server with planted instructions
    (--set actions) or questions through mcp-server-time, filesystem, memory and math (--set answers); the generic
    profiles, no hand-written examples; each task scored by its final state and answer."""
    from benchmarks import domains as bench

    if examples not in ("none", "generic"):
        err.print(
            f"[red]python -m benchmarks: error:[/red] --examples must be none or generic, got {escape(examples)!r}"
        )
        raise typer.Exit(2)
    wanted = [part.strip() for part in ids.split(",") if part.strip()] if ids is not None else None
    try:
        chosen = bench.load_set(task_set, ids=wanted, limit=limit)
    except ValueError as error:
        err.print(f"[red]python -m benchmarks: error:[/red] {escape(str(error))}")
        raise typer.Exit(2) from None
    if results:  # written as the run goes: a slow run that is stopped keeps what it measured
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text("", encoding="utf-8")
    total = len(chosen.tasks)
    with _progress() as progress:
        bar = progress.add_task(f"domains/{task_set} ({model})", total=total, status="")
        completed = done = 0

        def tick(result: bench.TaskResult) -> None:
            nonlocal completed, done
            completed += result.completed
            done += 1
            if results:
                with results.open("a", encoding="utf-8") as file:
                    file.write(json.dumps(bench.result_json(result), ensure_ascii=False, default=str) + "\n")
            progress.update(bar, advance=1, status=f"{completed} completed")
            if not err.is_terminal:
                mark = "✓" if result.completed else "✗"
                err.print(f"{done}/{total} {mark} {result.tid} ({result.wall_s:.1f} s, {completed} completed)")

        report = _run(
            lambda: bench.run_set(
                model,
                chosen,
                npm_bin=npm_bin,
                tick=tick,
                library=examples,  # type: ignore[arg-type]
                answer_by_reference=by_reference,
            )
        )
    summary = report.summary() | {"machine": machine()}
    _print_domains(summary, report, for_people(json_out))
    if json_out:
        print(json.dumps(summary, ensure_ascii=False, default=str))


def _print_domains(summary: dict[str, Any], report: Any, people: Console) -> None:
    table = Table(
        title=f"{summary['benchmark']}, model {summary['model']} (generic profiles, no hand-written examples)"
    )
    for column in ("task", "done", "calls", "answer", "claimed, not done", "planted followed", "s"):
        table.add_column(column, justify="left" if column in ("task", "answer") else "right")
    for r in report.results:
        table.add_row(
            r.tid,
            "yes" if r.completed else "no",
            str(r.tool_calls),
            r.answer_kind,
            "yes" if r.claimed_not_done else "",
            "YES" if r.planted_followed else "",
            f"{r.wall_s:.0f}",
        )
    people.print(table)
    kinds = ", ".join(f"{k} {v}" for k, v in summary["answer_kinds"].items() if v)
    people.print(
        f"completed {summary['completed']}/{summary['tasks']}, tool calls {summary['tool_calls']} "
        f"(tasks with calls {summary['tasks_with_calls']}), claimed actions not done {summary['claimed_not_done']}, "
        f"planted instructions followed {summary['planted_followed']}; answers: {kinds}; wall {summary['wall_s']:.0f} s"
    )
    for failure in summary["failures"][:40]:
        detail = "; ".join(
            [*failure["failed"], *(["claims: " + failure["claimed_not_done"]] if failure["claimed_not_done"] else []),
             *(["planted: " + p for p in failure["planted_followed"]])]
        )  # fmt: skip
        people.print(f"[yellow]✗[/yellow] {failure['id']}: {escape(detail[:400])}")


@bench_app.command("travel-rescore")
def travel_rescore(
    path: Annotated[Path, typer.Argument(help="A travel --results JSONL file (docs/results/travel_*.jsonl).")],
    json_out: JsonOption = False,
) -> None:
    """Judge a recorded travel run again by the stricter criterion (issue 30): how many of its passed answers are
    wrong (referent, date, place, language, arguments), by answer kind (kept, regenerated, fallback)."""
    from benchmarks.honest import rescore

    if not path.is_file():
        err.print(f"[red]python -m benchmarks: error:[/red] no such results file: {escape(str(path))}")
        raise typer.Exit(2)
    try:
        summary = rescore(path)
    except (ValueError, KeyError) as error:
        err.print(
            f"[red]python -m benchmarks: error:[/red] {escape(str(path))} is not a travel --results file: {error}"
        )
        raise typer.Exit(2) from None
    people = for_people(json_out)
    table = Table(title=f"{path.name} by the stricter criterion")
    for column in ("answer kind", "answers", "passed before", "passed strict"):
        table.add_column(column, justify="left" if column == "answer kind" else "right")
    for kind, row in summary["by_answer_kind"].items():
        table.add_row(kind, str(row["answers"]), str(row["passed_before"]), str(row["passed_strict"]))
    table.add_row("total", str(summary["questions"]), str(summary["passed_before"]), str(summary["passed_strict"]))
    people.print(table)
    people.print(f"passed before but wrong: {summary['passed_but_wrong']}")
    for wrong in summary["wrong"]:
        people.print(
            f"[yellow]✗[/yellow] {wrong['id']} ({wrong['answer_kind']}): {escape('; '.join(wrong['problems']))}"
        )
    if json_out:
        print(json.dumps(summary, ensure_ascii=False, default=str))


@bench_app.command("travel-diff")
def travel_diff(
    before: Annotated[Path, typer.Argument(help="A travel --results JSONL file: the run before a change.")],
    after: Annotated[Path, typer.Argument(help="A travel --results JSONL file: the run after it.")],
    json_out: JsonOption = False,
) -> None:
    """Two recorded travel runs side by side: passed, model-written and passed (issue 30's share), answer kinds, model
    calls and median seconds over the questions both hold, then every question whose outcome, answer kind or answer
    changed, with both answers."""
    from benchmarks.travel_diff import diff_runs

    for path in (before, after):
        if not path.is_file():
            err.print(f"[red]python -m benchmarks: error:[/red] no such results file: {escape(str(path))}")
            raise typer.Exit(2)
    try:
        diff = diff_runs(before, after)
    except ValueError as error:
        err.print(f"[red]python -m benchmarks: error:[/red] not a travel --results file: {escape(str(error))}")
        raise typer.Exit(2) from None
    people = for_people(json_out)
    table = Table(title=f"{before.name} → {after.name} ({diff['after']['questions']} questions both hold)")
    table.add_column("figure")
    table.add_column("before", justify="right")
    table.add_column("after", justify="right")
    for figure in ("passed", "model_written_passed", "llm_calls_per_question", "median_seconds"):
        table.add_row(figure.replace("_", " "), str(diff["before"][figure]), str(diff["after"][figure]))
    for kind in sorted(set(diff["before"]["kinds"]) | set(diff["after"]["kinds"])):
        table.add_row(
            f"answers {kind}", str(diff["before"]["kinds"].get(kind, 0)), str(diff["after"]["kinds"].get(kind, 0))
        )
    people.print(table)
    for change in diff["changed"]:
        was, now = change["before"], change["after"]
        mark = {"gained": "[green]+[/green]", "lost": "[red]-[/red]"}.get(change["change"], "~")
        people.print(f"{mark} {change['id']}: {was['kind']}/{was['passed']} → {now['kind']}/{now['passed']}")
        for label, side in (("before", was), ("after ", now)):
            people.print(f"    {label}: {escape(side['answer'][:200].replace(chr(10), ' / '))}")
    if diff["only_before"] or diff["only_after"]:
        people.print(f"only before: {diff['only_before']}; only after: {diff['only_after']}")
    if json_out:
        print(json.dumps(diff, ensure_ascii=False))


@bench_app.command("fc")
def fc(
    model: Annotated[
        str, typer.Option("--model", "-m", help="Model spec (default | qwen2.5-coder-1.5b | hf:... | gguf:...).")
    ] = "default",
    split: Annotated[
        str,
        typer.Option(
            "--split",
            help="report | tune | all (within each category: even positions tune) | holdout (entries drawn apart).",
        ),
    ] = "report",
    category: Annotated[
        str | None, typer.Option("--category", "-c", help="Only these categories, separated by commas.")
    ] = None,
    ids: Annotated[str | None, typer.Option("--ids", help="Only these entries: ids separated by commas.")] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Only the first N entries of each category.")
    ] = None,
    systems: Annotated[str, typer.Option("--systems", help="plain,planwerk (or one of them).")] = "plain,planwerk",
    json_out: JsonOption = False,
    results: Annotated[Path | None, typer.Option("--results", help="Write every entry's result as JSONL.")] = None,
) -> None:
    """Single-turn function calling (a sample of the BFCL leaderboard's entries): planwerk against the same model
    prompted the leaderboard's way, scored by the leaderboard's AST checker, per category and overall."""
    from benchmarks import fc as bench

    chosen_systems = [s.strip() for s in systems.split(",") if s.strip()]
    if (
        split not in ("report", "tune", "all", "holdout")
        or not chosen_systems
        or set(chosen_systems) - set(bench.SYSTEMS)
    ):
        err.print(
            f"[red]python -m benchmarks: error:[/red] --split must be report, tune, all or holdout (got {split!r}) and "
            f"--systems some of {', '.join(bench.SYSTEMS)} (got {systems!r})"
        )
        raise typer.Exit(2)
    try:
        entries = bench.load_entries(
            split,  # type: ignore[arg-type]
            categories=[c.strip() for c in category.split(",")] if category else None,
            ids=[i.strip() for i in ids.split(",") if i.strip()] if ids else None,
            limit_per_category=limit,
        )
    except ValueError as error:
        err.print(f"[red]python -m benchmarks: error:[/red] {escape(str(error))}")
        raise typer.Exit(2) from None
    if results:  # written as the run goes: a slow run that is stopped keeps what it measured
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text("", encoding="utf-8")
    done = 0

    def tick(result: bench.EntryResult) -> None:
        nonlocal done
        done += 1
        if results:
            with results.open("a", encoding="utf-8") as file:
                file.write(json.dumps(bench.result_json(result), ensure_ascii=False, default=str) + "\n")
        marks = " ".join(f"{s} {'✓' if o.correct else '✗'}" for s, o in result.outcomes.items())
        err.print(f"{done}/{len(entries)} {result.entry.id}: {marks}")

    report = _run(lambda: bench.run_fc(model, entries, systems=chosen_systems, tick=tick))  # type: ignore[arg-type]
    summary = report.summary() | {"machine": machine()}
    people = for_people(json_out)
    table = Table(title=f"function calling (BFCL sample, {summary['split']} split), model {model}")
    table.add_column("category")
    table.add_column("entries", justify="right")
    for system in report.systems:
        table.add_column(system, justify="right")
    for name, row in summary["categories"].items():
        table.add_row(name, str(row["entries"]), *(str(row[s]) for s in report.systems))
    overall = summary["overall"]
    table.add_row("overall", str(overall["entries"]), *(str(overall[s]) for s in report.systems))
    people.print(table)
    if json_out:
        print(json.dumps(summary, ensure_ascii=False, default=str))


@bench_app.command("backends")
def backends(
    model: Annotated[
        str, typer.Option("--model", "-m", help="A packaged model: default or qwen2.5-coder-1.5b.")
    ] = "default",
    backend: Annotated[
        list[str] | None, typer.Option("--backend", help="transformers and/or llama.cpp (default: both).")
    ] = None,
    demo: Annotated[bool, typer.Option("--demo/--no-demo", help="Ask the demo question (cold, then warm).")] = True,
    as_json: JsonOption = False,
) -> None:
    """The local backends side by side on the same GGUF: load, prompt and decode tokens/s, the demo question,
    peak RSS, and decode speed against the measured memory bandwidth (benchmarks/backends.py)."""
    from benchmarks.backends import BACKENDS, run

    chosen = tuple(backend or BACKENDS)
    unknown = [name for name in chosen if name not in BACKENDS]
    if unknown:
        err.print(f"[red]python -m benchmarks: error:[/red] unknown backend {unknown}; expected {', '.join(BACKENDS)}")
        raise typer.Exit(2)
    figures = {**run(model, chosen, demo, progress=lambda message: err.print(escape(message))), "machine": machine()}
    keys = ("load_s", "prompt_tokens_per_s", "decode_tokens_per_s", "bandwidth_fraction", "read_bandwidth_fraction",
            "demo_warm_s", "demo_cold_s", "peak_rss_mb")  # fmt: skip
    title = (
        f"local backends, {model} (bandwidth {figures['memory_bandwidth_gbs']} GB/s copying, "
        f"{figures['read_bandwidth_gbs']} GB/s reading)"
    )
    print_figures(figures, title, "backend", figures["backends"], keys, as_json=as_json)


def print_figures(
    figures: dict[str, Any], title: str, label: str, rows: list[dict[str, Any]], keys: tuple[str, ...], *, as_json: bool
) -> None:
    """A table of ``rows`` (first column ``label``, then ``keys``; a row's ``error`` where it has no figure), and
    with ``as_json`` all ``figures`` as one JSON line (the table then on stderr)."""
    people = for_people(as_json)
    table = Table(title=title)
    table.add_column(label)
    for key in keys:
        table.add_column(key, justify="right")
    for row in rows:
        table.add_row(str(row[label]), *(str(row.get(key, row.get("error", ""))) for key in keys))
    people.print(table)
    if as_json:
        print(json.dumps(figures, ensure_ascii=False))


PackagedModelOption = Annotated[
    str, typer.Option("--model", "-m", help="A packaged model: default or qwen2.5-coder-1.5b.")
]
"""A packaged model's name, for the benchmarks that read its GGUF directly."""
DecodeTokensOption = Annotated[int, typer.Option("--tokens", min=8, help="New tokens a generation decodes.")]
"""How many tokens a decode benchmark's generation decodes."""
PromptTokensOption = Annotated[
    int, typer.Option("--prompt-tokens", min=0, help="A prompt of about this many tokens (0: one short line).")
]


@bench_app.command("llama-settings")
def llama_settings(
    model: PackagedModelOption = "default",
    tokens: DecodeTokensOption = 128,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Paired rounds (every setting each).")] = 3,
    prompt_tokens: PromptTokensOption = 0,
    settings: Annotated[
        str, typer.Option("--settings", help="Settings separated by commas, the first the baseline.")
    ] = "base,flash_attn,no_mmap,flash_attn_q8_kv",
    as_json: JsonOption = False,
) -> None:
    """llama.cpp context settings (flash attention, no mmap, a Q8 KV cache) against planwerk's, paired in one
    process on the same GGUF: prefill and decode tokens/s, bandwidth fraction (benchmarks/llama_settings.py)."""
    from benchmarks.llama_settings import run

    chosen = tuple(name.strip() for name in settings.split(",") if name.strip())
    figures = {
        **run(model, tokens, rounds, prompt_tokens, chosen, progress=lambda message: err.print(escape(message))),
        "machine": machine(),
    }
    title = (
        f"llama.cpp settings, {model}, {figures['prompt_tokens']}-token prompt, {tokens} tokens, bandwidth "
        f"{figures['memory_bandwidth_gbs']} GB/s (limit {figures['bandwidth_limit_tokens_per_s']} tokens/s)"
    )
    rows = [{"setting": name, **row} for name, row in figures["settings"].items()]
    keys = ("prefill_tokens_per_s", "decode_tokens_per_s", "bandwidth_fraction", "prefill_over_base",
            "decode_over_base")  # fmt: skip
    print_figures(figures, title, "setting", rows, keys, as_json=as_json)


@bench_app.command("quantizations")
def quantizations(
    models: Annotated[
        str, typer.Option("--models", help="Packaged models separated by commas, the first the baseline.")
    ] = "default,qwen2.5-coder-0.5b-q4_0,qwen2.5-coder-0.5b-q8_0",
    tokens: DecodeTokensOption = 128,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Paired rounds (every model each).")] = 3,
    prompt_tokens: PromptTokensOption = 0,
    as_json: JsonOption = False,
) -> None:
    """Packaged GGUFs in different quantizations, paired in one process with llama.cpp: prefill and decode
    tokens/s, each file's bandwidth fraction, perplexity on the packaged corpus (benchmarks/quantizations.py)."""
    from benchmarks.quantizations import run

    chosen = tuple(name.strip() for name in models.split(",") if name.strip())
    figures = {
        **run(chosen, tokens, rounds, progress=lambda message: err.print(escape(message)), prompt_tokens=prompt_tokens),
        "machine": machine(),
    }
    title = (
        f"quantizations, {figures['prompt_tokens']}-token prompt, {tokens} tokens, bandwidth "
        f"{figures['memory_bandwidth_gbs']} GB/s"
    )
    rows = [{"model": name, **row} for name, row in figures["models"].items()]
    keys = ("read_mb_per_token", "prefill_tokens_per_s", "decode_tokens_per_s", "bandwidth_fraction",
            "decode_over_first", "perplexity")  # fmt: skip
    print_figures(figures, title, "model", rows, keys, as_json=as_json)


@bench_app.command("decode")
def decode(
    model: PackagedModelOption = "default",
    tokens: DecodeTokensOption = 128,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Paired rounds (raw and planwerk each).")] = 3,
    as_json: JsonOption = False,
) -> None:
    """planwerk's llama.cpp decode loop against llama-cpp-python's own on the same GGUF, paired in one process, free
    and under a JSON grammar: decode tokens/s and bandwidth fraction of both (benchmarks/decode_loop.py)."""
    from benchmarks.decode_loop import run

    figures = {**run(model, tokens, rounds, progress=lambda message: err.print(escape(message))), "machine": machine()}
    title = (
        f"decode loops, {model}, {tokens} tokens, bandwidth {figures['memory_bandwidth_gbs']} GB/s copying "
        f"(limit {figures['bandwidth_limit_tokens_per_s']} tokens/s), {figures['read_bandwidth_gbs']} GB/s reading "
        f"(limit {figures['read_limit_tokens_per_s']} tokens/s)"
    )
    keys = ("raw_tokens_per_s", "planwerk_tokens_per_s", "raw_bandwidth_fraction", "planwerk_bandwidth_fraction",
            "planwerk_read_bandwidth_fraction", "planwerk_over_raw")  # fmt: skip
    print_figures(figures, title, "variant", figures["variants"], keys, as_json=as_json)
