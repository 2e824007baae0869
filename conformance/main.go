// Command recorder runs the real kube-scheduler (k8s.io/kubernetes/pkg/scheduler, the version pinned by the
// go.mod it is built with) on one scenario of the vector format (../../shared/spec/kube-scheduler-vectors/README.md)
// and writes the scenario back with its results[] filled: every decision as kube-scheduler took it.
//
// The scheduler runs as its own tests run it: upstream's fake clientset and shared informers in one process, no
// API server. What an API server would do to a pod on creation is done here by the same code (the v1 defaulting
// functions, the pod strategy's PrepareForCreate and validation) and by small copies of the two admission
// plugins that matter to scheduling (Priority, DefaultTolerationSeconds). See docs/reference/conformance.md.
//
// Usage: recorder -in scenario.json [-out result.json] [-feature-gates A=true,B=false] [-timeout 20s]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clientsetscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install" // resource.k8s.io defaulting (allocationMode, count)
	_ "k8s.io/kubernetes/pkg/apis/storage/install"  // storage.k8s.io defaulting (StorageClass binding mode, reclaim policy)
	podstrategy "k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// defaultFeatureGates differ from the release's defaults only where a gate changes what can be recorded, not what
// is decided: OpportunisticBatching (beta, on in 1.35) lets a cycle reuse the previous cycle's sorted nodes and
// evaluate one node, so such a decision would carry no filter verdicts and no scores. -feature-gates overrides.
var defaultFeatureGates = map[string]bool{"OpportunisticBatching": false}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func main() {
	in := flag.String("in", "", "scenario JSON (vector format)")
	out := flag.String("out", "", "where to write the scenario with results[] (default stdout)")
	gates := flag.String("feature-gates", "", "feature gates, A=true,B=false (on top of "+fmt.Sprint(defaultFeatureGates)+")")
	timeout := flag.Duration("timeout", 20*time.Second, "how long to wait for one pod's decision")
	follow := flag.Bool("follow", false, "keep the cluster as the scenario's existing results[] left it: after each "+
		"decision, a pod the recording bound elsewhere (or not at all) is moved to the recorded node (or removed), so "+
		"that every decision is taken on the recording's cluster; the results are this scheduler's decisions")
	klog.InitFlags(nil)
	_ = flag.Set("v", "0")
	_ = flag.Set("logtostderr", "true")
	flag.Parse()
	if *in == "" {
		fmt.Fprintln(os.Stderr, "usage: recorder -in scenario.json [-out result.json]")
		os.Exit(2)
	}
	if err := run(*in, *out, *gates, *timeout, *follow); err != nil {
		fmt.Fprintln(os.Stderr, "recorder:", err)
		os.Exit(1)
	}
}

func run(in, out, gates string, timeout time.Duration, follow bool) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var scenario map[string]any
	if err := json.Unmarshal(data, &scenario); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := setFeatureGates(scenarioGates(scenario) + "," + gates); err != nil {
		return err
	}
	rec, err := newRecorder(scenario, timeout)
	if err != nil {
		return err
	}
	if follow {
		rec.follow, _ = scenario["results"].([]any)
	}
	results, err := rec.run()
	if err != nil {
		return err
	}
	scenario["results"] = results
	scenario["score_plugin_weights"] = rec.weights[rec.schedulerName]
	scenario["kubernetes_version"] = kubeVersion()
	scenario["recorded_with"] = "packsched conformance recorder: k8s.io/kubernetes/pkg/scheduler on the fake clientset"
	enc, err := json.MarshalIndent(scenario, "", " ")
	if err != nil {
		return err
	}
	enc = append(enc, '\n')
	if out == "" {
		_, err = os.Stdout.Write(enc)
		return err
	}
	return os.WriteFile(out, enc, 0o644)
}

func kubeVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/kubernetes" {
				if d.Replace != nil { // go.1.34.mod requires 1.34.7 (scheduler-plugins' pin) and builds 1.34.4
					d = d.Replace
				}
				return strings.TrimPrefix(d.Version, "v")
			}
		}
	}
	return "unknown"
}

func setFeatureGates(spec string) error {
	gates := map[string]bool{}
	known := utilfeature.DefaultMutableFeatureGate.GetAll()
	for k, v := range defaultFeatureGates {
		if _, ok := known[featuregate.Feature(k)]; ok { // OpportunisticBatching is new in 1.35
			gates[k] = v
		}
	}
	for _, kv := range strings.Split(spec, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || (v != "true" && v != "false") {
			return fmt.Errorf("feature gate %q: want Name=true|false", kv)
		}
		gates[k] = v == "true"
	}
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(gates)
}

// ---------------------------------------------------------------------------------------------------------------
// What one scheduling cycle did, as the framework reported it to the recording wrapper.

type verdict struct {
	Plugin string `json:"plugin"`
	Reason string `json:"reason"`
}

type cycle struct {
	mu        sync.Mutex
	allNodes  []string
	preFilter *preFilterResult
	unsched   sets.Set[string]
	filtered  map[string]*fwk.Status // every node whose filters ran (nil: passed)
	scores    []nodePluginScores     // nil: not scored
	result    scheduler.ScheduleResult
	err       error
	diagnosis *framework.NodeToStatus
	seq       int64 // the cycles' order across pods (gangs.go: a pod-group cycle's order of its pods)
}

// recFramework is the profile's framework with three of its methods seen on the way through: the scheduling
// cycle (schedulePod) calls them, and gets their answers unchanged.
type recFramework struct {
	framework.Framework
	c *cycle
}

func (r *recFramework) RunPreFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod) (*preFilterResult, *fwk.Status, sets.Set[string]) {
	res, st, unsched := r.Framework.RunPreFilterPlugins(ctx, state, pod)
	r.c.mu.Lock()
	r.c.preFilter, r.c.unsched = res, unsched
	r.c.mu.Unlock()
	return res, st, unsched
}

func (r *recFramework) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	st := r.Framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfo)
	r.c.mu.Lock()
	r.c.filtered[nodeInfo.Node().Name] = st
	r.c.mu.Unlock()
	return st
}

func (r *recFramework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]nodePluginScores, *fwk.Status) {
	scores, st := r.Framework.RunScorePlugins(ctx, state, pod, nodes)
	r.c.mu.Lock()
	r.c.scores = scores
	r.c.mu.Unlock()
	return scores, st
}

// ---------------------------------------------------------------------------------------------------------------

type recorder struct {
	scenario      map[string]any
	timeout       time.Duration
	client        *fake.Clientset
	informers     informers.SharedInformerFactory // the scheduler's
	schedulerName string
	cfg           *schedulerapi.KubeSchedulerConfiguration
	weights       map[string]map[string]int32 // profile -> score plugin -> weight

	mu         sync.Mutex
	cycles     map[types.UID][]*cycle
	current    types.UID // the pod being decided
	currentKey string    // and its namespace/name
	// what the scheduler's status patches of the pod being decided said: the first PodScheduled=False message and
	// the nominated node (a preemption's second cycle may bind the pod before the polling loop looks)
	patchedMessage, patchedNominated string
	victims                          []string // pods deleted while deciding it (preemption)
	deleting                         bool     // the recorder's own deletion in progress
	classes                          map[string]*schedulingv1.PriorityClass
	follow                           []any // -follow: the recording whose cluster each decision is taken on
	lastVersion                      int64
	later                            map[int][]runtime.Object // objects created just before pod <index> (gangs.go)
	cycleSeq, changeSeq              int64                    // gangs.go: the last cycle's number, and that number at the last change
	crd                              *crdServer               // the custom resources of servedKinds
	bindings                         []map[string]any         // volumes.go: the claims bound while the pod was decided
	volumes                          bool                     // the scenario has claims: volumes.go's controllers run
}

func newRecorder(scenario map[string]any, timeout time.Duration) (*recorder, error) {
	raw, err := json.Marshal(scenario["scheduler_config"])
	if err != nil {
		return nil, err
	}
	if scenario["scheduler_config"] == nil {
		raw = []byte(`{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration"}`)
	}
	obj, _, err := schedulerscheme.Codecs.UniversalDecoder().Decode(raw, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("scheduler_config: %w", err)
	}
	cfg, ok := obj.(*schedulerapi.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("scheduler_config: a %T, not a KubeSchedulerConfiguration", obj)
	}
	hundred := int32(100)
	cfg.PercentageOfNodesToScore = &hundred
	for i := range cfg.Profiles {
		cfg.Profiles[i].PercentageOfNodesToScore = &hundred
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("scheduler_config: %w", err)
	}
	name, _ := scenario["scheduler_name"].(string)
	if name == "" {
		name = cfg.Profiles[0].SchedulerName
	}
	return &recorder{
		scenario: scenario, timeout: timeout, cfg: cfg, schedulerName: name,
		weights: map[string]map[string]int32{}, cycles: map[types.UID][]*cycle{},
		classes: map[string]*schedulingv1.PriorityClass{}, later: map[int][]runtime.Object{},
	}, nil
}

// objectOrder: the kinds of scenario["objects"] in creation order (kinds not listed follow, by name).
var objectOrder = []string{
	"namespaces", "priorityclasses", "storageclasses", "csidrivers", "csinodes", "nodes", "persistentvolumes",
	"persistentvolumeclaims", "services", "replicationcontrollers", "replicasets", "statefulsets",
	"poddisruptionbudgets", "resourcequotas", "pods",
}

func (r *recorder) run() ([]map[string]any, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	r.client = fake.NewClientset()
	r.client.PrependReactor("create", "pods", r.bind)
	r.client.PrependReactor("delete", "pods", r.seeDelete)
	r.client.PrependReactor("update", "resourceclaims", r.nextVersion)
	r.client.PrependReactor("update", "persistentvolumes", r.nextVersion) // VolumeBinding's PreBind (volumes.go)
	r.client.PrependReactor("update", "persistentvolumeclaims", r.nextVersion)
	r.volumes = r.hasClaims()
	r.client.PrependReactor("patch", "pods", r.seeStatusPatch)

	r.crd = newCRDServer()
	if err := r.createObjects(ctx); err != nil {
		return nil, err
	}

	informerFactory := newInformerFactory(r.client)
	r.informers = informerFactory
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: r.client.EventsV1()})
	opts := []scheduler.Option{
		scheduler.WithProfiles(r.cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(r.cfg.PercentageOfNodesToScore),
		scheduler.WithParallelism(r.cfg.Parallelism),
		scheduler.WithPodInitialBackoffSeconds(r.cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(r.cfg.PodMaxBackoffSeconds),
		scheduler.WithExtenders(r.cfg.Extenders...),
		scheduler.WithFrameworkOutOfTreeRegistry(outOfTreeRegistry()),
	}
	if len(servedKinds) > 0 {
		opts = append(opts, scheduler.WithKubeConfig(r.crd.start()))
	}
	sched, err := scheduler.New(ctx, r.client, informerFactory, nil, profile.NewRecorderFactory(broadcaster), opts...)
	if err != nil {
		return nil, fmt.Errorf("scheduler.New: %w", err)
	}
	for name, f := range sched.Profiles {
		w := map[string]int32{} // the score plugins and weights after MultiPoint expansion
		for _, pl := range f.ListPlugins().Score.Enabled {
			w[pl.Name] = pl.Weight
		}
		r.weights[name] = w
	}
	r.wrapSchedulePod(sched)
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	informerFactory.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	var gate *popGate // gangs.go
	if r.keepsPods() {
		gate = &popGate{}
		gatePop(sched, gate)
	}
	go sched.Run(ctx)
	if gate != nil {
		return r.runGangs(ctx, sched, gate)
	}

	pods, _ := r.scenario["pods"].([]any)
	results := make([]map[string]any, 0, len(pods))
	for i, p := range pods {
		res, err := r.decide(ctx, i, p)
		if err != nil {
			return nil, fmt.Errorf("pod %d: %w", i, err)
		}
		results = append(results, res)
		if i < len(r.follow) {
			if err := r.followRecording(ctx, p, res, r.follow[i]); err != nil {
				return nil, fmt.Errorf("pod %d: -follow: %w", i, err)
			}
		}
	}
	return results, nil
}

// cycle runs one scheduling cycle's SchedulePod (schedule) with the recording wrapper around the framework, and
// keeps what it saw.
func (r *recorder) cycle(f framework.Framework, pod *v1.Pod,
	schedule func(framework.Framework) (scheduler.ScheduleResult, error)) (scheduler.ScheduleResult, error) {
	c := &cycle{filtered: map[string]*fwk.Status{}}
	res, err := schedule(&recFramework{Framework: f, c: c})
	if infos, lerr := f.SnapshotSharedLister().NodeInfos().List(); lerr == nil {
		for _, ni := range infos {
			c.allNodes = append(c.allNodes, ni.Node().Name)
		}
	}
	c.result, c.err = res, err
	var fitErr *framework.FitError
	if errors.As(err, &fitErr) {
		c.diagnosis = fitErr.Diagnosis.NodeToStatus
	}
	r.mu.Lock()
	r.cycleSeq++
	c.seq = r.cycleSeq
	r.cycles[pod.UID] = append(r.cycles[pod.UID], c)
	r.mu.Unlock()
	return res, err
}

// bind: the fake clientset's answer to POST pods/<name>/binding, as the API server's: spec.nodeName set (and
// status.startTime, the kubelet's).
func (r *recorder) bind(action clienttesting.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "binding" {
		return false, nil, nil
	}
	binding := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
	obj, err := r.client.Tracker().Get(podsGVR, binding.Namespace, binding.Name)
	if err != nil {
		return true, nil, err
	}
	pod := obj.(*v1.Pod).DeepCopy()
	if pod.Spec.NodeName != "" {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, pod.Name,
			fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName))
	}
	pod.Spec.NodeName = binding.Target.Name
	setCondition(pod, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.Now()})
	// the kubelet would start it and set status.startTime: preemption's MoreImportantPod orders pods of one priority
	// by it (without one, each comparison takes time.Now() and the order is the sort's accident)
	start := metav1.Now()
	pod.Status.StartTime = &start
	r.changed()
	return true, binding, r.client.Tracker().Update(podsGVR, pod, pod.Namespace)
}

// seeStatusPatch keeps what the scheduler's status patches of the pod being decided set: the first PodScheduled=False
// message and a nominated node.
func (r *recorder) seeStatusPatch(action clienttesting.Action) (bool, runtime.Object, error) {
	pa, ok := action.(clienttesting.PatchAction)
	if !ok || action.GetSubresource() != "status" {
		return false, nil, nil
	}
	var patch struct {
		Status struct {
			NominatedNodeName string            `json:"nominatedNodeName"`
			Conditions        []v1.PodCondition `json:"conditions"`
		} `json:"status"`
	}
	if json.Unmarshal(pa.GetPatch(), &patch) != nil {
		return false, nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if pa.GetNamespace()+"/"+pa.GetName() != r.currentKey {
		return false, nil, nil
	}
	// a failed attempt's patch carries the PodScheduled=False condition, and the nomination preemption made; a
	// nominatedNodeName alone is the expectation the scheduler writes before a PreBind that takes time (DRA,
	// volumes: NominatedNodeNameForExpectation), not a preemption's
	for _, c := range patch.Status.Conditions {
		if c.Type != v1.PodScheduled || c.Status != v1.ConditionFalse {
			continue
		}
		if r.patchedMessage == "" {
			r.patchedMessage = c.Message
		}
		if patch.Status.NominatedNodeName != "" && r.patchedNominated == "" {
			r.patchedNominated = patch.Status.NominatedNodeName
		}
	}
	return false, nil, nil
}

func (r *recorder) seeDelete(action clienttesting.Action) (bool, runtime.Object, error) {
	d := action.(clienttesting.DeleteAction)
	r.mu.Lock()
	if !r.deleting {
		r.victims = append(r.victims, d.GetNamespace()+"/"+d.GetName())
	}
	r.mu.Unlock()
	return false, nil, nil
}

// version: the next resourceVersion. The fake clientset's tracker keeps none, and the scheduler's assume caches
// (DynamicResources' claims) compare them to tell an informer's update from the scheduler's own assumption.
func (r *recorder) version() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastVersion++
	return strconv.FormatInt(r.lastVersion, 10)
}

// nextVersion: an update of a ResourceClaim (DynamicResources' PreBind writing the allocation) gets a new
// resourceVersion, as the API server gives it.
func (r *recorder) nextVersion(action clienttesting.Action) (bool, runtime.Object, error) {
	if u, ok := action.(clienttesting.UpdateAction); ok {
		if acc, err := meta.Accessor(u.GetObject()); err == nil {
			acc.SetResourceVersion(r.version())
		}
	}
	return false, nil, nil
}

func setCondition(pod *v1.Pod, c v1.PodCondition) {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == c.Type {
			pod.Status.Conditions[i] = c
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}

func (r *recorder) createObjects(ctx context.Context) error {
	objs, _ := r.scenario["objects"].(map[string]any)
	kinds := append([]string{}, objectOrder...)
	var rest []string
	for k := range objs {
		if !contains(objectOrder, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	kinds = append(kinds, rest...)
	for _, kind := range kinds {
		list, _ := objs[kind].([]any)
		if sk, ok := servedKinds[kind]; ok { // a custom resource: crd.go serves it
			for i, m := range list {
				if err := r.crd.add(sk, m, time.Unix(int64(1_700_000_000+i), 0)); err != nil {
					return fmt.Errorf("objects.%s[%d]: %w", kind, i, err)
				}
			}
			continue
		}
		for _, m := range list {
			obj, err := decode(m)
			if err != nil {
				return fmt.Errorf("objects.%s: %w", kind, err)
			}
			if pod, ok := obj.(*v1.Pod); ok {
				if pod, err = r.admitPod(pod); err != nil {
					return fmt.Errorf("objects.pods: %w", err)
				}
				obj = pod
			}
			if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
				r.classes[pc.Name] = pc
			}
			if at, ok := createBefore(obj); ok {
				r.later[at] = append(r.later[at], obj)
				continue
			}
			if err := r.create(obj); err != nil {
				return fmt.Errorf("objects.%s: %w", kind, err)
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// decode turns a manifest into its typed object, defaulted as the API server defaults it.
func decode(m any) (runtime.Object, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	obj, _, err := clientsetscheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(obj)
	return obj, nil
}

func (r *recorder) create(obj runtime.Object) error {
	gvks, _, err := clientsetscheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return err
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if acc.GetUID() == "" {
		acc.SetUID(types.UID(fmt.Sprintf("uid-%s-%s-%s", strings.ToLower(gvks[0].Kind), acc.GetNamespace(), acc.GetName())))
	}
	if acc.GetResourceVersion() == "" {
		acc.SetResourceVersion(r.version())
	}
	if ts := acc.GetCreationTimestamp(); ts.IsZero() {
		acc.SetCreationTimestamp(metav1.Now())
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvks[0])
	return r.client.Tracker().Create(gvr, obj, acc.GetNamespace())
}

// ---------------------------------------------------------------------------------------------------------------
// One pod: created, then waited for until bound or PodScheduled=False (and then deleted, so that every later
// decision sees exactly the pods bound before it).

func (r *recorder) decide(ctx context.Context, index int, manifest any) (map[string]any, error) {
	obj, err := decode(manifest)
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("a %T, not a Pod", obj)
	}
	key := pod.Namespace + "/" + pod.Name
	res := map[string]any{"index": index, "pod": key}
	admitted, err := r.admitPod(pod)
	if err != nil {
		res["outcome"] = "rejected"
		res["message"] = err.Error()
		return res, nil
	}
	admitted.UID = podUID(admitted)
	made, err := r.makeTemplateClaims(ctx, admitted)
	if err != nil {
		return nil, err
	}
	if err := r.updateBudgets(ctx); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.current, r.currentKey, r.victims = admitted.UID, key, nil
	r.patchedMessage, r.patchedNominated = "", ""
	r.bindings = nil
	r.mu.Unlock()
	if err := r.create(admitted); err != nil {
		return nil, err
	}
	// claims: with DRA, what each of the pod's claims got (written after the decision); the pod's own claims go
	// with it when it is deleted.
	claims := func() error {
		if len(admitted.Spec.ResourceClaims) == 0 {
			return nil
		}
		got, err := r.claimResults(ctx, admitted, made)
		res["claims"] = got
		return err
	}
	gone := func(p *v1.Pod) error {
		if err := r.deletePod(ctx, p); err != nil {
			return err
		}
		return r.deleteClaims(ctx, p.Namespace, made)
	}

	deadline := time.Now().Add(r.timeout)
	var nominated, firstMessage string
	for {
		got, err := r.client.Tracker().Get(podsGVR, pod.Namespace, pod.Name)
		if err != nil {
			return nil, err
		}
		p := got.(*v1.Pod)
		if p.Spec.NodeName != "" {
			r.mu.Lock()
			if nominated == "" {
				nominated = r.patchedNominated
			}
			if firstMessage == "" {
				firstMessage = r.patchedMessage
			}
			r.mu.Unlock()
			r.fill(res, admitted.UID, "bound", p.Spec.NodeName, "", nominated, firstMessage)
			if b := r.volumeResults(); len(b) > 0 {
				res["volumes"] = b
			}
			return res, claims()
		}
		cond := podScheduled(p)
		if cond != nil && cond.Reason == v1.PodReasonSchedulingGated {
			time.Sleep(50 * time.Millisecond)
			res["outcome"], res["message"] = "gated", cond.Message
			return res, gone(p)
		}
		if cond != nil && cond.Status == v1.ConditionFalse {
			if firstMessage == "" {
				firstMessage = cond.Message
			}
			if p.Status.NominatedNodeName == "" {
				r.fill(res, admitted.UID, "unschedulable", "", cond.Message, nominated, firstMessage)
				if err := claims(); err != nil {
					return nil, err
				}
				return res, gone(p)
			}
			nominated = p.Status.NominatedNodeName // preemption: wait for the victims to go and the pod to bind
		}
		if r.volumes { // the PersistentVolume controller and the provisioner, while PreBind waits for them
			if err := r.syncVolumes(); err != nil {
				return nil, err
			}
		}
		if time.Now().After(deadline) {
			msg := "no decision within " + r.timeout.String()
			if cond != nil {
				msg = cond.Message
			}
			r.fill(res, admitted.UID, "unschedulable", "", msg, nominated, firstMessage)
			res["timed_out"] = true
			if err := claims(); err != nil {
				return nil, err
			}
			return res, gone(p)
		}
		time.Sleep(time.Millisecond)
	}
}

// followRecording leaves the pod where the followed recording had it: bound to the same node, or gone.
func (r *recorder) followRecording(ctx context.Context, manifest any, res map[string]any, recorded any) error {
	want, _ := recorded.(map[string]any)
	wantNode, _ := want["node"].(string)
	if want["outcome"] != "bound" {
		wantNode = ""
	}
	gotNode, _ := res["node"].(string)
	if res["outcome"] != "bound" {
		gotNode = ""
	}
	if gotNode == wantNode {
		return nil
	}
	obj, err := decode(manifest)
	if err != nil {
		return err
	}
	pod := obj.(*v1.Pod)
	if gotNode != "" {
		if err := r.deletePod(ctx, pod); err != nil {
			return err
		}
	}
	if wantNode == "" {
		return nil
	}
	pod.Spec.NodeName = wantNode
	admitted, err := r.admitPod(pod)
	if err != nil {
		return err
	}
	admitted.UID = types.UID("uid-pod-" + pod.Namespace + "-" + pod.Name + "-followed")
	return r.create(admitted)
}

func podScheduled(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func (r *recorder) deletePod(ctx context.Context, p *v1.Pod) error {
	r.mu.Lock()
	r.deleting = true
	r.mu.Unlock()
	defer func() { r.mu.Lock(); r.deleting = false; r.mu.Unlock() }()
	zero := int64(0)
	err := r.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	// let the scheduler see the deletion before the next pod comes
	time.Sleep(2 * time.Millisecond)
	return err
}

// fill writes one result from the pod's last scheduling cycle (and, after a preemption, its first).
func (r *recorder) fill(res map[string]any, uid types.UID, outcome, node, message, nominated, firstMessage string) {
	r.mu.Lock()
	cycles := r.cycles[uid]
	victims := append([]string{}, r.victims...)
	r.mu.Unlock()
	res["outcome"] = outcome
	if node != "" {
		res["node"] = node
	} else {
		res["node"] = nil
		res["message"] = message
	}
	if len(cycles) == 0 {
		return
	}
	last := cycles[len(cycles)-1]
	last.mu.Lock()
	defer last.mu.Unlock()
	res["filter_status"] = filterStatus(last)
	var fitErr *framework.FitError
	if last.err != nil && !errors.As(last.err, &fitErr) {
		// an Error ended the cycle (a filter's, say): the verdicts are those of the nodes that ran before it
		res["error"] = true
	}
	if outcome == "unschedulable" {
		res["feasible_nodes"] = 0
		res["evaluated_nodes"] = len(last.allNodes)
	} else {
		res["feasible_nodes"] = last.result.FeasibleNodes
		res["evaluated_nodes"] = last.result.EvaluatedNodes
		fillScores(res, last, r.weights[r.schedulerName], node)
	}
	if nominated != "" || len(victims) > 0 {
		first := cycles[0]
		pre := map[string]any{"nominated_node": nominated, "victims": victims, "message": firstMessage, "cycles": len(cycles)}
		if first != last {
			first.mu.Lock()
			pre["filter_status"] = filterStatus(first)
			first.mu.Unlock()
		}
		res["preemption"] = pre
	}
}

// filterStatus: every node that did not pass, with the plugin that rejected it and its reasons as the framework
// worded them; nodes that passed are absent.
func filterStatus(c *cycle) map[string]verdict {
	out := map[string]verdict{}
	for _, n := range c.allNodes {
		st, ran := c.filtered[n]
		if !ran {
			switch {
			case c.diagnosis != nil:
				st = c.diagnosis.Get(n)
			case c.preFilter != nil && !c.preFilter.AllNodes() && !c.preFilter.NodeNames.Has(n):
				st = fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
					fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(c.unsched)))
			default:
				continue // not evaluated (the nominated node passed first)
			}
		}
		if st.IsSuccess() {
			continue
		}
		out[n] = verdict{Plugin: st.Plugin(), Reason: st.Message()}
	}
	return out
}

func fillScores(res map[string]any, c *cycle, weights map[string]int32, node string) {
	if c.scores == nil {
		res["scored"] = false
		res["top_nodes"] = []string{node}
		return
	}
	res["scored"] = true
	total := map[string]int64{}
	weighted := map[string]map[string]int64{}
	normalized := map[string]map[string]int64{}
	var best int64 = -1 << 62
	for _, ns := range c.scores {
		total[ns.Name] = ns.TotalScore
		weighted[ns.Name] = map[string]int64{}
		normalized[ns.Name] = map[string]int64{}
		for _, ps := range ns.Scores {
			weighted[ns.Name][ps.Name] = ps.Score
			if w := int64(weights[ps.Name]); w > 0 {
				normalized[ns.Name][ps.Name] = ps.Score / w
			}
		}
		if ns.TotalScore > best {
			best = ns.TotalScore
		}
	}
	var top []string
	for n, t := range total {
		if t == best {
			top = append(top, n)
		}
	}
	sort.Strings(top)
	res["top_nodes"] = top
	res["total_scores"] = total
	res["plugin_scores_weighted"] = weighted
	res["plugin_scores_normalized"] = normalized
}

// ---------------------------------------------------------------------------------------------------------------
// What the API server does to a pod on creation: defaulting (done in decode), the pod strategy's PrepareForCreate
// (status reset, disabled fields dropped, matchLabelKeys merged into selectors, the SchedulingGated condition)
// and validation, then the admission plugins Priority and DefaultTolerationSeconds.

func (r *recorder) admitPod(pod *v1.Pod) (*v1.Pod, error) {
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(pod, internal, nil); err != nil {
		return nil, err
	}
	nodeName := internal.Spec.NodeName
	ctx := context.Background()
	podstrategy.Strategy.PrepareForCreate(ctx, internal)
	if errs := podstrategy.Strategy.Validate(ctx, internal); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if err := r.admitPriority(internal); err != nil {
		return nil, err
	}
	admitDefaultTolerations(internal)
	internal.Spec.NodeName = nodeName
	out := &v1.Pod{}
	if err := legacyscheme.Scheme.Convert(internal, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// admitPriority is plugin/pkg/admission/priority's Admit for pods: the priority class (or the global default)
// gives spec.priority and spec.preemptionPolicy.
func (r *recorder) admitPriority(pod *api.Pod) error {
	name := pod.Spec.PriorityClassName
	var value int32
	policy := api.PreemptLowerPriority
	switch {
	case name == "system-cluster-critical":
		value = 2000000000
	case name == "system-node-critical":
		value = 2000001000
	case name != "":
		pc, ok := r.classes[name]
		if !ok {
			return fmt.Errorf("pods %q is forbidden: no PriorityClass with name %s was found", pod.Name, name)
		}
		value = pc.Value
		if pc.PreemptionPolicy != nil {
			policy = api.PreemptionPolicy(*pc.PreemptionPolicy)
		}
	default:
		var def *schedulingv1.PriorityClass
		for _, pc := range r.classes {
			if pc.GlobalDefault && (def == nil || pc.Value > def.Value || (pc.Value == def.Value && pc.CreationTimestamp.Before(&def.CreationTimestamp))) {
				def = pc
			}
		}
		if def != nil {
			pod.Spec.PriorityClassName = def.Name
			value = def.Value
			if def.PreemptionPolicy != nil {
				policy = api.PreemptionPolicy(*def.PreemptionPolicy)
			}
		}
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != value {
		return fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, value)
	}
	pod.Spec.Priority = &value
	if pod.Spec.PreemptionPolicy == nil {
		pod.Spec.PreemptionPolicy = &policy
	}
	return nil
}

// admitDefaultTolerations is plugin/pkg/admission/defaulttolerationseconds: 300 s for not-ready and unreachable.
func admitDefaultTolerations(pod *api.Pod) {
	seconds := int64(300)
	for _, key := range []string{v1.TaintNodeNotReady, v1.TaintNodeUnreachable} {
		found := false
		for _, t := range pod.Spec.Tolerations {
			if (t.Key == key || t.Key == "") && (t.Effect == api.TaintEffectNoExecute || t.Effect == "") {
				found = true
			}
		}
		if !found {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, api.Toleration{
				Key: key, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute, TolerationSeconds: &seconds,
			})
		}
	}
}
