"""grposcope collectors: the run format (writer, reader, live tail) and readers of foreign runs.

No torch and no streamlit here: the dashboard and the diagnosis read runs through this package alone.
"""

from collectors.discovery import discover_runs
from collectors.meta import RunError, RunMeta
from collectors.run import Problem, Run, RunInfo
from collectors.sources import open_run, open_runs, register_source
from collectors.store.load import load_run
from collectors.store.writer import Interrupted, RunWriter

__all__ = ["Interrupted", "Problem", "Run", "RunError", "RunInfo", "RunMeta", "RunWriter", "discover_runs",
           "load_run", "open_run", "open_runs", "register_source"]
