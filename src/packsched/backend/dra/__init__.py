"""DRA: the structured-parameters allocator."""
