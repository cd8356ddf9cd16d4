// Package version reports the build's version.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is set at build time with -ldflags "-X github.com/shepherd-io/shepherd/pkg/version.Version=v0.1.0".
var Version = "v0.1.0-dev"

// Info describes the build.
type Info struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	Revision  string `json:"revision,omitempty"`
}

// Get returns the build's version information.
func Get() Info {
	info := Info{Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				info.Revision = s.Value
			}
		}
	}
	return info
}

// String renders the information on one line.
func (i Info) String() string {
	s := fmt.Sprintf("shepherd %s (%s, %s)", i.Version, i.GoVersion, i.Platform)
	if i.Revision != "" {
		s += " revision " + i.Revision
	}
	return s
}
