"""Scheduling queue (active / backoff / unschedulable), nominations and disruption budgets."""
