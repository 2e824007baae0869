"""Embedded simulator: runs the scheduler over manifests or traces, in virtual time."""
