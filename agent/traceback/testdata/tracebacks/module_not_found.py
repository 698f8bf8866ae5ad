import numpy_is_not_installed  # noqa: F401
