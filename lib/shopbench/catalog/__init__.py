"""Product catalogs, queries and evidence retrieval for PACEShop (seed 000, Appendix B.3, B.8)."""
