//go:build !kube1_37

package main

import (
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// gatePop makes the scheduling loop take the next pod only while the recorder does not hold gate, and only when
// the active queue has one (1.35 and 1.36: Scheduler.NextPod; 1.37 renamed it, kube_nextpod_1_37.go).
func gatePop(sched *scheduler.Scheduler, gate *popGate) {
	next := sched.NextPod
	sched.NextPod = func(logger klog.Logger) (*framework.QueuedPodInfo, error) {
		gate.wait(sched)
		defer gate.mu.Unlock()
		return next(logger)
	}
}
