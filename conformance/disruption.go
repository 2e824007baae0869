package main

// PodDisruptionBudgets: no disruption controller runs beside the scheduler, and preemption reads a budget's
// status.disruptionsAllowed. Before each pod is created the recorder writes every budget's status as the
// controller would for the pods then on nodes (taken as healthy: no kubelet makes them Ready here), for budgets
// with an integer minAvailable (the controller's desiredHealthy is then that number, whatever owns the pods).

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func (r *recorder) updateBudgets(ctx context.Context) error {
	pdbs, err := r.client.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
	if err != nil || len(pdbs.Items) == 0 {
		return err
	}
	pods, err := r.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	want := map[string]int32{}
	for i := range pdbs.Items {
		pdb := pdbs.Items[i].DeepCopy()
		min := pdb.Spec.MinAvailable
		if min == nil || min.Type != intstr.Int || pdb.Spec.MaxUnavailable != nil {
			return fmt.Errorf("poddisruptionbudgets %s/%s: only an integer minAvailable is modelled (no disruption "+
				"controller runs)", pdb.Namespace, pdb.Name)
		}
		selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			return err
		}
		expected, healthy := budgetPods(pods.Items, pdb.Namespace, selector)
		allowed := healthy - min.IntVal
		if expected <= 0 || allowed < 0 {
			allowed = 0
		}
		pdb.Status = policyv1.PodDisruptionBudgetStatus{
			ObservedGeneration: pdb.Generation,
			CurrentHealthy:     healthy,
			DesiredHealthy:     min.IntVal,
			ExpectedPods:       expected,
			DisruptionsAllowed: allowed,
		}
		pdb.ResourceVersion = r.version()
		if _, err := r.client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
			return err
		}
		want[pdb.Namespace+"/"+pdb.Name] = allowed
	}
	// the scheduler's preemption reads the budgets from its informer: wait until it has these
	lister := r.informers.Policy().V1().PodDisruptionBudgets().Lister()
	deadline := time.Now().Add(r.timeout)
	for key, allowed := range want {
		for {
			ns, name := splitKey(key)
			if got, err := lister.PodDisruptionBudgets(ns).Get(name); err == nil && got.Status.DisruptionsAllowed == allowed &&
				got.Status.ObservedGeneration == got.Generation && got.Status.ExpectedPods >= 0 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("poddisruptionbudget %s: status not seen by the scheduler's informer", key)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// budgetPods: the pods of the namespace the selector matches (expected) and those of them on a node (healthy).
func budgetPods(pods []v1.Pod, namespace string, selector labels.Selector) (int32, int32) {
	var expected, healthy int32
	for i := range pods {
		p := &pods[i]
		if p.Namespace != namespace || p.DeletionTimestamp != nil || !selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		expected++
		if p.Spec.NodeName != "" {
			healthy++
		}
	}
	return expected, healthy
}

func splitKey(key string) (string, string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}
