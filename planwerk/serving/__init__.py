"""Serving: the LangGraph server's and Aegra's entry points, above the graph.

The graph factory and checkpointer of ``langgraph.json`` (:mod:`~planwerk.serving.server`), Aegra's graph and app
(:mod:`~planwerk.serving.aegra`, :mod:`~planwerk.serving.aegra_app`), MCP sessions kept warm across runs
(:mod:`~planwerk.serving.warm`), the bearer-token check (:mod:`~planwerk.serving.auth`,
:mod:`~planwerk.serving.tokens`), the request middleware (:mod:`~planwerk.serving.context_check`,
:mod:`~planwerk.serving.disconnect`) and the durable thread stores the servers and :class:`~planwerk.agent.Agent`
share (:mod:`~planwerk.serving.sqlite_saver`, :mod:`~planwerk.serving.postgres_saver`,
:mod:`~planwerk.serving.locking`, :mod:`~planwerk.serving.threads_file`). Nothing under :mod:`planwerk.graph`
imports it.
"""
