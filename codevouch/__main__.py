from codevouch.cli import app

app(prog_name="codevouch")
