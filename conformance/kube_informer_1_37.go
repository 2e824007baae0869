//go:build kube1_37

package main

import (
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/scheduler"
)

// The scheduler's informer factory from 1.37 on (-tags kube1_37): it takes an informer name.

func newInformerFactory(cs clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(cs, 0, nil) // no informer name, as upstream's scheduler tests
}
