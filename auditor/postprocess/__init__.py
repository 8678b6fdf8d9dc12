"""Stage 5 of a scan: suppression comments, baselines, the diff filter and stable fingerprints."""
