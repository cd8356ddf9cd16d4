package interpreter

import (
	"slices"
	"strings"
)

// KindByName resolves a kind name as the CLI accepts it (singular,
// plural or short, any case: "deploy", "Deployments", "svc") to the
// apiVersion and kind of a built-in kind.
func KindByName(name string) (apiVersion, kind string, ok bool) {
	name = strings.ToLower(name)
	for gk, k := range builtin {
		for _, n := range k.names {
			if n == name {
				return k.apiVersion, gk.Kind, true
			}
		}
	}
	return "", "", false
}

// KindNames lists, for help texts, every kind name KindByName accepts,
// sorted.
func KindNames() []string {
	var out []string
	for _, k := range builtin {
		out = append(out, k.names...)
	}
	slices.Sort(out)
	return out
}
