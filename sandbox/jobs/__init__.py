"""Building jobs from what a caller asked: one run (`build`) or a sweep's shards (`sweeps`)."""
