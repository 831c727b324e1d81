"""Where a run's episodes go: this machine or a Ray cluster (`executor.py`, `ray_executor.py`), behind one executor
interface the agent's `generate` and `evaluate` both open; the episodes themselves are the caller's (`Solver`: the
agent's loop, in this process or in episode actors). Model calls per endpoint are bounded across a cluster
(`limits.py`)."""
