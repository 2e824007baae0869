"""scheduler-plugins Coscheduling: gang scheduling with PodGroups."""
