//go:build kube1_37

package main

import (
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// gatePop: see kube_nextpod_1_35.go; from 1.37 the scheduling loop takes an entity (a pod or a pod group) with
// Scheduler.NextEntity.
func gatePop(sched *scheduler.Scheduler, gate *popGate) {
	next := sched.NextEntity
	sched.NextEntity = func(logger klog.Logger) (framework.QueuedEntityInfo, error) {
		gate.wait(sched)
		defer gate.mu.Unlock()
		return next(logger)
	}
}
