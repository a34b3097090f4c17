#!/usr/bin/env bash
# Third-party MCP servers the bring-your-own-tools tests run against, pinned, from npm into .mcp-servers/ (needs
# node and npm: Debian's nodejs/npm via .ci/apt-packages.txt). mcp-server-time comes from PyPI with the dev extra.
# Used by the npm test tier.
# setup-for: all
set -euo pipefail
cd "$(dirname "$0")/../.."

NPM_PACKAGES=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
)
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "  skipped the npm MCP servers: node/npm are not installed (apt-get install nodejs npm); their tests will say so"
  exit 0
fi
mkdir -p .mcp-servers
npm install --prefix .mcp-servers --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}" >/dev/null
echo "  npm MCP servers in .mcp-servers/node_modules/.bin: $(ls .mcp-servers/node_modules/.bin | grep -c mcp) commands"
