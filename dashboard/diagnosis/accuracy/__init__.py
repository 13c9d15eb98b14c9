"""How right the diagnosis is: `corpora` (sample_runs, the real runs with labels, the TRL-made runs) and
`scoring` (recall, precision and false criticals per corpus, the confusion table per rule)."""
