"""marinesim.allocation: thruster allocation for real ROVs (``specs/allocation.md``).

Modules (import what you need; nothing is imported here):

* :mod:`marinesim.allocation.tam` — thruster geometry → allocation matrix B, B⁺, weighted
  pseudo-inverse, rank, singular values, condition numbers.
* :mod:`marinesim.allocation.solve` — :class:`Allocator`: allocators that respect the T200's
  voltage-dependent limits and the current limits, one module per idea:
  :mod:`~marinesim.allocation.pinv` (exact uniform scaling, a compiled kernel),
  :mod:`~marinesim.allocation.qp` (bounded least squares with DOF priorities, failures and
  rate limits, batched; redistributed pseudo-inverse), :mod:`~marinesim.allocation.direct`
  (LP, wrench envelopes), :mod:`~marinesim.allocation.limits` (limits, result type, shared
  limit handling), :mod:`~marinesim.allocation.kernels` (the compiled per-vehicle functions).
* :mod:`marinesim.allocation.ardusub` — ArduSub's 6-DOF factor mixer (peer baseline).
* :mod:`marinesim.allocation.vehicles` — thruster layouts (BlueROV2 Heavy, RexROV, ...).
"""
