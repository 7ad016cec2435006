"""Index health, a feature above the store: what the usage records and the index's distance from
HEAD say about the index (assess), and that report for a terminal (render). The records
themselves are storage (codevouch/store/usage.py); the git facts come from the caller (api.py)."""
