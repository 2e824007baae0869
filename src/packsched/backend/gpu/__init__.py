"""Shared GPUs below the plugins: the per-node device table (free milli-GPU per GPU) that follows a snapshot, and
FGD's fragmentation measure over it. The GPU plugins and the trace replay (which reports fragmentation) both read
them; neither owns them."""
