//go:build !kube1_34

package main

import frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

// outOfTreeRegistry: the plugins beyond the in-tree ones. scheduler-plugins' CapacityScheduling and Coscheduling
// are built into the 1.34 recorder only (registry_1_34.go): scheduler-plugins v0.34.7 pairs with 1.34 (see
// docs/reference/conformance.md).
func outOfTreeRegistry() frameworkruntime.Registry {
	return frameworkruntime.Registry{}
}

// servedKinds: the custom resources the recorder's API endpoint serves (crd.go), by the scenario's objects key.
var servedKinds = map[string]servedKind{}
