//go:build kube1_34

package main

import "k8s.io/kubernetes/pkg/scheduler/framework"

// Framework types as 1.34 has them (go.1.34.mod, -tags kube1_34): still in pkg/scheduler/framework, not yet in
// the k8s.io/kube-scheduler/framework staging module.

type preFilterResult = framework.PreFilterResult
type nodePluginScores = framework.NodePluginScores
type waitingPod = framework.WaitingPod
