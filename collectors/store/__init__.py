"""Our run format: the writer, its Parquet parts, run.json, and the reader of run folders (load_run).

Empty on purpose: `collectors.meta` imports `collectors.store.atomic`, so importing this package must not
pull in the modules that import `collectors.meta` back.
"""
