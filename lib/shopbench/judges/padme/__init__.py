"""PADMÉ's judges (seed 003 H.4-H.5): the filter judges (:mod:`.filters`), the evaluators under test
(:mod:`.evaluators`), their roster (:mod:`.roster`) and scoring runs (:mod:`.sweep`).
"""
