"""marinesim.interop.moos: the MOOS face of the uSimMarine model.

Modules: ``moosfile`` (read ``.moos`` files), ``script`` (timed event scripts), ``files``
(load a uSimMarine configuration or a current-field file), ``runner`` (``marinesim usm run``),
``interface`` (generated ``--example`` / ``--interface`` / ``check`` texts).
"""
