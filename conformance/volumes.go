package main

// Volumes around one pod: what the PersistentVolume controller and a CSI external provisioner do while
// VolumeBinding's PreBind waits for them (no controller runs beside the scheduler here), and what the recorder
// writes of each claim the pod's binding bound.
//
// VolumeBinding's PreBind writes its decisions and then polls, once a second, until every claim is fully bound
// (spec.volumeName set and the pv.kubernetes.io/bind-completed annotation): for a static volume it writes the
// volume's claimRef, for a claim to provision the claim's volume.kubernetes.io/selected-node annotation. syncVolumes
// answers both as the controllers would, and the recorder calls it while it waits for the pod's decision.

import (
	"encoding/json"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	annBindCompleted     = "pv.kubernetes.io/bind-completed"
	annBoundByController = "pv.kubernetes.io/bound-by-controller"
	annSelectedNode      = "volume.kubernetes.io/selected-node"
	annProvisionedBy     = "pv.kubernetes.io/provisioned-by"
	notProvisioned       = "kubernetes.io/no-provisioner"
)

var (
	nodesGVR    = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	pvcsGVR     = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	pvsGVR      = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	classesGVR  = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}
	csiNodesGVR = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "csinodes"}
)

// hasClaims: whether the scenario has PersistentVolumeClaims (only then is syncVolumes needed).
func (r *recorder) hasClaims() bool {
	objs, _ := r.scenario["objects"].(map[string]any)
	list, _ := objs["persistentvolumeclaims"].([]any)
	return len(list) > 0
}

// syncVolumes does, for every claim not bound yet, what the controllers would do now: a claim named by a volume's
// claimRef (VolumeBinding's static binding) is bound to it; a claim with a selected node whose class has a
// provisioner gets a volume provisioned for that node (the external provisioner) and is bound to it. Each binding
// is kept for the pod being decided (bindings).
func (r *recorder) syncVolumes() error {
	claimObjs, err := r.client.Tracker().List(pvcsGVR, v1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), "")
	if err != nil {
		return err
	}
	volumeObjs, err := r.client.Tracker().List(pvsGVR, v1.SchemeGroupVersion.WithKind("PersistentVolume"), "")
	if err != nil {
		return err
	}
	claimedBy := map[string]*v1.PersistentVolume{} // namespace/name -> the volume whose claimRef names it
	for i := range volumeObjs.(*v1.PersistentVolumeList).Items {
		pv := &volumeObjs.(*v1.PersistentVolumeList).Items[i]
		if ref := pv.Spec.ClaimRef; ref != nil {
			claimedBy[ref.Namespace+"/"+ref.Name] = pv
		}
	}
	for i := range claimObjs.(*v1.PersistentVolumeClaimList).Items {
		pvc := &claimObjs.(*v1.PersistentVolumeClaimList).Items[i]
		if pvc.Spec.VolumeName != "" {
			continue
		}
		key := pvc.Namespace + "/" + pvc.Name
		if pv, ok := claimedBy[key]; ok && pv.Spec.ClaimRef.UID == pvc.UID {
			if err := r.bindClaim(pvc.DeepCopy(), pv.DeepCopy(), nil); err != nil {
				return err
			}
			continue
		}
		node := pvc.Annotations[annSelectedNode]
		if node == "" || pvc.Spec.StorageClassName == nil {
			continue
		}
		obj, err := r.client.Tracker().Get(classesGVR, "", *pvc.Spec.StorageClassName)
		if err != nil {
			continue // no class: nothing provisions it
		}
		class := obj.(*storagev1.StorageClass)
		if class.Provisioner == "" || class.Provisioner == notProvisioned {
			continue
		}
		pv, err := r.provision(pvc, class, node)
		if err != nil {
			return fmt.Errorf("provisioning %s: %w", key, err)
		}
		if err := r.bindClaim(pvc.DeepCopy(), pv, pv); err != nil {
			return err
		}
	}
	return nil
}

// provision makes the volume a CSI external provisioner would for the claim on the node: named pvc-<uid>, the
// claim's request, access modes and volume mode, the class's reclaim policy, a CSI source of the class's provisioner,
// pre-bound to the claim, and as node affinity the node's values of the topology keys the driver reports in the
// node's CSINode (none without a CSINode entry).
func (r *recorder) provision(pvc *v1.PersistentVolumeClaim, class *storagev1.StorageClass, node string) (*v1.PersistentVolume, error) {
	obj, err := r.client.Tracker().Get(nodesGVR, "", node)
	if err != nil {
		return nil, err
	}
	labels := obj.(*v1.Node).Labels
	var affinity *v1.VolumeNodeAffinity
	if obj, err := r.client.Tracker().Get(csiNodesGVR, "", node); err == nil {
		for _, d := range obj.(*storagev1.CSINode).Spec.Drivers {
			if d.Name != class.Provisioner || len(d.TopologyKeys) == 0 {
				continue
			}
			var term v1.NodeSelectorTerm
			for _, k := range d.TopologyKeys {
				term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
					Key: k, Operator: v1.NodeSelectorOpIn, Values: []string{labels[k]},
				})
			}
			affinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{term}}}
		}
	}
	policy := v1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		policy = *class.ReclaimPolicy
	}
	name := "pvc-" + string(pvc.UID)
	pv := &v1.PersistentVolume{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{annProvisionedBy: class.Provisioner},
		},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: pvc.Spec.Resources.Requests[v1.ResourceStorage]},
			AccessModes:                   pvc.Spec.AccessModes,
			VolumeMode:                    pvc.Spec.VolumeMode,
			StorageClassName:              class.Name,
			PersistentVolumeReclaimPolicy: policy,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				CSI: &v1.CSIPersistentVolumeSource{Driver: class.Provisioner, VolumeHandle: name},
			},
			ClaimRef: &v1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID,
			},
			NodeAffinity: affinity,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumePending},
	}
	if err := r.create(pv); err != nil {
		return nil, err
	}
	return pv, nil
}

// bindClaim: the PersistentVolume controller's binding of a claim to the volume pre-bound to it: the claim gets
// the volume's name, the bind-completed and bound-by-controller annotations and phase Bound with the volume's
// capacity and access modes; the volume phase Bound. provisioned: the volume the recorder made for it (recorded
// whole), nil for a static one.
func (r *recorder) bindClaim(pvc *v1.PersistentVolumeClaim, pv, provisioned *v1.PersistentVolume) error {
	pv.Status.Phase = v1.VolumeBound
	pv.ResourceVersion = r.version()
	if err := r.client.Tracker().Update(pvsGVR, pv, ""); err != nil {
		return err
	}
	pvc.Spec.VolumeName = pv.Name
	if pvc.Annotations == nil {
		pvc.Annotations = map[string]string{}
	}
	pvc.Annotations[annBindCompleted] = "yes"
	pvc.Annotations[annBoundByController] = "yes"
	pvc.Status.Phase = v1.ClaimBound
	pvc.Status.AccessModes = pv.Spec.AccessModes
	pvc.Status.Capacity = v1.ResourceList{v1.ResourceStorage: pv.Spec.Capacity[v1.ResourceStorage]}
	pvc.ResourceVersion = r.version()
	if err := r.client.Tracker().Update(pvcsGVR, pvc, pvc.Namespace); err != nil {
		return err
	}
	b := map[string]any{"claim": pvc.Namespace + "/" + pvc.Name, "volume": pv.Name}
	if provisioned != nil {
		m, err := manifest(provisioned)
		if err != nil {
			return err
		}
		b["provisioned"] = m
	}
	r.mu.Lock()
	r.bindings = append(r.bindings, b)
	r.mu.Unlock()
	return nil
}

// manifest: a volume the recorder made, as a manifest (without status and the recorder's resourceVersion).
func manifest(pv *v1.PersistentVolume) (map[string]any, error) {
	out := pv.DeepCopy()
	out.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"}
	out.ResourceVersion, out.UID, out.CreationTimestamp = "", "", metav1.Time{}
	out.Status = v1.PersistentVolumeStatus{}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return m, nil
}

// volumeResults: the bindings made while the pod was decided, by claim.
func (r *recorder) volumeResults() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]map[string]any{}, r.bindings...)
	sort.Slice(out, func(i, j int) bool { return out[i]["claim"].(string) < out[j]["claim"].(string) })
	return out
}
