"""planwerk's benchmarks: ``python -m benchmarks --help`` in a checkout (they are not installed with planwerk)."""
