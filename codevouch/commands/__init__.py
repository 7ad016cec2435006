"""One module per CLI command; each parses, calls `codevouch.api.Index`, renders, maps errors.

`codevouch/cli.py` only assembles them into the typer app.
"""
