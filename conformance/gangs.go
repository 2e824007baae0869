package main

// Gang scheduling (KEP-4671: 1.35's Workload, 1.36's and 1.37's PodGroup). A gang's pods are not decided one at a
// time: a member waits at PreEnqueue until its group object exists and minCount members do, then at Permit until
// minCount members are placed, and the member that completes the group decides for the others. So for a scenario
// with a "gangs" key the recorder keeps every pod it created (nothing is deleted), creates the next pod only once
// the scheduler has gone quiet, and records every pod's state at the end: bound (and after which pod's creation),
// waiting at Permit (and on which node), or pending (with its PodScheduled message, none when it was never tried).
// See docs/reference/conformance.md, "Gangs".

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler"
)

// createBeforeAnnotation on an object of the scenario: create it just before the pod of that index (a group object
// that arrives late), not with the cluster.
const createBeforeAnnotation = "conformance.packsched.io/create-before-pod"

// quietPolls: how many consecutive polls, quietPoll apart, must find the scheduler quiet.
const (
	quietPolls = 10
	quietPoll  = 5 * time.Millisecond
)

func createBefore(obj runtime.Object) (int, bool) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return 0, false
	}
	v, ok := acc.GetAnnotations()[createBeforeAnnotation]
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// scenarioGates: the scenario's "feature_gates" ({name: bool}) as -feature-gates takes them, sorted by name.
func scenarioGates(scenario map[string]any) string {
	gates, _ := scenario["feature_gates"].(map[string]any)
	var out []string
	for k, v := range gates {
		if b, ok := v.(bool); ok {
			out = append(out, fmt.Sprintf("%s=%t", k, b))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// popGate keeps the scheduling loop from taking a pod while the recorder creates one. Creating a pod makes the
// scheduler's event handler add it to the queue and then let in the pods its queueing hints wake (a gang's
// siblings held at PreEnqueue); a loop already waiting in Pop would take the new pod before the siblings are in,
// or after, as the goroutines happen to run. With the gate the loop takes a pod only once both are done, so the
// queue's order (priority, then the time each pod was first queued) decides, as it does whenever the scheduler
// is busy.
type popGate struct {
	mu sync.Mutex
}

// wait returns, holding mu, once the recorder does not hold it and the active queue has a pod.
func (g *popGate) wait(sched *scheduler.Scheduler) {
	for {
		g.mu.Lock()
		if len(sched.SchedulingQueue.PodsInActiveQ()) > 0 {
			return
		}
		g.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
}

// handledWithin: how long the scheduler's event handler is given, after the created pod is in the queue, to let in
// the pods the event wakes (the same handler, right after the pod's own Add).
const handledWithin = 30 * time.Millisecond

// createHeld creates obj while the scheduling loop is held: for a pod, until the scheduler's queue has it (and
// handledWithin more); for another object (a late group object), handledWithin.
func (r *recorder) createHeld(sched *scheduler.Scheduler, gate *popGate, obj runtime.Object) error {
	gate.mu.Lock()
	defer gate.mu.Unlock()
	if err := r.create(obj); err != nil {
		return err
	}
	r.changed()
	if pod, ok := obj.(*v1.Pod); ok {
		deadline := time.Now().Add(r.timeout)
		for !queued(sched, pod.UID) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(handledWithin)
	return nil
}

// createHeldTogether creates the pods one after the other while the scheduling loop stays held, until the
// scheduler's queue has them all (and handledWithin more): a batch (a Job's pods) meets the queue at once, whose
// order then decides, as when a controller creates them faster than the scheduler takes them.
func (r *recorder) createHeldTogether(sched *scheduler.Scheduler, gate *popGate, batch []*v1.Pod) error {
	if len(batch) == 0 {
		return nil
	}
	gate.mu.Lock()
	defer gate.mu.Unlock()
	for _, pod := range batch {
		if err := r.create(pod); err != nil {
			return err
		}
	}
	r.changed()
	deadline := time.Now().Add(r.timeout)
	for _, pod := range batch {
		for !queued(sched, pod.UID) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(handledWithin)
	return nil
}

// withPreviousAnnotation on a pod of a scenario that keeps its pods: create it together with the pod before it.
const withPreviousAnnotation = "conformance.packsched.io/with-previous"

func withPrevious(manifest any) bool {
	m, _ := manifest.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	return ann[withPreviousAnnotation] == "true"
}

// keepsPods: a scenario whose pods all stay and whose final state is recorded (runGangs): one with "gangs"
// (kube-scheduler's own gang scheduling) or "keep_pods": true (scheduler-plugins' Coscheduling).
func (r *recorder) keepsPods() bool {
	_, gangs := r.scenario["gangs"]
	keep, _ := r.scenario["keep_pods"].(bool)
	return gangs || keep
}

func queued(sched *scheduler.Scheduler, uid types.UID) bool {
	pending, _ := sched.SchedulingQueue.PendingPods()
	for _, p := range pending {
		if p.UID == uid {
			return true
		}
	}
	return false
}

type gangPod struct {
	pod        *v1.Pod
	res        map[string]any
	boundAfter int // the index of the pod whose creation the binding followed (-1: not bound)
}

func (r *recorder) runGangs(ctx context.Context, sched *scheduler.Scheduler, gate *popGate) ([]map[string]any, error) {
	fw, ok := sched.Profiles[r.schedulerName]
	if !ok {
		return nil, fmt.Errorf("scheduler_name %q: no such profile", r.schedulerName)
	}
	manifests, _ := r.scenario["pods"].([]any)
	var pods []*gangPod
	results := make([]map[string]any, 0, len(manifests))
	var timedOut bool
	for i := 0; i < len(manifests); i++ {
		last := i // pods i..last are created together (withPreviousAnnotation), then the scheduler is let run
		for last+1 < len(manifests) && withPrevious(manifests[last+1]) {
			last++
		}
		var batch []*v1.Pod
		for k := i; k <= last; k++ {
			for _, obj := range r.later[k] {
				if err := r.createHeld(sched, gate, obj); err != nil {
					return nil, fmt.Errorf("object before pod %d: %w", k, err)
				}
			}
			obj, err := decode(manifests[k])
			if err != nil {
				return nil, fmt.Errorf("pod %d: %w", k, err)
			}
			pod, ok := obj.(*v1.Pod)
			if !ok {
				return nil, fmt.Errorf("pod %d: a %T, not a Pod", k, obj)
			}
			res := map[string]any{"index": k, "pod": pod.Namespace + "/" + pod.Name}
			results = append(results, res)
			admitted, err := r.admitPod(pod)
			if err != nil {
				res["outcome"], res["message"] = "rejected", err.Error()
				continue
			}
			admitted.UID = podUID(admitted)
			batch = append(batch, admitted)
			pods = append(pods, &gangPod{pod: admitted, res: res, boundAfter: -1})
		}
		if err := r.createHeldTogether(sched, gate, batch); err != nil {
			return nil, fmt.Errorf("pods %d-%d: %w", i, last, err)
		}
		if !r.quiet(ctx, sched, fw, pods) {
			timedOut = true
		}
		for _, p := range pods {
			if p.boundAfter < 0 && r.boundNode(p.pod) != "" {
				p.boundAfter = last
			}
		}
		i = last
	}
	waiting := map[types.UID]string{}
	fw.IterateOverWaitingPods(func(wp waitingPod) { waiting[wp.GetPod().UID] = wp.GetPod().Spec.NodeName })
	for _, p := range pods {
		r.gangResult(p, waiting)
		if timedOut {
			p.res["timed_out"] = true
		}
	}
	return results, nil
}

// quiet waits until the scheduler has nothing left to do: no pod in the active queue, every pod in flight waiting
// at Permit, every pod created so far bound or known to the queue, no pod backing off (but after an Error), and
// every pod tried and not placed carrying its PodScheduled=False status. False: not within the timeout.
func (r *recorder) quiet(ctx context.Context, sched *scheduler.Scheduler, fw interface {
	IterateOverWaitingPods(func(waitingPod))
}, pods []*gangPod) bool {
	deadline := time.Now().Add(r.timeout)
	calm := 0
	for calm < quietPolls {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(quietPoll)
		if r.settled(sched, fw, pods) {
			calm++
		} else {
			calm = 0
		}
	}
	return true
}

func (r *recorder) settled(sched *scheduler.Scheduler, fw interface {
	IterateOverWaitingPods(func(waitingPod))
}, pods []*gangPod) bool {
	q := sched.SchedulingQueue
	if len(q.PodsInActiveQ()) > 0 {
		return false
	}
	// a pod backing off is waited for when the cluster changed (a pod created or bound) since its last cycle: its
	// retry may decide otherwise. One tried since is not (1.36 and 1.37 retry a gang that cannot complete after
	// every backoff, capped at 10 s, for ever), nor one whose last try ended in an Error (1.37's pod-group
	// cycles, not all seen by the SchedulePod hook)
	backingOff := uidSet{}
	for _, p := range q.PodsInBackoffQ() {
		backingOff[p.UID] = struct{}{}
	}
	waiting := uidSet{} // still waiting: a pod allowed by every Permit plugin is on its way to the binding
	fw.IterateOverWaitingPods(func(wp waitingPod) {
		if len(wp.GetPendingPlugins()) > 0 {
			waiting[wp.GetPod().UID] = struct{}{}
		}
	})
	known := uidSet{}
	for _, p := range q.InFlightPods() {
		if _, ok := waiting[p.UID]; !ok {
			return false // being decided, or allowed and being bound
		}
		known[p.UID] = struct{}{}
	}
	pending, _ := q.PendingPods()
	for _, p := range pending {
		known[p.UID] = struct{}{}
	}
	for _, p := range pods {
		got, err := r.client.Tracker().Get(podsGVR, p.pod.Namespace, p.pod.Name)
		if err != nil {
			return false
		}
		pod := got.(*v1.Pod)
		if pod.Spec.NodeName != "" {
			continue
		}
		if _, ok := known[p.pod.UID]; !ok {
			return false // not seen by the scheduler yet
		}
		_, backoff := backingOff[p.pod.UID]
		r.mu.Lock()
		cycles := r.cycles[p.pod.UID]
		triedSince := len(cycles) > 0 && cycles[len(cycles)-1].seq > r.changeSeq
		r.mu.Unlock()
		seen := len(cycles) > 0 // 1.37's pod-group cycles do not all pass the SchedulePod hook: those are not waited for
		if cond := podScheduled(pod); backoff && seen && !triedSince && (cond == nil || cond.Reason != v1.PodReasonSchedulerError) {
			return false // its retry after the backoff is still to come, on a cluster that changed
		}
		tried := backoff || seen
		if _, ok := waiting[p.pod.UID]; tried && !ok {
			if cond := podScheduled(pod); cond == nil || cond.Status != v1.ConditionFalse {
				return false // its failure's status patch is still on the way
			}
		}
	}
	return true
}

type uidSet map[types.UID]struct{}

func (r *recorder) boundNode(pod *v1.Pod) string {
	got, err := r.client.Tracker().Get(podsGVR, pod.Namespace, pod.Name)
	if err != nil {
		return ""
	}
	return got.(*v1.Pod).Spec.NodeName
}

// gangResult: the pod's state at the end. The last scheduling cycle's verdicts and scores come with a bound pod
// (what fill records for any decision), so that a tie between nodes can be told from a difference.
func (r *recorder) gangResult(p *gangPod, waiting map[types.UID]string) {
	got, err := r.client.Tracker().Get(podsGVR, p.pod.Namespace, p.pod.Name)
	if err != nil {
		p.res["outcome"], p.res["message"] = "unschedulable", err.Error()
		return
	}
	pod := got.(*v1.Pod)
	r.mu.Lock()
	if cycles := r.cycles[p.pod.UID]; len(cycles) > 0 {
		p.res["last_cycle"] = cycles[len(cycles)-1].seq
	}
	r.mu.Unlock()
	if pod.Spec.NodeName != "" {
		r.fill(p.res, p.pod.UID, "bound", pod.Spec.NodeName, "", "", "")
		p.res["bound_after"] = p.boundAfter
		return
	}
	if node, ok := waiting[p.pod.UID]; ok {
		p.res["outcome"], p.res["node"] = "waiting", node
		return
	}
	p.res["outcome"], p.res["node"] = "pending", nil
	if cond := podScheduled(pod); cond != nil && cond.Status == v1.ConditionFalse {
		p.res["message"] = cond.Message
	} else {
		p.res["message"] = nil // never tried: held at PreEnqueue
	}
	r.mu.Lock()
	p.res["cycles"] = len(r.cycles[p.pod.UID])
	r.mu.Unlock()
}

// changed: the cluster changed (a pod or object created, a pod bound); cycles from now on see it.
func (r *recorder) changed() {
	r.mu.Lock()
	r.changeSeq = r.cycleSeq
	r.mu.Unlock()
}
