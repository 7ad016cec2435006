"""One module per language codevouch parses, each defining one `spec.Language`; the registry
(syntax/registry.py) lists them."""
