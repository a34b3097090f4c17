"""Tests against real third-party MCP servers (npm and PyPI packages the setup installs)."""
