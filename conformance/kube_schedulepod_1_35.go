//go:build !kube1_36 && !kube1_37

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// The scheduler's SchedulePod hook as 1.34 and 1.35 have it (go.1.34.mod, go.mod): it takes the pod.

// wrapSchedulePod puts the recorder around the scheduler's SchedulePod (one scheduling cycle's algorithm).
func (r *recorder) wrapSchedulePod(sched *scheduler.Scheduler) {
	orig := sched.SchedulePod
	sched.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, pod *v1.Pod) (scheduler.ScheduleResult, error) {
		return r.cycle(f, pod, func(rf framework.Framework) (scheduler.ScheduleResult, error) {
			return orig(ctx, rf, state, pod)
		})
	}
}
