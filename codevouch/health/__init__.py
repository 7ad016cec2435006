"""Index health and status, a feature above the store: what the usage records and the index's
distance from HEAD say about the index (assess), the git and ledger facts it is judged on (gather),
that report for a terminal (render), a call's usage record (usage), and `index status` with each
branch's head and commits behind (status).
The records and the branch rows are storage (codevouch/store/usage.py, status.py); the git
facts are fetched here or by the caller (api.py), never by the store."""
