"""archivefs benchmarks: each module compares archivefs with the plain alternative in one run."""
