"""``planwerk index``: build a persisted retrieval index and search it (mounted by ``planwerk/cli.py``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

index_app = typer.Typer(
    help="Build and search the retrieval index (hybrid: FAISS + German BM25).", no_args_is_help=True
)

IndexDirOption = Annotated[
    Path | None,
    typer.Option("--index-dir", help="Index folder (default: $PLANWERK_HOME/index/<name>)."),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="Embedder: embeddinggemma (multilingual; scripts/setup.d/50-embeddinggemma.sh), a sentence-transformers "
        "folder or hub name (default: packaged all-MiniLM-L6-v2, English).",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]


def _offline() -> None:
    # Nothing may come from a model hub at run time unless the user says otherwise.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _fail(message: str) -> None:
    Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code=2)


@index_app.command("build")
def build(
    paths: Annotated[list[Path], typer.Argument(help="Text files or folders of .txt/.md files.")],
    index_dir: IndexDirOption = None,
    model: ModelOption = None,
    as_json: JsonOption = False,
) -> None:
    """Chunk and embed PATHS into a persisted index; unchanged documents are not embedded again."""
    _offline()
    from planwerk.rag.retriever import load_retriever  # here: faiss loads only for the command that needs it

    try:
        retriever = load_retriever(paths, index_dir=index_dir, model=model, progress=not as_json)
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
        return
    report = retriever.index.last_update
    summary = {
        "index_dir": str(retriever.index.directory),
        "model": retriever.index.model,
        "documents": len(retriever.index.documents),
        "embedded_chunks_total": retriever.index.embedded_total,
        **(report.to_json() if report else {}),
    }
    if as_json:
        typer.echo(json.dumps(summary, ensure_ascii=False))
        return
    console = Console(soft_wrap=True)
    console.print(
        f"[bold]{summary['action']}[/] {summary['index_dir']} ({summary['reason']}): "
        f"{summary['documents']} documents, {summary['total_chunks']} chunks, index {summary['index_type']}, "
        f"model {summary['model']}; embedded {summary['embedded_chunks']} chunks now, "
        f"reused {summary['reused_chunks']}."
    )


@index_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="The question to retrieve context for.")],
    k: Annotated[int, typer.Option("-k", "--top", min=1, help="Number of hits.")] = 4,
    paths: Annotated[
        list[Path] | None, typer.Option("--path", help="Corpus files/folders (default: packaged corpus).")
    ] = None,
    index_dir: IndexDirOption = None,
    model: ModelOption = None,
    threshold: Annotated[float | None, typer.Option(min=0.0, max=1.0, help="Relevance threshold.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Search the index: the top hits above the relevance threshold, best first."""
    _offline()
    from planwerk.rag.retriever import load_retriever  # here: faiss loads only for the command that needs it

    try:
        retriever = load_retriever(paths or None, index_dir=index_dir, model=model, threshold=threshold)
        hits = retriever.search(query, k)
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
        return
    if as_json:
        typer.echo(json.dumps({"query": query, "threshold": retriever.threshold, "hits": hits}, ensure_ascii=False))
        return
    console = Console()
    if not hits:
        console.print(f"No hit scores at least {retriever.threshold:.2f} for {query!r}.")
        return
    table = Table(title=f"Top {len(hits)} for {query!r} (threshold {retriever.threshold:.2f})")
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("source")
    table.add_column("text", overflow="fold")
    for n, hit in enumerate(hits, start=1):
        text = hit["text"] if len(hit["text"]) <= 240 else hit["text"][:237] + "..."
        table.add_row(str(n), f"{hit['score']:.3f}", hit["source"], text)
    console.print(table)


if __name__ == "__main__":
    index_app()
