//go:build kube1_34

package main

import (
	"bytes"
	"encoding/json"

	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	"sigs.k8s.io/scheduler-plugins/pkg/capacityscheduling"
	"sigs.k8s.io/scheduler-plugins/pkg/coscheduling"

	_ "sigs.k8s.io/scheduler-plugins/apis/config/scheme" // their args (CoschedulingArgs) in the scheduler's config scheme
)

// outOfTreeRegistry: scheduler-plugins' CapacityScheduling and Coscheduling, registered as scheduler-plugins' own
// cmd/scheduler registers them (app.WithPlugin puts them in the out-of-tree registry).
func outOfTreeRegistry() frameworkruntime.Registry {
	return frameworkruntime.Registry{
		capacityscheduling.Name: capacityscheduling.New,
		coscheduling.Name:       coscheduling.New,
	}
}

// servedKinds: the custom resources of scheduler-plugins' CRDs (manifests/capacityscheduling/crd.yaml,
// manifests/coscheduling/crd.yaml: group scheduling.x-k8s.io, version v1alpha1, namespaced, with a status
// subresource), served to the plugins' controller-runtime clients by crd.go. A manifest is checked by decoding it
// strictly into scheduler-plugins' Go type (an unknown field is an error, as the CRD's structural schema prunes it).
var servedKinds = map[string]servedKind{
	"elasticquotas": {group: v1alpha1.SchemeGroupVersion.Group, version: v1alpha1.SchemeGroupVersion.Version,
		kind: "ElasticQuota", plural: "elasticquotas", shortNames: []string{"eq", "eqs"},
		check: strictly(func() any { return &v1alpha1.ElasticQuota{} })},
	"podgroups": {group: v1alpha1.SchemeGroupVersion.Group, version: v1alpha1.SchemeGroupVersion.Version,
		kind: "PodGroup", plural: "podgroups", shortNames: []string{"pg", "pgs"},
		check: strictly(func() any { return &v1alpha1.PodGroup{} })},
}

func strictly(newObj func() any) func([]byte) error {
	return func(raw []byte) error {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		return dec.Decode(newObj())
	}
}
