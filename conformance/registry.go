package main

import frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

// outOfTreeRegistry: the plugins beyond the in-tree ones. scheduler-plugins' CapacityScheduling and Coscheduling
// are not built in yet (see docs/reference/conformance.md, "Not covered").
func outOfTreeRegistry() frameworkruntime.Registry {
	return frameworkruntime.Registry{}
}
