"""planwerk: a LangGraph agent that plans tool chains as JSON and runs them through MCP tools on local models.

Start with :class:`planwerk.agent.Agent` (Python), ``planwerk`` (CLI) or ``langgraph dev`` (server).
"""

__version__ = "0.1.0"
