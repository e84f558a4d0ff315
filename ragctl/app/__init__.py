"""The front ends: the command line, the warm service and its clients, MCP and chat.

``quick`` is the entry point (``ragctl search`` through a running service with the
standard library alone), ``cli`` parses options and renders with ``display`` and
``progress``, ``service`` and ``client`` the socket and HTTP API, ``mcpserver`` the MCP
tools, ``chat`` the follow-up questions. Nothing below imports from here.
"""
