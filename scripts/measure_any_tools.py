"""How many tasks on a server planwerk has no example for get a plan with calls (no hand-written example).

``PYTHONPATH=$PWD python scripts/measure_any_tools.py . /tmp/out.json [model] [domain]``

- domain ``bank`` (default): the bank-like server (``benchmarks/bank_server.py``), profile ``generic-en``
  (the generic library's examples use time, file and memory tools, so none is shown for it);
- domain ``memory``: the npm knowledge-graph memory server (``.mcp-servers``, installed by
  ``scripts/setup.d/20-mcp-servers.sh``; ``PLANWERK_MCP_SERVERS`` names another folder), with a profile file that
  is generic-en with an empty example library: the generic library has memory examples, and this measures the
  tools' own examples only.

Default model: qwen2.5-coder-1.5b (about 3 to 7 minutes a task on 2 shared CPU cores). Writes one row per task:
the plans, tool calls, answer source, and whether a call was planned.
"""

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.prompts.generic import PERSONA_EN

REPO = Path(sys.argv[1])
OUT = Path(sys.argv[2])
MODEL = sys.argv[3] if len(sys.argv) > 3 else "qwen2.5-coder-1.5b"
DOMAIN = sys.argv[4] if len(sys.argv) > 4 else "bank"
TASKS = {
    "bank": [
        "What is my current account balance?",
        "What is the IBAN of my account?",
        "Show me my three most recent transactions.",
        "Which transactions are scheduled on my account?",
        "Send 25 EUR to DE44500105175407324931 with the subject 'Books', dated 2026-11-27.",
        "Please read the file landlord-notice.txt and tell me what it says.",
        "Change my address to 5 Mill Street, York.",
        "Pay the bill in the file bill-december-2026.txt.",
    ],
    "memory": [
        "Remember that Ada Lovelace is a person who wrote the first published algorithm.",
        "Store a new entity 'Project Falcon' of type project with the observation 'deadline is in March'.",
        "Record that Ada Lovelace works on Project Falcon.",
        "What do you know about Ada Lovelace?",
        "Search your memory for anything about deadlines.",
        "Show me everything in the knowledge graph.",
        "Add the observation 'prefers email' to Ada Lovelace.",
        "Forget the entity Project Falcon.",
    ],
}


def server_config(folder: Path) -> dict:
    """The MCP config of the domain's server."""
    if DOMAIN == "bank":
        return {"bank": {"command": sys.executable, "args": ["-m", "benchmarks.bank_server", "stdio"], "cwd": str(REPO),
                         "timeout": 30}}  # fmt: skip
    servers = Path(os.environ.get("PLANWERK_MCP_SERVERS", REPO / ".mcp-servers"))
    command = servers / "node_modules" / ".bin" / "mcp-server-memory"
    if not command.exists():
        raise SystemExit(f"{command} is missing: run scripts/setup.d/20-mcp-servers.sh or set PLANWERK_MCP_SERVERS")
    env = {"MEMORY_FILE_PATH": str(folder / "memory.jsonl"), "PATH": os.environ.get("PATH", "")}
    return {"memory": {"command": str(command), "args": [], "env": env, "timeout": 30}}


def profile(folder: Path) -> str:
    """generic-en for the bank; for memory a profile file like generic-en whose example library is empty."""
    if DOMAIN == "bank":
        return "generic-en"
    (folder / "none.json").write_text("[]", encoding="utf-8")
    text = f'persona = {json.dumps(PERSONA_EN)}\nlanguage = "en"\nexamples = "none.json"\n'
    (folder / "memory-en.toml").write_text(text, encoding="utf-8")
    return str(folder / "memory-en.toml")


async def main() -> None:
    if DOMAIN not in TASKS:
        raise SystemExit(f"unknown domain {DOMAIN!r}; expected one of {', '.join(TASKS)}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="planwerk-measure-") as tmp:
        folder = Path(tmp)
        cfg = folder / "mcp.json"
        cfg.write_text(json.dumps({"mcpServers": server_config(folder)}))
        ctx = Context(today="2026-11-26", approve_destructive=False, max_plan_attempts=2)
        async with Agent(model=MODEL, profile=profile(folder), mcp_config=cfg, retriever=False, context=ctx) as agent:
            for q in TASKS[DOMAIN]:
                t = time.time()
                reply = await agent.ask(q)
                plans = [e["plan"] for e in reply.events if e["event"] == "plan"]
                row = {
                    "q": q,
                    "answer": reply.answer,
                    "plans": plans,
                    "planned_calls": any(step["tools"] for p in plans for step in p.get("steps", [])),
                    "tool_calls": reply.metadata.get("tool_calls"),
                    "source": reply.metadata.get("answer_source"),
                    "interrupts": reply.interrupts,
                    "s": round(time.time() - t, 1),
                    "events": [e["event"] for e in reply.events],
                }
                rows.append(row)
                print(json.dumps(row)[:600], flush=True)
                OUT.write_text(json.dumps(rows, indent=1))
    planned = sum(r["planned_calls"] for r in rows)
    print(f"{DOMAIN}: {planned} of {len(rows)} tasks planned calls ({MODEL})", flush=True)


asyncio.run(main())
