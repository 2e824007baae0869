"""kube-scheduler's own GangScheduling (feature gates GangScheduling, GenericWorkload)."""
