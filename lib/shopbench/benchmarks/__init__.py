"""Benchmarks (``make bench`` → ``outputs/bench/<file>.json``); ``python -m shopbench.benchmarks`` runs them.

Speed and memory goals are measured here, never asserted in tests. Each benchmark runs in its own
subprocess so that its peak RSS is its own (:func:`shopbench.benchmarks.common.rss_mb`).
"""
