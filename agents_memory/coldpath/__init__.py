"""coldpath."""
