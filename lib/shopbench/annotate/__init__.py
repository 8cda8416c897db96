"""Human annotation of pairs (PADMÉ Section 4 "Human Validation Protocol", Appendix D.1 and H.6).

``pairs`` (the pair model, importers, panels), ``store`` (append-only answers per annotator),
``render`` (HTML of items and documents), ``widget`` (the anywidget interface), ``serve`` (Voila
launcher), ``notebook`` (writes notebooks/60_annotate_pairs.ipynb).
"""
