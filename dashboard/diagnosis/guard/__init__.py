"""Diagnosis while a run trains: `history` (a bounded view of a growing run), `watch` (incremental
diagnosis: only what changed), `guard` (a paced watcher with sinks that may stop the run) and `watch_cli`
(`grpo-diagnose --watch` on any run the collectors read)."""
