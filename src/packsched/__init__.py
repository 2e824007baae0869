"""packsched: kube-scheduler bin packing and elastic quotas, simulated and live."""
