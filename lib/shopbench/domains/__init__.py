"""Environments as domains: each domain has its own data model, tools, environment (the rules
:func:`shopbench.env.run_conversation` plays by) and reward.

- the seeded shop of seed 002: :mod:`shopbench.shopsim` (data model ``types``, tools ``store`` and
  ``registry``, environment ``environment``, reward/verifier ``verifier``);
- τ²-bench retail: :mod:`shopbench.domains.tau2_retail`.
"""
