package mcs

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
)

var t0 = time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC)

type spec = mcv1alpha1.ExportedServiceSpec

// export is cluster's export of ns/svc, minutes after t0, with one port.
func export(cluster string, minutes int, mods ...func(*spec)) spec {
	s := spec{Cluster: cluster, Namespace: "ns", Name: "svc", Type: mcsv1beta1.ClusterSetIP,
		ExportedAt: metav1.NewTime(t0.Add(time.Duration(minutes) * time.Minute)),
		Ports:      []mcsv1beta1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}
	for _, m := range mods {
		m(&s)
	}
	return s
}

func ports(p ...mcsv1beta1.ServicePort) func(*spec) { return func(s *spec) { s.Ports = p } }
func headless(s *spec)                              { s.Type = mcsv1beta1.Headless }
func labels(kv ...string) func(*spec) {
	return func(s *spec) {
		s.ExportedLabels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			s.ExportedLabels[kv[i]] = kv[i+1]
		}
	}
}

func port(name string, n int32, proto corev1.Protocol) mcsv1beta1.ServicePort {
	return mcsv1beta1.ServicePort{Name: name, Port: n, Protocol: proto}
}

func TestMerge(t *testing.T) {
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	for _, tc := range []struct {
		name    string
		exports []spec
		winner  string
		reason  mcsv1beta1.ServiceExportConditionReason
		// message holds these, in this order.
		message []string
		ports   []mcsv1beta1.ServicePort
		check   func(t *testing.T, m Merged)
	}{
		{name: "one export: no conflict", exports: []spec{export("a", 0)},
			winner: "a", reason: mcsv1beta1.ServiceExportReasonNoConflicts, ports: []mcsv1beta1.ServicePort{port("http", 80, tcp)}},
		{name: "agreeing exports", exports: []spec{export("b", 1), export("a", 0)},
			winner: "a", reason: mcsv1beta1.ServiceExportReasonNoConflicts, ports: []mcsv1beta1.ServicePort{port("http", 80, tcp)}},
		{name: "type: the oldest decides, even when listed last", exports: []spec{export("a", 5), export("b", 1, headless)},
			winner: "b", reason: mcsv1beta1.ServiceExportReasonTypeConflict, message: []string{"type", "cluster b", "clusters a differ"},
			check: func(t *testing.T, m Merged) {
				if m.Import.Type != mcsv1beta1.Headless {
					t.Errorf("type %s, want Headless", m.Import.Type)
				}
			}},
		{name: "a tie goes to the first cluster name", exports: []spec{export("b", 0, headless), export("a", 0)},
			winner: "a", reason: mcsv1beta1.ServiceExportReasonTypeConflict, message: []string{"cluster a", "clusters b"}},
		{name: "type before ports: the first property in order names the reason",
			exports: []spec{export("a", 0), export("b", 1, headless, ports(port("dns", 53, udp)), labels("x", "y"))},
			winner:  "a", reason: mcsv1beta1.ServiceExportReasonTypeConflict, message: []string{"conflicting type", "also conflicting: ports, labels"}},
		{name: "ports: the union, a port only some export has is a conflict",
			exports: []spec{export("a", 0), export("b", 1, ports(port("http", 80, tcp), port("metrics", 9090, tcp))), export("c", 2)},
			winner:  "a", reason: mcsv1beta1.ServiceExportReasonPortConflict, message: []string{"cluster a", "clusters b differ"},
			ports: []mcsv1beta1.ServicePort{port("http", 80, tcp), port("metrics", 9090, tcp)}},
		{name: "ports: on a clash of names the oldest's definition wins",
			exports: []spec{export("b", 1, ports(port("http", 8080, tcp))), export("c", 2, ports(port("http", 80, udp))), export("a", 0)},
			winner:  "a", reason: mcsv1beta1.ServiceExportReasonPortConflict, message: []string{"clusters b, c differ"},
			ports: []mcsv1beta1.ServicePort{port("http", 80, tcp)}},
		{name: "ports: an appProtocol clash is a conflict",
			exports: []spec{export("a", 0), export("b", 1, ports(mcsv1beta1.ServicePort{Name: "http", Port: 80, Protocol: tcp, AppProtocol: ptr.To("h2c")}))},
			winner:  "a", reason: mcsv1beta1.ServiceExportReasonPortConflict, ports: []mcsv1beta1.ServicePort{port("http", 80, tcp)}},
		{name: "ports: unnamed ports are keyed by number and protocol; an empty protocol is TCP",
			exports: []spec{export("a", 0, ports(port("", 53, udp), port("", 53, ""))), export("b", 1, ports(port("", 53, tcp), port("", 53, udp)))},
			winner:  "a", reason: mcsv1beta1.ServiceExportReasonNoConflicts,
			ports: []mcsv1beta1.ServicePort{port("", 53, tcp), port("", 53, udp)}},
		{name: "ports: sorted by name, then number, then protocol",
			exports: []spec{export("a", 0, ports(port("z", 1, tcp), port("a", 2, tcp), port("", 9, udp), port("", 9, tcp)))},
			winner:  "a", reason: mcsv1beta1.ServiceExportReasonNoConflicts,
			ports: []mcsv1beta1.ServicePort{port("", 9, tcp), port("", 9, udp), port("a", 2, tcp), port("z", 1, tcp)}},
		{name: "session affinity", exports: []spec{export("a", 0), export("b", 1, func(s *spec) { s.SessionAffinity = corev1.ServiceAffinityClientIP })},
			winner: "a", reason: mcsv1beta1.ServiceExportReasonSessionAffinityConflict, message: []string{"sessionAffinity"}},
		{name: "an empty session affinity is None", exports: []spec{export("a", 0), export("b", 1, func(s *spec) { s.SessionAffinity = corev1.ServiceAffinityNone })},
			winner: "a", reason: mcsv1beta1.ServiceExportReasonNoConflicts},
		{name: "session affinity config",
			exports: []spec{export("a", 0, func(s *spec) {
				s.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](60)}}
			}), export("b", 1, func(s *spec) {
				s.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](30)}}
			})},
			winner: "a", reason: mcsv1beta1.ServiceExportReasonSessionAffinityConfigConflict,
			check: func(t *testing.T, m Merged) {
				if got := *m.Import.SessionAffinityConfig.ClientIP.TimeoutSeconds; got != 60 {
					t.Errorf("timeout %d, want the oldest's 60", got)
				}
			}},
		{name: "an empty session affinity config is none",
			exports: []spec{export("a", 0), export("b", 1, func(s *spec) { s.SessionAffinityConfig = &corev1.SessionAffinityConfig{} })},
			winner:  "a", reason: mcsv1beta1.ServiceExportReasonNoConflicts},
		{name: "internal traffic policy: nil equals only nil",
			exports: []spec{export("a", 0), export("b", 1, func(s *spec) { s.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster) })},
			winner:  "a", reason: mcsv1beta1.ServiceExportReasonInternalTrafficPolicyConflict},
		{name: "traffic distribution",
			exports: []spec{export("a", 0, func(s *spec) { s.TrafficDistribution = ptr.To("PreferClose") }), export("b", 1)},
			winner:  "a", reason: mcsv1beta1.ServiceExportReasonTrafficDistributionConflict,
			check: func(t *testing.T, m Merged) {
				if ptr.Deref(m.Import.TrafficDistribution, "") != "PreferClose" {
					t.Errorf("traffic distribution %v, want the oldest's", m.Import.TrafficDistribution)
				}
			}},
		{name: "ip families: order matters, the first is the primary",
			exports: []spec{
				export("a", 0, func(s *spec) { s.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol} }),
				export("b", 1, func(s *spec) { s.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol} })},
			winner: "a", reason: mcsv1beta1.ServiceExportReasonIPFamilyConflict,
			check: func(t *testing.T, m Merged) {
				if m.Import.IPFamilies != nil {
					t.Errorf("ip families %v in the import: each member has its own", m.Import.IPFamilies)
				}
			}},
		{name: "labels", exports: []spec{export("a", 0, labels("team", "x")), export("b", 1, labels("team", "y"))},
			winner: "a", reason: mcsv1beta1.ServiceExportReasonLabelsConflict, message: []string{"labels", "cluster a", "clusters b"},
			check: func(t *testing.T, m Merged) {
				if m.Labels["team"] != "x" {
					t.Errorf("labels %v, want the oldest's", m.Labels)
				}
			}},
		{name: "annotations", exports: []spec{export("a", 0), export("b", 1, func(s *spec) { s.ExportedAnnotations = map[string]string{"k": "v"} })},
			winner: "a", reason: mcsv1beta1.ServiceExportReasonAnnotationsConflict},
		{name: "nil and empty are equal",
			exports: []spec{export("a", 0, labels(), func(s *spec) { s.ExportedAnnotations, s.IPFamilies = map[string]string{}, []corev1.IPFamily{} }),
				export("b", 1, func(s *spec) { s.ExportedLabels, s.ExportedAnnotations, s.IPFamilies = nil, nil, nil })},
			winner: "a", reason: mcsv1beta1.ServiceExportReasonNoConflicts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Merge(tc.exports)
			if m.Winner != tc.winner {
				t.Errorf("winner %q, want %q", m.Winner, tc.winner)
			}
			if len(m.Verdicts) != len(tc.exports) {
				t.Errorf("%d verdicts for %d exports", len(m.Verdicts), len(tc.exports))
			}
			for _, e := range tc.exports {
				v, ok := m.Verdicts[e.Cluster]
				if !ok {
					t.Fatalf("no verdict for %s", e.Cluster)
				}
				if v.Reason != tc.reason || v.Conflict != (tc.reason != mcsv1beta1.ServiceExportReasonNoConflicts) {
					t.Errorf("%s: %+v, want reason %s", e.Cluster, v, tc.reason)
				}
				rest := v.Message
				for _, want := range tc.message {
					i := strings.Index(rest, want)
					if i < 0 {
						t.Errorf("%s: message %q lacks %q (in order)", e.Cluster, v.Message, want)
						break
					}
					rest = rest[i+len(want):]
				}
			}
			if tc.ports != nil && !equality.Semantic.DeepEqual(m.Import.Ports, tc.ports) {
				t.Errorf("ports %+v, want %+v", m.Import.Ports, tc.ports)
			}
			if tc.check != nil {
				tc.check(t, m)
			}
		})
	}
}

func TestMergeEmpty(t *testing.T) {
	if m := Merge(nil); !equality.Semantic.DeepEqual(m, Merged{}) {
		t.Errorf("Merge(nil) = %+v, want zero", m)
	}
}

func TestVerdictCondition(t *testing.T) {
	c := Merge([]spec{export("a", 0), export("b", 1, headless)}).Verdicts["b"].Condition(3)
	if c.Type != "Conflict" || c.Status != metav1.ConditionTrue || c.Reason != "TypeConflict" || c.ObservedGeneration != 3 {
		t.Errorf("condition %+v", c)
	}
	c = Merge([]spec{export("a", 0)}).Verdicts["a"].Condition(1)
	if c.Status != metav1.ConditionFalse || c.Reason != "NoConflicts" {
		t.Errorf("condition %+v", c)
	}
}

// fuzzExports builds up to 6 exports of distinct clusters from data, each
// byte choosing a variant of one property, so the fuzzer reaches ties,
// clashes and agreement alike.
func fuzzExports(data []byte) []spec {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	n := int(next()%6) + 1
	var out []spec
	for i := range n {
		cluster := string(rune('a' + (int(next())+i*7)%26))
		if slices.ContainsFunc(out, func(s spec) bool { return s.Cluster == cluster }) {
			continue
		}
		s := export(cluster, int(next()%3))
		if next()%4 == 0 {
			headless(&s)
		}
		var ps []mcsv1beta1.ServicePort
		for range next() % 4 {
			b := next()
			ps = append(ps, port([]string{"", "http", "grpc"}[b%3], int32(80+b/3%3), []corev1.Protocol{"", "TCP", "UDP"}[b/9%3]))
		}
		s.Ports = ps
		if next()%3 == 0 {
			s.SessionAffinity = corev1.ServiceAffinityClientIP
		}
		if b := next() % 3; b > 0 {
			s.InternalTrafficPolicy = ptr.To([]corev1.ServiceInternalTrafficPolicy{"", "Cluster", "Local"}[b])
		}
		if b := next() % 3; b > 0 {
			labels("l", string(rune('0'+b)))(&s)
		}
		out = append(out, s)
	}
	return out
}

func FuzzMerge(f *testing.F) {
	f.Add([]byte{3, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1})
	f.Add([]byte{5, 1, 1, 0, 2, 3, 4, 1, 1, 2, 2, 9, 0, 1, 3, 7, 7, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		exports := fuzzExports(data)
		m := Merge(exports)

		// The winner is the oldest, ties by name.
		oldest := slices.MinFunc(exports, func(a, b spec) int {
			if c := a.ExportedAt.Compare(b.ExportedAt.Time); c != 0 {
				return c
			}
			return strings.Compare(a.Cluster, b.Cluster)
		})
		if m.Winner != oldest.Cluster || m.Import.Type != oldest.Type {
			t.Fatalf("winner %s (%s), want the oldest %s (%s)", m.Winner, m.Import.Type, oldest.Cluster, oldest.Type)
		}
		// Every export gets a verdict, and all the same one.
		if len(m.Verdicts) != len(exports) || !slices.IsSorted(m.Clusters) || len(m.Clusters) != len(exports) {
			t.Fatalf("%d verdicts, clusters %v for %d exports", len(m.Verdicts), m.Clusters, len(exports))
		}
		first := m.Verdicts[exports[0].Cluster]
		for _, e := range exports {
			v, ok := m.Verdicts[e.Cluster]
			if !ok || v != first {
				t.Fatalf("verdict of %s %+v, of %s %+v: all or none", e.Cluster, v, exports[0].Cluster, first)
			}
		}
		if first.Conflict == (first.Reason == mcsv1beta1.ServiceExportReasonNoConflicts) {
			t.Fatalf("verdict %+v", first)
		}
		// The order of the input does not matter.
		shuffled := slices.Clone(exports)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if again := Merge(shuffled); !equality.Semantic.DeepEqual(again, m) {
			t.Fatalf("Merge depends on input order:\n%+v\n%+v", m, again)
		}
		// Every export's ports are in the import, by key.
		keys := map[string]bool{}
		for _, p := range m.Import.Ports {
			if keys[portKey(p)] {
				t.Fatalf("port %s twice", portKey(p))
			}
			keys[portKey(p)] = true
		}
		for _, e := range exports {
			for _, p := range e.Ports {
				if !keys[portKey(normalPort(p))] {
					t.Fatalf("port %s of %s missing", portKey(normalPort(p)), e.Cluster)
				}
			}
		}
	})
}
