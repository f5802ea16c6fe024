"""marinesim.allocation: thruster allocation for real ROVs (``specs/allocation.md``).

Modules (import what you need; nothing is imported here):

* :mod:`marinesim.allocation.tam` — thruster geometry → allocation matrix B, B⁺, weighted
  pseudo-inverse, rank, singular values, condition numbers.
* :mod:`marinesim.allocation.solve` — allocators that respect the T200's voltage-dependent
  limits and the current limits: ``pinv`` (exact uniform scaling, vectorised), ``qp``
  (bounded least squares with DOF priorities, batched), ``direct`` (LP), wrench envelopes.
* :mod:`marinesim.allocation.ardusub` — ArduSub's 6-DOF factor mixer (peer baseline).
* :mod:`marinesim.allocation.vehicles` — thruster layouts (BlueROV2 Heavy, RexROV, ...).
"""
