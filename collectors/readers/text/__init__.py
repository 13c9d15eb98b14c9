"""Text logs of any trainer: rows (JSONL, JSON lists, CSV: `generic`), key-value lines (`kvtext`), the
rows-to-schema step they share (`rows`) and following a growing file (`linetail`)."""
