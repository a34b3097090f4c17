"""``read_resource``: one built-in tool that reads an MCP resource by URI, for every server that offers resources.

It is an ordinary tool of the :class:`~planwerk.tools.mcp.MCPToolSource` catalog, so a plan calls it like any other
(``{"id": "doc", "name": "read_resource", "args": {"uri": {"$ref": "links.content.1.uri"}}}``): the plan check
validates its arguments, the call runs as its own durable node run with the server's timeout, and its failures have
kinds. Pure parts live here (the spec, choosing the server); the request itself is made by ``planwerk.tools.mcp``.

**Which server.** One tool for all servers keeps the catalog short for a small model. With one server offering
resources, ``server`` is not even shown. With several, ``server`` is optional: a URI the servers' resource lists
name, or one under a server's URI template (the text before its first ``{``), goes to that server; otherwise the
plan must name it, and the call fails with kind ``invalid_arguments`` saying which servers there are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planwerk.core.tools import ToolError, ToolSpec

READ_RESOURCE = "read_resource"
"""The built-in tool's name (not offered when a server has a tool of that name: the server's tool wins)."""
MAX_URIS_IN_DESCRIPTION = 6
"""Resource URIs (and templates) named in the tool's description; the catalog cuts long descriptions anyway."""
NOT_FOUND_CODE = -32002
"""JSON-RPC error code the MCP spec gives "resource not found"."""


@dataclass(frozen=True)
class ResourceCatalog:
    """What one server says it has: listed resource URIs and URI templates."""

    server: str
    uris: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()

    def has(self, uri: str) -> bool:
        """Whether ``uri`` is one of the listed resources or lies under one of the templates."""
        return uri in self.uris or any(
            _template_prefix(t) and uri.startswith(_template_prefix(t)) for t in self.templates
        )


def _template_prefix(template: str) -> str:
    return template.split("{", 1)[0]


def read_resource_spec(catalogs: Sequence[ResourceCatalog], timeout_s: float | None = None) -> ToolSpec:
    """The ``read_resource`` tool as the planner and the plan check see it."""
    properties: dict[str, Any] = {
        "uri": {"type": "string", "description": "the resource's URI (a resource_link's uri, or a listed resource)"}
    }
    if len(catalogs) > 1:
        properties["server"] = {
            "type": "string",
            "enum": [c.server for c in catalogs],
            "description": "the server that has it (needed only for a URI no server lists)",
        }
    known = [uri for c in catalogs for uri in (*c.uris, *c.templates)]
    description = (
        "Reads a resource by URI; the result is {text, content: [{type: resource, uri, mimeType, text|blob}]}."
    )
    if known:
        shown = ", ".join(known[:MAX_URIS_IN_DESCRIPTION]) + (", …" if len(known) > MAX_URIS_IN_DESCRIPTION else "")
        description += f" Resources: {shown}"
    return ToolSpec(
        name=READ_RESOURCE,
        description=description,
        input_schema={"type": "object", "properties": properties, "required": ["uri"], "additionalProperties": False},
        server=catalogs[0].server if len(catalogs) == 1 else None,
        timeout_s=timeout_s,
        read_only=True,  # MCP resources/read only reads: no answer needs a call of it to say something was done
    )


def choose_server(arguments: Mapping[str, Any], catalogs: Sequence[ResourceCatalog]) -> tuple[str, str]:
    """``(server, uri)`` for a ``read_resource`` call whose arguments passed the schema check.

    Raises :class:`ToolError` (``invalid_arguments``) when the URI is empty, the server is unknown, or several
    servers could have it and none is named.
    """
    uri = str(arguments.get("uri") or "").strip()
    names = [c.server for c in catalogs]
    if not uri:
        raise ToolError(
            f"{READ_RESOURCE}: uri is empty; expected a resource URI", tool=READ_RESOURCE, kind="invalid_arguments"
        )
    named = arguments.get("server")
    if named is not None:
        if named not in names:
            raise ToolError(
                f"{READ_RESOURCE}: server {named!r} offers no resources; expected one of: {', '.join(names)}",
                tool=READ_RESOURCE,
                kind="invalid_arguments",
            )
        return str(named), uri
    if len(catalogs) == 1:
        return catalogs[0].server, uri
    having = [c.server for c in catalogs if c.has(uri)]
    if len(having) >= 1:
        return having[0], uri
    raise ToolError(
        f"{READ_RESOURCE}: no server lists {uri!r}; name the server (one of: {', '.join(names)})",
        tool=READ_RESOURCE,
        kind="invalid_arguments",
    )
