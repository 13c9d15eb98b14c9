"""Readers of foreign runs, one package per source (trl/, wandb/, tensorboard/, verl/, text/); each registers itself with `collectors.sources` on import.

What they share: `keymap` (foreign names -> canonical, unit fixes), `synonyms` (custom trainers' names and
the user's `--map`), `text.rows` (a text reader's parsed rows -> numbers, canonical names, reader notes),
`folders` (a folder of log files as runs, a config beside a log) and `text.linetail` (following a growing log).
"""
