"""Environments as domains: each domain has its own data model, tools, environment (the rules
:func:`shopbench.env.run_conversation` plays by) and reward.

- the seeded shop of seed 002: :mod:`shopbench.shopsim` (data model ``types``, tools ``store`` and
  ``registry``, environment ``environment``, reward/verifier ``verifier``);
- τ²-bench retail: :mod:`shopbench.domains.tau2_retail`; airline, banking_knowledge, telecom:
  :mod:`.airline`, :mod:`.banking_knowledge`, :mod:`.telecom`;
- one interface over the four τ² domains: :mod:`.base` (``load_domain``), their users and reference
  agents: :mod:`.parties` (issue 28 items 3-4).
"""
