"""Readers of trackers' local stores: trackio projects and MLflow's `mlflow.db` / `mlruns/`, read without the trackers."""
