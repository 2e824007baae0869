//go:build !kube1_34

package main

import fwk "k8s.io/kube-scheduler/framework"

// Framework types from 1.35 on: in the k8s.io/kube-scheduler/framework staging module.

type preFilterResult = fwk.PreFilterResult
type nodePluginScores = fwk.NodePluginScores
type waitingPod = fwk.WaitingPod
