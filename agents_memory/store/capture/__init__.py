"""What capture keeps beside the rows: per-file cursors, pauses and tombstones."""
