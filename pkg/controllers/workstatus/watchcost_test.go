package workstatus

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
)

// watchCostObjects is the number of applied objects per member the watch
// is measured at, and as many objects that Shepherd did not apply beside
// them (the label selector keeps those out of the cache).
const watchCostObjects = 1000

// BenchmarkMemberWatch measures what watching the objects Shepherd applied
// in one member costs the controller: the heap its informer keeps for
// 1,000 applied ConfigMaps (with 1,000 foreign ones beside them), and the
// time until it is synced, started the way the work status controller
// starts it. The floor it is reported against is the objects' own JSON
// size: heap-per-object divided by JSON-per-object is the cache's
// overhead.
//
//	go test ./pkg/controllers/workstatus/ -run '^$' -bench MemberWatch -benchtime 5x
func BenchmarkMemberWatch(b *testing.B) {
	ctx := context.Background()
	member := membershiptest.StartMember(b, "m1")
	kc := member.Kube(b)
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	var jsonBytes int
	for i := range 2 * watchCostObjects {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprintf("settings-%04d", i)},
			Data:       map[string]string{"app.properties": strings.Repeat("key=value\n", 30)},
		}
		if i < watchCostObjects {
			cm.Labels = map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}
			cm.Annotations = map[string]string{workv1alpha1.AnnotationWork: fmt.Sprintf("shepherd-es-m1/settings-%04d", i)}
		}
		created, err := kc.CoreV1().ConfigMaps("shop").Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if i < watchCostObjects {
			created.ManagedFields = nil // the informer drops them too
			raw, err := json.Marshal(created)
			if err != nil {
				b.Fatal(err)
			}
			jsonBytes += len(raw)
		}
	}
	clients := &clusterclient.Clients{Cluster: "m1", Config: member.Config()}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

	var heap, synced float64
	b.ResetTimer()
	for range b.N {
		before := liveHeap()
		ms := newMembers(func(types.NamespacedName) {})
		start := time.Now()
		mi, err := ms.forClients(clients)
		if err != nil {
			b.Fatal(err)
		}
		inf := mi.informer(gvr)
		for !inf.HasSynced() {
			time.Sleep(5 * time.Millisecond)
		}
		synced += time.Since(start).Seconds()
		if n := len(inf.GetStore().ListKeys()); n != watchCostObjects {
			b.Fatalf("the informer holds %d objects, want the %d Shepherd applied", n, watchCostObjects)
		}
		heap += float64(liveHeap()) - float64(before)
		runtime.KeepAlive(inf)
		ms.stopAll()
	}
	b.StopTimer()
	perObject := heap / float64(b.N) / watchCostObjects
	floor := float64(jsonBytes) / watchCostObjects
	b.ReportMetric(perObject, "heap-B/object")
	b.ReportMetric(floor, "json-B/object")
	b.ReportMetric(perObject/floor, "heap/json")
	b.ReportMetric(synced/float64(b.N), "s/sync")
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
