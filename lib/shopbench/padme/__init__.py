"""PADMÉ: steered trajectory-pair synthesis, a filter cascade and pointwise-to-pairwise meta-evaluation
(seed 003, "Preference Alignment Data Synthesis for Meta-Evaluation of LM Agent Evaluators").

Modules, in pipeline order:

* :mod:`~shopbench.padme.types` — the data model (Criterion, Task, Context, Rollout, Vote, Pair).
* :mod:`~shopbench.padme.criteria` — the H.1 criteria and loading criteria from files.
* :mod:`~shopbench.padme.cells` — the task x criterion cells with a stratified level contrast (§3.1).
* :mod:`~shopbench.padme.steering` — WriteSteer (H.2) and the offline scripted steering.
* :mod:`~shopbench.padme.sources` — trajectory sources (the Roll function).
* :mod:`~shopbench.padme.heuristics` — a lexical reference scorer (offline stand-in, not a judge of record).
* :mod:`~shopbench.padme.filters` — the filter judges J_k (H.4).
* :mod:`~shopbench.padme.cascade` — Algorithm 1: generation, filtering and retries, resumable.
* :mod:`~shopbench.padme.dataset` — the pairs dataset on disk and exports for annotation / the human study.
* :mod:`~shopbench.padme.tables` — Tables 1, 6, 8, 9, 10, 20, 21 from the pairs table and call logs.
* :mod:`~shopbench.padme.study` — the human-study analysis (Section 5.2, App. C–E) on the general
  estimators of :mod:`shopbench.stats`.

Submodules are imported on demand (``from shopbench.padme.cascade import run_cascade``) so that
importing the package stays cheap.
"""
