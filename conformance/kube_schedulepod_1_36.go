//go:build kube1_36 || kube1_37

package main

import (
	"context"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// The scheduler's SchedulePod hook from 1.36 on (-tags kube1_36, kube1_37): it takes the queued pod info.

// wrapSchedulePod puts the recorder around the scheduler's SchedulePod (one scheduling cycle's algorithm).
func (r *recorder) wrapSchedulePod(sched *scheduler.Scheduler) {
	orig := sched.SchedulePod
	sched.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, podInfo *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		return r.cycle(f, podInfo.Pod, func(rf framework.Framework) (scheduler.ScheduleResult, error) {
			return orig(ctx, rf, state, podInfo)
		})
	}
}
