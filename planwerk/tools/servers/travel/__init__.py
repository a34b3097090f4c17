"""The travel MCP server (geocoding, weather, spots, ranking); see :mod:`.server`."""
