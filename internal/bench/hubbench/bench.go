package hubbench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/shepherd-io/shepherd/config/crd"
	"github.com/shepherd-io/shepherd/internal/dev/controlplane"
)

// Options configure a run.
type Options struct {
	// DataDir is the embedded hub's directory (a fresh one per run).
	DataDir string
	// Objects per case (default 1000).
	Objects int
	// Workers writing concurrently (default 8).
	Workers int
	// QPS and Burst of the client (default the controller manager's, 500
	// and 1000).
	QPS   float32
	Burst int
	// Logger for the hub.
	Logger logr.Logger
}

// Case is one kind of write, measured.
type Case struct {
	Name string `json:"name"`
	// Floor is the case of the floor this one compares with (same verb).
	Floor string `json:"floor,omitempty"`
	// Writes made, and how long they took.
	Writes  int     `json:"writes"`
	Seconds float64 `json:"seconds"`
	// CPUMicrosPerWrite is the process CPU (user + system) per write.
	CPUMicrosPerWrite float64 `json:"cpuMicrosPerWrite"`
	WritesPerSecond   float64 `json:"writesPerSecond"`
	// RatioToFloor is CPUMicrosPerWrite over the floor case's.
	RatioToFloor float64 `json:"ratioToFloor,omitempty"`
	// Bytes is the size of one object as stored (JSON, metadata included),
	// ManagedFields its managedFields entries, after the case.
	Bytes         int `json:"bytes"`
	ManagedFields int `json:"managedFields"`
}

// Report is the outcome of a run.
type Report struct {
	Objects int    `json:"objects"`
	Workers int    `json:"workers"`
	Cases   []Case `json:"cases"`
}

var (
	floorGVR             = schema.GroupVersionResource{Group: "bench.example.com", Version: "v1", Resource: "floors"}
	bindingGVR           = schema.GroupVersionResource{Group: "work.shepherd.io", Version: "v1alpha1", Resource: "resourcebindings"}
	slimBindingGVR       = schema.GroupVersionResource{Group: "bench.example.com", Version: "v1", Resource: "slimbindings"}
	statuslessBindingGVR = schema.GroupVersionResource{Group: "bench.example.com", Version: "v1", Resource: "statuslessbindings"}
	workGVR              = schema.GroupVersionResource{Group: "work.shepherd.io", Version: "v1alpha1", Resource: "works"}
)

// Run starts an embedded hub with Shepherd's CRDs and the floor's, and
// measures each case in turn.
func Run(ctx context.Context, o Options) (*Report, error) {
	o = o.withDefaults()
	crds, err := crd.Hub()
	if err != nil {
		return nil, err
	}
	crds = append(crds, floorCRD())
	for _, c := range crds {
		if c.Name == "resourcebindings.work.shepherd.io" {
			crds = append(crds, slimBindingCRD(c, "SlimBinding", false), slimBindingCRD(c, "StatuslessBinding", true))
			break
		}
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: o.DataDir, CRDs: crds, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("starting the hub: %w", err)
	}
	defer func() { _ = cp.Stop() }()
	cfg := cp.RestConfig()
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if err := namespaces(ctx, cfg); err != nil {
		return nil, err
	}
	b := &bench{dc: dc, o: o}
	rep := &Report{Objects: o.Objects, Workers: o.Workers}
	type step struct {
		name, floor string
		run         func(ctx context.Context, i int) error
		sample      func() (*unstructured.Unstructured, error)
	}
	steps := []step{
		{"floor create", "", b.create(floorGVR, "bench", floor), b.get(floorGVR, "bench", "floor-00000")},
		{"floor create (apply)", "", b.apply(floorGVR, "bench", appliedFloor, "bench"), b.get(floorGVR, "bench", "applied-00000")},
		{"floor spec merge patch", "", b.patch(floorGVR, "bench", "floor-%05d", "", []byte(`{"spec":{"generation":2}}`)), b.get(floorGVR, "bench", "floor-00000")},
		{"floor status merge patch", "", b.patch(floorGVR, "bench", "floor-%05d", "status", []byte(`{"status":{"observed":2,"phase":"Ready"}}`)), b.get(floorGVR, "bench", "floor-00000")},
		{"binding create (detector, apply)", "floor create (apply)", b.apply(bindingGVR, "bench", binding, "shepherd"), b.get(bindingGVR, "bench", "app-00000-deployment")},
		{"binding spec patch (scheduler)", "floor spec merge patch", b.patch(bindingGVR, "bench", "app-%05d-deployment", "", schedulePatch()), b.get(bindingGVR, "bench", "app-00000-deployment")},
		{"binding status patch (scheduler)", "floor status merge patch", b.patch(bindingGVR, "bench", "app-%05d-deployment", "status", scheduleStatusPatch()), b.get(bindingGVR, "bench", "app-00000-deployment")},
		{"binding create, placement without schema (apply)", "floor create (apply)", b.apply(slimBindingGVR, "bench", slimBinding("SlimBinding"), "shepherd"), b.get(slimBindingGVR, "bench", "app-00000-deployment")},
		{"binding status patch, placement without schema", "floor status merge patch", b.patch(slimBindingGVR, "bench", "app-%05d-deployment", "status", scheduleStatusPatch()), b.get(slimBindingGVR, "bench", "app-00000-deployment")},
		{"binding create, placement and status without schema", "floor create (apply)", b.apply(statuslessBindingGVR, "bench", slimBinding("StatuslessBinding"), "shepherd"), b.get(statuslessBindingGVR, "bench", "app-00000-deployment")},
		{"binding status patch, placement and status without schema", "floor status merge patch", b.patch(statuslessBindingGVR, "bench", "app-%05d-deployment", "status", scheduleStatusPatch()), b.get(statuslessBindingGVR, "bench", "app-00000-deployment")},
		{"binding content, no schema (apply)", "floor create (apply)", b.apply(floorGVR, "bench", schemalessBinding, "shepherd"), b.get(floorGVR, "bench", "binding-00000")},
		{"binding status patch, no schema", "floor status merge patch", b.patch(floorGVR, "bench", "binding-%05d", "status", scheduleStatusPatch()), b.get(floorGVR, "bench", "binding-00000")},
		{"work create (binding controller, apply)", "floor create (apply)", b.apply(workGVR, "shepherd-es-member-03", work, "shepherd"), b.get(workGVR, "shepherd-es-member-03", "default-app-00000-deployment")},
		{"work status patch (execution)", "floor status merge patch", b.patch(workGVR, "shepherd-es-member-03", "default-app-%05d-deployment", "status", workStatusPatch()),
			b.get(workGVR, "shepherd-es-member-03", "default-app-00000-deployment")},
	}
	// Warm up: the first writes of a fresh hub pay for caches, connections
	// and the storage's first compactions.
	warm := func(ns string, i int) *unstructured.Unstructured { return floorNamed(ns, fmt.Sprintf("warm-%05d", i)) }
	if _, err := b.measure(ctx, "warm-up", b.create(floorGVR, "bench", warm)); err != nil {
		return nil, fmt.Errorf("warming up: %w", err)
	}
	floors := map[string]float64{}
	for _, s := range steps {
		c, err := b.measure(ctx, s.name, s.run)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		c.Floor = s.floor
		if s.floor == "" {
			floors[s.name] = c.CPUMicrosPerWrite
		} else if f := floors[s.floor]; f > 0 {
			c.RatioToFloor = c.CPUMicrosPerWrite / f
		}
		if u, err := s.sample(); err == nil {
			data, _ := json.Marshal(u.Object)
			c.Bytes, c.ManagedFields = len(data), len(u.GetManagedFields())
		}
		rep.Cases = append(rep.Cases, *c)
	}
	return rep, nil
}

func (o Options) withDefaults() Options {
	if o.Objects <= 0 {
		o.Objects = 1000
	}
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.QPS <= 0 {
		o.QPS, o.Burst = 500, 1000
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return o
}

type bench struct {
	dc dynamic.Interface
	o  Options
}

// measure runs write for every object on the workers and reads the
// process CPU around it.
func (b *bench) measure(ctx context.Context, name string, write func(ctx context.Context, i int) error) (*Case, error) {
	next := make(chan int)
	errs := make(chan error, b.o.Workers)
	var wg sync.WaitGroup
	cpu0, start := ProcessCPU(), time.Now()
	for range b.o.Workers {
		wg.Go(func() {
			for i := range next {
				if err := write(ctx, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var err error
feed:
	for i := range b.o.Objects {
		select {
		case next <- i:
		case err = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	if err != nil {
		return nil, err
	}
	secs, cpu := time.Since(start).Seconds(), ProcessCPU()-cpu0
	return &Case{Name: name, Writes: b.o.Objects, Seconds: secs,
		CPUMicrosPerWrite: float64(cpu.Microseconds()) / float64(b.o.Objects),
		WritesPerSecond:   float64(b.o.Objects) / secs}, nil
}

func (b *bench) create(gvr schema.GroupVersionResource, ns string, obj func(string, int) *unstructured.Unstructured) func(context.Context, int) error {
	return func(ctx context.Context, i int) error {
		_, err := b.dc.Resource(gvr).Namespace(ns).Create(ctx, obj(ns, i), metav1.CreateOptions{FieldManager: "bench"})
		return err
	}
}

func (b *bench) apply(gvr schema.GroupVersionResource, ns string, obj func(string, int) *unstructured.Unstructured, manager string) func(context.Context, int) error {
	return func(ctx context.Context, i int) error {
		u := obj(ns, i)
		data, err := json.Marshal(u.Object)
		if err != nil {
			return err
		}
		_, err = b.dc.Resource(gvr).Namespace(ns).Patch(ctx, u.GetName(), types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: manager, Force: ptr.To(true)})
		return err
	}
}

func (b *bench) patch(gvr schema.GroupVersionResource, ns, nameFormat, subresource string, patch []byte) func(context.Context, int) error {
	return func(ctx context.Context, i int) error {
		var sub []string
		if subresource != "" {
			sub = []string{subresource}
		}
		_, err := b.dc.Resource(gvr).Namespace(ns).Patch(ctx, fmt.Sprintf(nameFormat, i), types.MergePatchType, patch,
			metav1.PatchOptions{FieldManager: "bench"}, sub...)
		return err
	}
}

func (b *bench) get(gvr schema.GroupVersionResource, ns, name string) func() (*unstructured.Unstructured, error) {
	return func() (*unstructured.Unstructured, error) {
		return b.dc.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	}
}

// namespaces creates the namespaces the cases write to.
func namespaces(ctx context.Context, cfg *rest.Config) error {
	for _, ns := range []string{"bench", "shepherd-es-member-03"} {
		if err := namespace(ctx, cfg, ns); err != nil {
			return err
		}
	}
	return nil
}

// namespace creates one namespace.
func namespace(ctx context.Context, cfg *rest.Config, name string) error {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	u.SetName(name)
	_, err = dc.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Create(ctx, u, metav1.CreateOptions{})
	return err
}

// ProcessCPU is the process's user and system CPU so far.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
