"""Packing validated snippets into a context that fits a model's token budget."""
