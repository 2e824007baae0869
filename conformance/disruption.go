package main

// PodDisruptionBudgets: no disruption controller runs beside the scheduler, and preemption reads a budget's
// status.disruptionsAllowed. Before each pod is created the recorder writes every budget's status as the
// controller would for the pods then on nodes (taken as healthy: no kubelet makes them Ready here): an integer
// minAvailable is desiredHealthy as it is, over every pod the budget selects; a percentage minAvailable or a
// maxUnavailable is taken of the scale of the pods' controllers (a ReplicationController, a ReplicaSet, the
// Deployment that owns one, a StatefulSet; a pod no controller owns counts for nothing), rounded up; a budget that
// expects no pod allows no disruption; one whose pod names a controller that does not exist fails safe (none).

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
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
		selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			return err
		}
		selected := budgetPods(pods.Items, pdb.Namespace, selector)
		var healthy int32
		for _, p := range selected {
			if p.Spec.NodeName != "" {
				healthy++
			}
		}
		expected, desired, err := r.expectedPods(ctx, pdb, selected)
		allowed := healthy - desired
		if err != nil || expected <= 0 || allowed < 0 {
			allowed = 0 // the controller fails safe on an error
		}
		pdb.Status = policyv1.PodDisruptionBudgetStatus{
			ObservedGeneration: pdb.Generation,
			CurrentHealthy:     healthy,
			DesiredHealthy:     desired,
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

// budgetPods: the pods of the namespace the selector matches.
func budgetPods(pods []v1.Pod, namespace string, selector labels.Selector) []*v1.Pod {
	var out []*v1.Pod
	for i := range pods {
		p := &pods[i]
		if p.Namespace != namespace || p.DeletionTimestamp != nil || !selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// expectedPods: the disruption controller's expectedCount and desiredHealthy for the budget over its pods.
func (r *recorder) expectedPods(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []*v1.Pod) (int32, int32, error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		expected, err := r.controllersScale(ctx, pods)
		if err != nil {
			return 0, 0, err
		}
		most, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, 0, err
		}
		return expected, max(expected-int32(most), 0), nil
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		return int32(len(pods)), pdb.Spec.MinAvailable.IntVal, nil
	case pdb.Spec.MinAvailable != nil:
		expected, err := r.controllersScale(ctx, pods)
		if err != nil {
			return 0, 0, err
		}
		least, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		return expected, int32(least), err
	}
	return 0, 0, nil
}

// controllersScale: the sum of the scales of the pods' controllers, each counted once (pods without one skipped),
// as the disruption controller's finders find them.
func (r *recorder) controllersScale(ctx context.Context, pods []*v1.Pod) (int32, error) {
	scale := map[types.UID]int32{}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue // unmanaged: counts for nothing
		}
		if _, ok := scale[ref.UID]; ok {
			continue
		}
		uid, n, err := r.controllerScale(ctx, ref, p.Namespace)
		if err != nil {
			return 0, err
		}
		scale[uid] = n
	}
	var total int32
	for _, n := range scale {
		total += n
	}
	return total, nil
}

func (r *recorder) controllerScale(ctx context.Context, ref *metav1.OwnerReference, ns string) (types.UID, int32, error) {
	apps := r.client.AppsV1()
	switch ref.Kind {
	case "ReplicationController":
		rc, err := r.client.CoreV1().ReplicationControllers(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err == nil && rc.UID == ref.UID {
			return rc.UID, ptr.Deref(rc.Spec.Replicas, 1), nil
		}
	case "ReplicaSet":
		rs, err := apps.ReplicaSets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err == nil && rs.UID == ref.UID {
			if owner := metav1.GetControllerOf(rs); owner != nil && owner.Kind == "Deployment" {
				d, err := apps.Deployments(ns).Get(ctx, owner.Name, metav1.GetOptions{})
				if err == nil && d.UID == owner.UID {
					return d.UID, ptr.Deref(d.Spec.Replicas, 1), nil
				}
				break
			}
			return rs.UID, ptr.Deref(rs.Spec.Replicas, 1), nil
		}
	case "StatefulSet":
		ss, err := apps.StatefulSets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err == nil && ss.UID == ref.UID {
			return ss.UID, ptr.Deref(ss.Spec.Replicas, 1), nil
		}
	}
	return "", 0, fmt.Errorf("found no controllers for pod owned by %s %s", ref.Kind, ref.Name)
}

func splitKey(key string) (string, string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}
