"""Numbers the PACEShop paper reports (seed 000, Tables 8, 10, 11), for side-by-side comparison
with what our build produces. Where our copy lost a number, it is absent here, not invented."""

TABLE8 = {
    "Backbone queries (public)": 97227,
    "Evidence-backed queries (>= 3 products)": 1132,
    "Persona pool": 1200,
    "Query-persona pairs": 4525,
    "Evidence records (11 domains)": 4460,
    "Review-augmented records": 129,
    "Median evidence IDs / response": 10,
    "GOOD": 4525,
    "BAD": 18100,
    "Total records": 22625,
    "Train": 15825,
    "Dev": 3400,
    "Test": 3400,
    "Stealth-defect fraction": 0.351,
    "L1 checks pass rate (GOOD)": 0.993,
    "Human-calibration package": 250,
}

TABLE10_VERTICALS = {  # vertical: (backbone, retained)
    "Toys & Games": (17279, 235), "Electronics": (8044, 186), "Tools & Automotive": (13429, 157),
    "Home & Kitchen": (12439, 144), "Apparel & Accessories": (13874, 104), "Pet & Baby": (6859, 76),
    "General Merchandise": (7216, 66), "Sports & Outdoors": (6196, 62), "Office & School": (5009, 46),
    "Beauty & Health": (2901, 33), "Books & Media": (3981, 23),
}  # fmt: skip

TABLE11_MISSIONS = {
    "Broad Browse": (32889, 312), "Replenishment & Repeat": (20166, 241), "Problem Solution": (14533, 217),
    "Compatibility & Replacement": (9807, 144), "Gift & Event": (12386, 129), "Feature Constrained": (7446, 89),
}  # fmt: skip
