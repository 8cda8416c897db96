"""Test helpers for shopbench (fake LLM endpoints and similar fixtures)."""
