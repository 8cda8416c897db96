"""The shop verifier's judge (seed 002 §4.2-4.3, App. J-K): the registered questions and the model
judge (:mod:`.judge`), the offline reference judge (:mod:`.reference`) and its rules (:mod:`.claims`,
:mod:`.rubrics`, :mod:`.refusal`). The verifier (:mod:`shopbench.shopsim.verifier`) asks it.
"""
