try:
    from codevouch.cli import main
except KeyboardInterrupt:  # Ctrl-C while still importing: no traceback either
    raise SystemExit(130) from None

main()
