"""NCCL\x27s own tuning model (placeholder; see the package of the model)."""
