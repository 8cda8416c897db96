"""Benchmarks of the workbench's own speed, one module per file in ``outputs/bench/`` (``make bench``)."""
