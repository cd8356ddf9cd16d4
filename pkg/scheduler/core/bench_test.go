package core

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// syntheticFleet is n clusters over 4 providers, 12 regions and 36 zones,
// named in order as the framework passes them, with scores 0..100 (many
// ties) and room for 0..500 replicas.
func syntheticFleet(n int) []Candidate {
	rng := rand.New(rand.NewPCG(42, uint64(n)))
	providers := []string{"aws", "azure", "gcp", "onprem"}
	cands := make([]Candidate, n)
	for i := range cands {
		p := rng.IntN(len(providers))
		r := rng.IntN(3)
		cands[i] = Candidate{
			Name:      fmt.Sprintf("member-%05d", i),
			Provider:  providers[p],
			Region:    fmt.Sprintf("%s-region-%d", providers[p], r),
			Zone:      fmt.Sprintf("%s-region-%d-%c", providers[p], r, 'a'+rng.IntN(3)),
			Labels:    map[string]string{"tier": []string{"gold", "silver", "bronze"}[rng.IntN(3)]},
			Score:     int64(rng.IntN(101)),
			Available: int64(rng.IntN(501)),
		}
	}
	return cands
}

var benchCases = []struct {
	name string
	req  Request
}{
	{"duplicated-region", req(10, duplicatedRS, sc("region", 2, 3), sc("cluster", 3, 6))},
	{"dynamic-region", req(100, dynamicRS, sc("region", 2, 3), sc("cluster", 3, 6))},
	{"aggregated-zone", req(300, aggregatedRS, sc("zone", 2, 4), sc("cluster", 2, 6))},
	{"equal-provider", req(50, equalRS, sc("provider", 2, 2), sc("cluster", 2, 4))},
	{"pickN", req(5, duplicatedRS, sc("cluster", 3, 3))},
	{"pickAll", req(5, duplicatedRS)},
	{"dynamic-nospread", req(5000, dynamicRS)},
}

func BenchmarkSchedule(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		cands := syntheticFleet(n)
		for _, bc := range benchCases {
			b.Run(fmt.Sprintf("%s/%d", bc.name, n), func(b *testing.B) {
				if _, err := Schedule(cands, bc.req); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					_, _ = Schedule(cands, bc.req)
				}
			})
		}
	}
}
