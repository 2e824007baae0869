"""The scheduling framework: extension points, Status codes, CycleState and the profile runtime."""
