package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	restclient "k8s.io/client-go/rest"
)

// The custom resources some out-of-tree plugins read (scheduler-plugins' ElasticQuota and PodGroup) come from an
// API server through a controller-runtime client built from the scheduler's kubeconfig, not from the clientset the
// rest of the scheduler uses. The recorder has no API server, so it serves those resources itself: a local HTTP
// endpoint answering what the client and its cache ask (discovery, list, get, watch) for the scenario's objects of
// the kinds in servedKinds. The objects do not change after they are created (the plugins only read them), so a
// watch sends nothing after its initial events; a scenario cannot update them.

// servedKind is one custom resource (the facts of its CustomResourceDefinition) and how a manifest is checked.
type servedKind struct {
	group, version, kind, plural string
	shortNames                   []string
	check                        func(raw []byte) error
}

func (k servedKind) apiVersion() string { return k.group + "/" + k.version }

type crdServer struct {
	mu      sync.Mutex
	objects map[string][]map[string]any // by plural
	version int64
	srv     *httptest.Server
}

func newCRDServer() *crdServer { return &crdServer{objects: map[string][]map[string]any{}} }

// add takes one manifest of kind k as the API server would store it: namespace defaulted, uid, resourceVersion and
// creationTimestamp set (Coscheduling orders pod groups by their creation).
func (s *crdServer) add(k servedKind, m any, created time.Time) error {
	obj, ok := m.(map[string]any)
	if !ok {
		return fmt.Errorf("not an object")
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	if err := k.check(raw); err != nil {
		return err
	}
	var cp map[string]any
	_ = json.Unmarshal(raw, &cp)
	if av, _ := cp["apiVersion"].(string); av != "" && av != k.apiVersion() {
		return fmt.Errorf("apiVersion %q: want %q", av, k.apiVersion())
	}
	if kd, _ := cp["kind"].(string); kd != "" && kd != k.kind {
		return fmt.Errorf("kind %q: want %q", kd, k.kind)
	}
	cp["apiVersion"], cp["kind"] = k.apiVersion(), k.kind
	meta, _ := cp["metadata"].(map[string]any)
	if meta == nil || meta["name"] == nil {
		return fmt.Errorf("metadata.name: required")
	}
	if meta["namespace"] == nil {
		meta["namespace"] = "default"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
	meta["resourceVersion"] = strconv.FormatInt(s.version, 10)
	meta["uid"] = string(types.UID(fmt.Sprintf("%s-%s-%s", k.plural, meta["namespace"], meta["name"])))
	if meta["creationTimestamp"] == nil {
		meta["creationTimestamp"] = created.UTC().Format(time.RFC3339)
	}
	s.objects[k.plural] = append(s.objects[k.plural], cp)
	return nil
}

// start serves the kinds and returns the client configuration that reaches them.
func (s *crdServer) start() *restclient.Config {
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return &restclient.Config{Host: s.srv.URL, QPS: 1000, Burst: 1000}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter, what string) {
	writeJSON(w, http.StatusNotFound, map[string]any{
		"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
		"message": what + " not found",
	})
}

// groups: the served kinds by group/version, sorted.
func groups() map[string][]servedKind {
	byGV := map[string][]servedKind{}
	for _, k := range servedKinds {
		byGV[k.apiVersion()] = append(byGV[k.apiVersion()], k)
	}
	for _, ks := range byGV {
		sort.Slice(ks, func(i, j int) bool { return ks[i].plural < ks[j].plural })
	}
	return byGV
}

func (s *crdServer) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{
			"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "MethodNotAllowed", "code": 405,
			"message": "the recorder serves its custom resources read-only",
		})
		return
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case req.URL.Path == "/version":
		writeJSON(w, 200, map[string]any{"major": "1", "minor": "34", "gitVersion": "v" + kubeVersion()})
	case req.URL.Path == "/api":
		writeJSON(w, 200, map[string]any{"kind": "APIVersions", "versions": []string{"v1"},
			"serverAddressByClientCIDRs": []any{}})
	case req.URL.Path == "/api/v1":
		writeJSON(w, 200, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1",
			"resources": []any{}})
	case req.URL.Path == "/apis":
		s.serveGroups(w)
	case len(parts) == 3 && parts[0] == "apis":
		s.serveResources(w, parts[1]+"/"+parts[2])
	case len(parts) >= 4 && parts[0] == "apis":
		s.serveObjects(w, req, parts[1]+"/"+parts[2], parts[3:])
	default:
		notFound(w, req.URL.Path)
	}
}

func (s *crdServer) serveGroups(w http.ResponseWriter) {
	var list []any
	byGroup := map[string][]string{}
	for gv := range groups() {
		g, v, _ := strings.Cut(gv, "/")
		byGroup[g] = append(byGroup[g], v)
	}
	names := make([]string, 0, len(byGroup))
	for g := range byGroup {
		names = append(names, g)
	}
	sort.Strings(names)
	for _, g := range names {
		var versions []any
		for _, v := range byGroup[g] {
			versions = append(versions, map[string]any{"groupVersion": g + "/" + v, "version": v})
		}
		list = append(list, map[string]any{"name": g, "versions": versions, "preferredVersion": versions[0]})
	}
	writeJSON(w, 200, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": list})
}

func (s *crdServer) serveResources(w http.ResponseWriter, gv string) {
	ks, ok := groups()[gv]
	if !ok {
		notFound(w, gv)
		return
	}
	var resources []any
	verbs := []string{"get", "list", "watch"}
	for _, k := range ks {
		resources = append(resources,
			map[string]any{"name": k.plural, "singularName": strings.ToLower(k.kind), "namespaced": true,
				"kind": k.kind, "verbs": verbs, "shortNames": k.shortNames},
			map[string]any{"name": k.plural + "/status", "singularName": "", "namespaced": true, "kind": k.kind,
				"verbs": verbs})
	}
	writeJSON(w, 200, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
		"resources": resources})
}

// serveObjects answers .../<plural>, .../namespaces/<ns>/<plural>[/<name>]: list, watch or get.
func (s *crdServer) serveObjects(w http.ResponseWriter, req *http.Request, gv string, rest []string) {
	ns, name := "", ""
	if len(rest) >= 3 && rest[0] == "namespaces" {
		ns, rest = rest[1], rest[2:]
	}
	if len(rest) == 2 {
		name = rest[1]
	}
	if len(rest) < 1 || len(rest) > 2 {
		notFound(w, req.URL.Path)
		return
	}
	var kind servedKind
	found := false
	for _, k := range groups()[gv] {
		if k.plural == rest[0] {
			kind, found = k, true
		}
	}
	if !found {
		notFound(w, req.URL.Path)
		return
	}
	s.mu.Lock()
	var items []map[string]any
	for _, o := range s.objects[kind.plural] {
		meta, _ := o["metadata"].(map[string]any)
		if (ns == "" || meta["namespace"] == ns) && (name == "" || meta["name"] == name) {
			items = append(items, o)
		}
	}
	rv := strconv.FormatInt(s.version, 10)
	s.mu.Unlock()
	q := req.URL.Query()
	switch {
	case name != "" && len(items) == 0:
		notFound(w, kind.plural+" "+ns+"/"+name)
	case name != "":
		writeJSON(w, 200, items[0])
	case q.Get("watch") == "true" || q.Get("watch") == "1":
		s.watch(w, req, kind, items, rv)
	default:
		if items == nil {
			items = []map[string]any{}
		}
		writeJSON(w, 200, map[string]any{"apiVersion": kind.apiVersion(), "kind": kind.kind + "List",
			"metadata": map[string]any{"resourceVersion": rv}, "items": items})
	}
}

// watch streams the initial events when asked (sendInitialEvents, closed by the bookmark that ends them), then
// nothing until the client goes or its timeoutSeconds pass.
func (s *crdServer) watch(w http.ResponseWriter, req *http.Request, kind servedKind, items []map[string]any, rv string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(200)
	enc := json.NewEncoder(w)
	q := req.URL.Query()
	if q.Get("sendInitialEvents") == "true" {
		for _, o := range items {
			_ = enc.Encode(map[string]any{"type": "ADDED", "object": o})
		}
		_ = enc.Encode(map[string]any{"type": "BOOKMARK", "object": map[string]any{
			"apiVersion": kind.apiVersion(), "kind": kind.kind,
			"metadata": map[string]any{"resourceVersion": rv,
				"annotations": map[string]any{"k8s.io/initial-events-end": "true"}}}})
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	timeout := time.Hour
	if t, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && t > 0 {
		timeout = time.Duration(t) * time.Second
	}
	select {
	case <-req.Context().Done():
	case <-time.After(timeout):
	}
}
