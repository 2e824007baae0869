"""Kubernetes objects packsched reads, quantities as exact integers, resource lists."""
