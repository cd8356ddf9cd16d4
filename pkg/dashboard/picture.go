package dashboard

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"net/url"
	"strings"
)

// pictureWidth is the width of the fleet picture's coordinate space; the
// picture scales to the page.
const pictureWidth = 1200

// Picture draws the fleet as SVG: a band per provider, a row of zone boxes
// per region, a tile per cluster. A tile's colour is its readiness (green
// Ready, red NotReady, grey Unknown); a tainted cluster has a thick amber
// border; the bar at its foot is the allocated share of its CPU. Every
// tile links to the workloads on its cluster and names its state for
// screen readers. Clusters the page highlights carry a blue ring and
// their replicas.
func Picture(v FleetView) template.HTML {
	l := newLayout(len(v.Clusters))
	var body strings.Builder
	y := 0.0
	for _, p := range v.Providers {
		n := 0
		for _, r := range p.Regions {
			for _, z := range r.Zones {
				n += len(z.Clusters)
			}
		}
		fmt.Fprintf(&body, `<text class="provider" x="4" y="%.0f">%s · %d cluster%s</text>`, y+16, html.EscapeString(p.Name), n, plural(n))
		y += 24
		for _, r := range p.Regions {
			fmt.Fprintf(&body, `<text class="region" x="12" y="%.0f">%s</text>`, y+13, html.EscapeString(r.Name))
			y += 18
			y = l.zones(&body, r.Zones, y) + 8
		}
		y += 6
	}
	return template.HTML(fmt.Sprintf(`<svg class="fleet" viewBox="0 0 %d %.0f" role="group" aria-label="Fleet: %d clusters, %d Ready, %d need attention">%s</svg>`,
		pictureWidth, math.Max(y, 40), len(v.Clusters), v.Ready, v.Attention, body.String()))
}

// layout sizes tiles to the fleet: large enough to read on a small fleet,
// small enough that a thousand clusters fit one screen.
type layout struct {
	tile, gap, pad float64
}

func newLayout(n int) layout {
	switch {
	case n <= 120:
		return layout{tile: 28, gap: 4, pad: 6}
	case n <= 600:
		return layout{tile: 14, gap: 3, pad: 5}
	}
	return layout{tile: 9, gap: 2, pad: 4}
}

// zones draws a region's zone boxes left to right, wrapping at the
// picture's width, and returns the y below them.
func (l layout) zones(b *strings.Builder, zones []ZoneGroup, y float64) float64 {
	x, rowH := 12.0, 0.0
	maxCols := int((pictureWidth - 24 - 2*l.pad) / (l.tile + l.gap))
	for _, z := range zones {
		n := len(z.Clusters)
		cols := min(maxCols, max(1, int(math.Ceil(math.Sqrt(float64(n)*3)))), n)
		rows := (n + cols - 1) / cols
		w := math.Max(float64(cols)*(l.tile+l.gap)-l.gap+2*l.pad, float64(len(z.Name))*6.5+2*l.pad)
		h := 16 + float64(rows)*(l.tile+l.gap) - l.gap + l.pad
		if x+w > pictureWidth-12 && x > 12 {
			x, y, rowH = 12, y+rowH+8, 0
		}
		fmt.Fprintf(b, `<g class="zone"><rect class="zonebox" x="%.0f" y="%.0f" width="%.0f" height="%.0f" rx="4"/><text class="zonename" x="%.0f" y="%.0f">%s</text>`,
			x, y, w, h, x+l.pad, y+12, html.EscapeString(z.Name))
		for i, c := range z.Clusters {
			tx := x + l.pad + float64(i%cols)*(l.tile+l.gap)
			ty := y + 16 + float64(i/cols)*(l.tile+l.gap)
			l.tileSVG(b, c, tx, ty)
		}
		b.WriteString(`</g>`)
		x += w + 8
		rowH = math.Max(rowH, h)
	}
	return y + rowH
}

func (l layout) tileSVG(b *strings.Builder, c *ClusterCard, x, y float64) {
	class := "tile " + map[string]string{"True": "ready", "False": "notready"}[c.Ready]
	if c.Ready != "True" && c.Ready != "False" {
		class = "tile unknown"
	}
	if len(c.Taints) > 0 {
		class += " tainted"
	}
	if c.Highlight {
		class += " placed"
	}
	label := fmt.Sprintf("%s: %s, %d workloads, %d replicas, CPU %d%% allocated", c.Name, c.State(), c.Workloads, c.Replicas, int(math.Round(c.CPUFraction()*100)))
	if c.Highlight {
		label += fmt.Sprintf(", %d replicas of this workload", c.Placed)
	}
	if len(c.Taints) > 0 {
		label += ", taints " + strings.Join(c.Taints, " ")
	}
	fmt.Fprintf(b, `<a href="/workloads?cluster=%s" aria-label="%s" data-cluster="%s"><title>%s</title><rect class="%s" x="%.0f" y="%.0f" width="%.0f" height="%.0f" rx="2"/>`,
		url.QueryEscape(c.Name), html.EscapeString(label), html.EscapeString(c.Name), html.EscapeString(label), class, x, y, l.tile, l.tile)
	if c.CPUAllocatable > 0 {
		fmt.Fprintf(b, `<rect class="cpubar" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, x+1, y+l.tile-3, math.Max(0, (l.tile-2)*c.CPUFraction()), 2.0)
	}
	if c.Highlight && l.tile >= 28 {
		fmt.Fprintf(b, `<text class="placed-n" x="%.0f" y="%.0f" text-anchor="middle">%d</text>`, x+l.tile/2, y+l.tile/2+4, c.Placed)
	}
	b.WriteString(`</a>`)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
