"""Batch runs: replicas, parameter sweeps and Monte-Carlo studies on Dask distributed.

``marinesim.batch.run(scenario, replicas=M, sweep=..., outdir=DIR)`` runs every (design point,
replica) of a scenario and returns a :class:`BatchResult` whose ``runs`` is the runs table as a
pandas DataFrame (also ``DIR/runs.parquet``).  See :mod:`marinesim.batch.design` for sweeps,
:mod:`marinesim.batch.runner` for the files written and the fault handling.
"""

from marinesim.batch.design import Sweep, parse_sweep
from marinesim.batch.plan import Plan, make_plan
from marinesim.batch.runner import BatchResult, run

__all__ = ["BatchResult", "Plan", "Sweep", "make_plan", "parse_sweep", "run"]
