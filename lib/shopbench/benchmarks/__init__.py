"""Benchmarks of ``make bench`` (``python -m shopbench.bench``): one module per benchmark, JSON in ``outputs/bench/``."""
