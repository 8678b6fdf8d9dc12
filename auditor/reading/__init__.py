"""Stage 2 of a scan: the files' bytes, their decoding, and the pre-filter's verdict on each."""
