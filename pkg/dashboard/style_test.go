package dashboard

import (
	"math"
	"regexp"
	"strconv"
	"testing"
)

// Text colours keep WCAG AA contrast (4.5:1) against what they are drawn
// on: the page, the panel, and white text on the state colours.
func TestContrast(t *testing.T) {
	css, err := assets.ReadFile("assets/static/style.css")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`--([a-z]+):\s*(#[0-9a-fA-F]{6})`).FindAllStringSubmatch(string(css), -1) {
		vars[m[1]] = m[2]
	}
	for _, pair := range [][2]string{
		{"fg", "bg"}, {"muted", "bg"}, {"accent", "bg"}, {"fg", "panel"}, {"muted", "panel"}, {"accent", "panel"},
		{"ok", "bg"}, {"bad", "bg"}, {"warn", "bg"},
		{"#ffffff", "ok"}, {"#ffffff", "bad"}, {"#ffffff", "unknown"}, {"#ffffff", "accent"},
	} {
		fg, bg := color(t, vars, pair[0]), color(t, vars, pair[1])
		if r := ratio(fg, bg); r < 4.5 {
			t.Errorf("%s on %s: contrast %.2f, want at least 4.5", pair[0], pair[1], r)
		}
	}
}

func color(t *testing.T, vars map[string]string, name string) [3]float64 {
	hex := name
	if v, ok := vars[name]; ok {
		hex = v
	}
	if len(hex) != 7 || hex[0] != '#' {
		t.Fatalf("colour %q is not defined in style.css", name)
	}
	var c [3]float64
	for i := range c {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		s := float64(v) / 255
		if s <= 0.03928 {
			c[i] = s / 12.92
		} else {
			c[i] = math.Pow((s+0.055)/1.055, 2.4)
		}
	}
	return c
}

func ratio(a, b [3]float64) float64 {
	l := func(c [3]float64) float64 { return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2] }
	la, lb := l(a), l(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "clusters"}, {1, "cluster"}, {2, "clusters"}, {-1, "clusters"}} {
		if got := "cluster" + plural(tc.n); got != tc.want {
			t.Errorf("plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
