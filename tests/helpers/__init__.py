"""What the tests share: the repository's paths (paths.py), the dashboard's fixtures (dash_fixtures.py,
browser_fixtures.py, hostile_roots.py, open_watch.py), the Chinese-page checker (zh_words.py), the accuracy
goals not met yet (accuracy_not_yet.py), the reader fuzzer (fuzz/) and the trainer's fault injector (faults/).
tests/conftest.py puts tests/ on sys.path, so a test imports `helpers.X`."""
