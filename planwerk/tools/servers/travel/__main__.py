"""``python -m planwerk.tools.servers.travel [stdio|http] [--host H] [--port N]``."""

from planwerk.tools.servers._run import serve
from planwerk.tools.servers.travel.server import build_server

serve(build_server)
