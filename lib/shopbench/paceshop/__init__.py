"""PACEShop: the benchmark of seed 000 (Sections 3.1–3.2, Appendix B)."""
