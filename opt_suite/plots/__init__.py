"""Pictures of a run's artefacts (matplotlib, Agg backend; imported only by commands that draw)."""
