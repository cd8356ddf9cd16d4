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

// Picture draws the fleet as SVG: a block per provider holding a block per
// region holding a box per zone, each level flowing left to right and
// wrapping at the picture's width; a tile per cluster. A tile's colour is
// its readiness (green Ready, red NotReady, grey Unknown); a tainted
// cluster has a thick amber border; the bar at its foot is the allocated
// share of its CPU. Every tile links to the workloads on its cluster and
// names its state for screen readers. Clusters the page highlights carry a
// blue ring and their replicas.
func Picture(v FleetView) template.HTML {
	l := newLayout(len(v.Clusters))
	var providers []block
	for _, p := range v.Providers {
		n := 0
		var regions []block
		for _, r := range p.Regions {
			var zones []block
			for _, z := range r.Zones {
				n += len(z.Clusters)
				zones = append(zones, l.zone(z))
			}
			regions = append(regions, labelled(html.EscapeString(r.Name), "region", 18, zones))
		}
		providers = append(providers, labelled(fmt.Sprintf("%s · %d cluster%s", html.EscapeString(p.Name), n, plural(n)), "provider", 22, regions))
	}
	all := flow(providers, pictureWidth, 16)
	var body strings.Builder
	all.draw(&body, 0, 0)
	w, h := math.Max(all.w, 200), math.Max(all.h, 40)
	return template.HTML(fmt.Sprintf(`<svg class="fleet" width="%.0f" viewBox="0 0 %.0f %.0f" role="group" aria-label="Fleet: %d clusters, %d Ready, %d need attention">%s</svg>`,
		w, w, h, len(v.Clusters), v.Ready, v.Attention, body.String()))
}

// block is a laid-out part of the picture: its size, and how to draw it at
// an offset.
type block struct {
	w, h float64
	draw func(b *strings.Builder, x, y float64)
}

// flow places blocks left to right, wrapping at width, gap apart.
func flow(items []block, width, gap float64) block {
	type placed struct{ x, y float64 }
	pos := make([]placed, len(items))
	x, y, rowH, maxW := 0.0, 0.0, 0.0, 0.0
	for i, it := range items {
		if x > 0 && x+it.w > width {
			x, y, rowH = 0, y+rowH+gap, 0
		}
		pos[i] = placed{x, y}
		x += it.w + gap
		rowH = math.Max(rowH, it.h)
		maxW = math.Max(maxW, x-gap)
	}
	return block{w: maxW, h: y + rowH, draw: func(b *strings.Builder, ox, oy float64) {
		for i, it := range items {
			it.draw(b, ox+pos[i].x, oy+pos[i].y)
		}
	}}
}

// labelled is a labelled block of children flowed under the label.
func labelled(label, class string, labelH float64, children []block) block {
	inner := flow(children, pictureWidth-24, 10)
	w := math.Max(inner.w+8, float64(len(label))*7)
	return block{w: w, h: labelH + inner.h + 4, draw: func(b *strings.Builder, x, y float64) {
		fmt.Fprintf(b, `<text class="%s" x="%.0f" y="%.0f">%s</text>`, class, x+4, y+labelH-6, label)
		inner.draw(b, x+8, y+labelH)
	}}
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

// zone is a zone's box: its name and its clusters' tiles in a grid about
// three times as wide as high.
func (l layout) zone(z ZoneGroup) block {
	n := len(z.Clusters)
	maxCols := int((pictureWidth - 60) / (l.tile + l.gap))
	cols := min(maxCols, max(1, int(math.Ceil(math.Sqrt(float64(n)*3)))), max(n, 1))
	rows := (n + cols - 1) / cols
	w := math.Max(float64(cols)*(l.tile+l.gap)-l.gap+2*l.pad, float64(len(z.Name))*6.5+2*l.pad)
	h := 16 + float64(rows)*(l.tile+l.gap) - l.gap + l.pad
	return block{w: w, h: h, draw: func(b *strings.Builder, x, y float64) {
		fmt.Fprintf(b, `<g class="zone"><rect class="zonebox" x="%.0f" y="%.0f" width="%.0f" height="%.0f" rx="4"/><text class="zonename" x="%.0f" y="%.0f">%s</text>`,
			x, y, w, h, x+l.pad, y+12, html.EscapeString(z.Name))
		for i, c := range z.Clusters {
			l.tileSVG(b, c, x+l.pad+float64(i%cols)*(l.tile+l.gap), y+16+float64(i/cols)*(l.tile+l.gap))
		}
		b.WriteString(`</g>`)
	}}
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

// plural is the ending of a noun counted n times: "1 cluster", "0 clusters",
// "2 clusters". Pages call it too (the template function plural).
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
