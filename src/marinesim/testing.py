"""Public conformance checkers for plugins and models (``check_plugin``, ``check_model``)."""
