"""Readers of foreign runs, one module per source; each registers itself with `collectors.sources` on import.

What they share: `keymap` (foreign names -> canonical, unit fixes) and `linetail` (following a growing log).
"""
