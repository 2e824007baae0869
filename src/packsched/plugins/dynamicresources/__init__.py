"""DynamicResources: devices for the ResourceClaims of pods (DRA)."""
