"""Benchmarks of ``make bench`` that need more than one module (reliability: issue 12 §6)."""
