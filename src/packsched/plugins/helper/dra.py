"""What DynamicResources shares with score plugins that read devices (DevicePacking): the cycle-state key under
which its PreFilter leaves, per node name, the allocations its Filter found there (one per claim to allocate)."""

from __future__ import annotations

FOUND_KEY = "DynamicResources/found"
