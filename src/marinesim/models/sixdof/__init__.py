"""The shared 6-DOF core: one source for each law of rigid-body marine-craft motion.

* :mod:`.terms` — the textbook terms as plain functions on floats (Fossen 2021): rigid-body
  and added-mass Coriolis, damping, restoring forces, current in the body frame;
* :mod:`.generic` — the generic Fossen 6-DOF vehicle (``fossen6dof``) composed from them;
* :mod:`.pvs_vehicles` — PythonVehicleSimulator's REMUS 100 and Otter: the same terms plus
  each vehicle's own force and actuator terms;
* :mod:`.guard` — the divergence guard every model applies after a step.

Rotations and attitude kinematics come from :mod:`marinesim.core.frames`, integrator stages
from :mod:`marinesim.models.integrate`.  Every function here is registered with
``numba.extending.register_jitable``: it is a plain Python function, and numba compiles the
same source for the CPU (one ``prange`` iteration per vehicle) and as CUDA device functions
(one thread per vehicle); :mod:`marinesim.models.backends` chooses and launches them.
"""
