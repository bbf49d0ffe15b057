"""The α–β–γ formula registry: one module per collective, each exporting ``ALGORITHMS``."""
