//go:build kube1_37

package main

import (
	"context"

	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// What differs between the scheduler APIs of the pinned releases; this file: 1.37 (go.1.37.mod, -tags kube1_37).

func newInformerFactory(cs clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(cs, 0, nil) // no informer name, as upstream's scheduler tests
}

// wrapSchedulePod puts the recorder around the scheduler's SchedulePod (one scheduling cycle's algorithm); from
// 1.36 it takes the queued pod info.
func (r *recorder) wrapSchedulePod(sched *scheduler.Scheduler) {
	orig := sched.SchedulePod
	sched.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, podInfo *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		return r.cycle(f, podInfo.Pod, func(rf framework.Framework) (scheduler.ScheduleResult, error) {
			return orig(ctx, rf, state, podInfo)
		})
	}
}
