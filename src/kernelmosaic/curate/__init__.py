"""curate stage."""
