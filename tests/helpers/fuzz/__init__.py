"""Fuzzing of every registered reader on mutated valid files (tests/collectors/test_fuzz_readers.py, benchmarks/fuzz_readers.py)."""
