"""What a scan keeps between runs: per-file results, the file table, stored summaries."""
