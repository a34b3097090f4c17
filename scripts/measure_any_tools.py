"""How many tasks on the bank-like test server get a plan with calls (generic-en profile, no hand-written example).

``PYTHONPATH=$PWD python scripts/measure_any_tools.py . /tmp/out.json [model]`` (default model: qwen2.5-coder-1.5b;
about 3 to 7 minutes a task on 2 shared CPU cores). Writes one row per task: the plans, tool calls, answer source.
"""

import asyncio
import json
import sys
import time
from pathlib import Path

from planwerk.agent import Agent
from planwerk.graph.context import Context

REPO = Path(sys.argv[1])
OUT = Path(sys.argv[2])
MODEL = sys.argv[3] if len(sys.argv) > 3 else "qwen2.5-coder-1.5b"
TASKS = [
    "What is my current account balance?",
    "What is the IBAN of my account?",
    "Show me my three most recent transactions.",
    "Which transactions are scheduled on my account?",
    "Send 25 EUR to DE44500105175407324931 with the subject 'Books', dated 2026-11-27.",
    "Please read the file landlord-notice.txt and tell me what it says.",
    "Change my address to 5 Mill Street, York.",
    "Pay the bill in the file bill-december-2026.txt.",
]
config = {
    "mcpServers": {
        "bank": {"command": sys.executable, "args": [str(REPO / "tests/tools/bank_server.py"), "stdio"], "timeout": 30}
    }
}


async def main():
    cfg = OUT.with_suffix(".mcp.json")
    cfg.write_text(json.dumps(config))
    rows = []
    ctx = Context(today="2026-11-26", approve_destructive=False, max_plan_attempts=2)
    async with Agent(model=MODEL, profile="generic-en", mcp_config=cfg, retriever=False, context=ctx) as agent:
        for q in TASKS:
            t = time.time()
            reply = await agent.ask(q)
            plans = [e["plan"] for e in reply.events if e["event"] == "plan"]
            row = {
                "q": q,
                "answer": reply.answer,
                "plans": plans,
                "tool_calls": reply.metadata.get("tool_calls"),
                "source": reply.metadata.get("answer_source"),
                "interrupts": reply.interrupts,
                "s": round(time.time() - t, 1),
                "events": [e["event"] for e in reply.events],
            }
            rows.append(row)
            print(json.dumps(row)[:600], flush=True)
            OUT.write_text(json.dumps(rows, indent=1))


asyncio.run(main())
