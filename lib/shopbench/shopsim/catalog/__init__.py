"""The held-out control catalog of the shop environment (seed 002 §3.1 and Appendix A).

"We evaluate agents against a held-out control catalog of 10,000 products across 19 categories. We
approximate a general e-commerce storefront by averaging category shares from six retailers. This
distribution provides a grounded prior over categories rather than an exact reproduction of any
retailer." (§3.1). Appendix A averages six within-retailer shares per category and renormalises.

Our copy of the paper has Table 4's caption only, so :data:`CATEGORY_SHARES` is *our* plausible
averaging of general retailers (apparel and home lead, groceries are a small slice), not the paper's
numbers. Prices are *our* choice too: log-normal per category (a median and a log-sigma, e.g. grocery
~$4.5 / 0.45, electronics ~$60 / 1.0); each product type has a relative price factor (a laptop costs
more than a cable) whose log-spread is taken out of the within-type sigma, so the category as a whole
keeps roughly its median and sigma. Prices are rounded to cents and clipped to $0.50-$3,000.

Every product is generated from *facts*: a ``type`` (the product noun phrase, always present) plus 2-4
category facts drawn from one coherent type group (so facts never contradict each other: a plant milk
is never "grass-fed"). The title (``<Brand> <descriptor> <Type>``) and the 1-3 sentence description
are written from the same facts by :func:`describe`, so the catalog row supports every claim its
description makes. Apparel and shoes have size x colour variants, some other groups colour-only
variants, groceries none. About 5% of products are fully out of stock.

Deterministic: each category draws from its own ``random.Random`` seeded by ``(seed, category)``, with
fixed iteration orders and no global state.

The package holds one concept per module (issue 27, "Modules of one concept"):

- :mod:`.categories`: the category mix (names, grocery categories, product-id codes);
- :mod:`.words`: facts -> words (the description clauses, :func:`~.words.describe`, title casing);
- :mod:`.specs`: the category specifications (brands, styles, type groups and their facts);
- :mod:`.generate`: the seeded generator (:func:`~.generate.control_catalog`, price model, stock);
- :mod:`.files`: catalog files (:func:`~.files.load_products` for ours and DummyJSON's,
  :func:`~.files.save_products`);
- :mod:`.table`: the per-category summary table (:func:`~.table.catalog_table`).

Notebooks import the public names from :mod:`shopbench.shopsim`.
"""
