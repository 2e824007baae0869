"""Scheduler plugins, one folder per plugin, and the registry of those packsched implements."""
