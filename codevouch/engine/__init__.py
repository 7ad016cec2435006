"""The resident engine behind the CLI: one warm process per user, index directory and install.

    paths     where its socket lives (a private directory), the install's identity
    protocol  the frames on the socket, the peer check, the request's environment
    client    what `codevouch` runs first: forward a read command, or say "run it here"
    execute   the engine's side of one call: the CLI's own app, with the caller's argv, cwd and env
    server    the engine: accept, check the peer, run calls one at a time, exit when idle
    command   `codevouch serve` (--status, --stop)

The client imports the standard library only (socket, json, os): no typer, chromadb, numpy,
torch or tantivy. See docs/ENGINE.md.
"""
