package main

// Dynamic resource allocation around one pod: what the resourceclaim controller does before the scheduler sees a
// pod whose claims come from ResourceClaimTemplates (no controller runs beside the scheduler here), and what the
// recorder writes of each claim once the pod is decided (the allocation DynamicResources' PreBind stored).

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// podClaimAnnotation: the annotation the resourceclaim controller puts on a claim it makes, naming the pod's
// entry in spec.resourceClaims.
const podClaimAnnotation = "resource.kubernetes.io/pod-claim-name"

// claimNameFor: the name a claim made for the pod's entry gets. The controller asks for generateName
// "<pod>-<claim>-" (both parts cut in proportion past 57 characters) and the API server appends five random
// characters; here they are derived from the pod's key and the entry's name (as packsched's simulator derives
// them), so that a recording repeats.
func claimNameFor(pod *v1.Pod, entry string) string {
	base := pod.Name + "-" + entry + "-"
	const maxBase = 57
	if len(base) > maxBase {
		base = pod.Name[:len(pod.Name)*maxBase/len(base)] + "-" + entry[:len(entry)*maxBase/len(base)]
	}
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	sum := sha256.Sum256([]byte(pod.Namespace + "/" + pod.Name + "/" + entry))
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return base + string(suffix)
}

// makeTemplateClaims does the resourceclaim controller's job for a pod about to be created: one ResourceClaim per
// spec.resourceClaims entry that names a template (owned by the pod, the template's labels and annotations plus
// the pod-claim-name annotation, the template's spec), and the names in the pod's status.resourceClaimStatuses.
// It waits until the scheduler's informer has every claim, so that the pod is not tried before them.
func (r *recorder) makeTemplateClaims(ctx context.Context, pod *v1.Pod) ([]string, error) {
	var made []string
	for _, entry := range pod.Spec.ResourceClaims {
		if entry.ResourceClaimTemplateName == nil {
			continue
		}
		tmpl, err := r.client.ResourceV1().ResourceClaimTemplates(pod.Namespace).Get(ctx, *entry.ResourceClaimTemplateName, metav1.GetOptions{})
		if err != nil {
			return made, fmt.Errorf("resourceClaims %s: %w", entry.Name, err)
		}
		annotations := map[string]string{}
		for k, v := range tmpl.Spec.ObjectMeta.Annotations {
			annotations[k] = v
		}
		annotations[podClaimAnnotation] = entry.Name
		claim := &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name:      claimNameFor(pod, entry.Name),
				Namespace: pod.Namespace,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true),
				}},
				Annotations: annotations,
				Labels:      tmpl.Spec.ObjectMeta.Labels,
			},
			Spec: *tmpl.Spec.Spec.DeepCopy(),
		}
		if err := r.create(claim); err != nil {
			return made, fmt.Errorf("resourceClaims %s: %w", entry.Name, err)
		}
		made = append(made, claim.Name)
		pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses,
			v1.PodResourceClaimStatus{Name: entry.Name, ResourceClaimName: ptr.To(claim.Name)})
	}
	lister := r.informers.Resource().V1().ResourceClaims().Lister()
	deadline := time.Now().Add(r.timeout)
	for _, name := range made {
		for {
			if _, err := lister.ResourceClaims(pod.Namespace).Get(name); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return made, fmt.Errorf("ResourceClaim %s/%s not seen by the scheduler's informer", pod.Namespace, name)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return made, nil
}

// deleteClaims removes the claims made for a pod that is deleted (the garbage collector's job: the pod owns them).
func (r *recorder) deleteClaims(ctx context.Context, namespace string, names []string) error {
	for _, name := range names {
		err := r.client.ResourceV1().ResourceClaims(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil {
			return err
		}
	}
	return nil
}

// claimResults: each of the pod's spec.resourceClaims entries, the claim it resolved to and the claim's
// status.allocation as it stands now (null when not allocated), as the JSON of resource.k8s.io/v1.
func (r *recorder) claimResults(ctx context.Context, pod *v1.Pod, made []string) ([]map[string]any, error) {
	var out []map[string]any
	k := 0
	for _, entry := range pod.Spec.ResourceClaims {
		name := ""
		switch {
		case entry.ResourceClaimName != nil:
			name = *entry.ResourceClaimName
		case k < len(made):
			name = made[k]
			k++
		}
		res := map[string]any{"name": entry.Name, "claim": name, "allocation": nil}
		if name != "" {
			claim, err := r.client.ResourceV1().ResourceClaims(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			if claim.Status.Allocation != nil {
				alloc, err := toJSON(claim.Status.Allocation)
				if err != nil {
					return nil, err
				}
				res["allocation"] = alloc
			}
		}
		out = append(out, res)
	}
	return out, nil
}

func toJSON(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(raw, &out)
}

// podUID: the UID the recorder gives a pod (create's default), known before the pod is created so that the
// claims made for it can name their owner.
func podUID(pod *v1.Pod) types.UID {
	if pod.UID != "" {
		return pod.UID
	}
	return types.UID(fmt.Sprintf("uid-pod-%s-%s", pod.Namespace, pod.Name))
}
