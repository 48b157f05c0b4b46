"""From raw facts to what a user reads: `classify` (the one classifier), the text report,
the diff of two runs and the row-per-runtime matrix."""
