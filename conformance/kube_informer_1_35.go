//go:build !kube1_37

package main

import (
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/scheduler"
)

// The scheduler's informer factory as 1.34 to 1.36 have it (-tags kube1_34, go.mod, -tags kube1_36): no informer name.

func newInformerFactory(cs clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(cs, 0)
}
