"""Judging on a Ray cluster: the `[scale]` settings and the cluster connection (`config.py`, `cluster.py`), where
judges and episode actors go (`placement.py`), judge actors that hold a GPU and its warm workers (`judges.py`), the
dispatcher that sends compile tasks and judgements to them (`dispatch.py`), a verifier set over them
(`verifier.py`) and the executor `verify-batch --executor ray` uses (`executor.py`). Ray is imported only when the
`ray` executor is used (the `[ray]` extra); the verifier's worker side never imports it. See docs/scale.md."""
