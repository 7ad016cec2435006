try:
    from codevouch.cli import main
except KeyboardInterrupt:  # Ctrl-C while still importing: no traceback either
    # commands.exits.EXIT_INTERRUPTED, spelled out: importing it would import codevouch first,
    # the very import a Ctrl-C here may have cut short.
    raise SystemExit(130) from None

main()
