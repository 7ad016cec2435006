"""codevouch: a code retrieval index that checks retrieved code against the working tree."""

__version__ = "0.1.0"
