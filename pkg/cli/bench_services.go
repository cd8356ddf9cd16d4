package cli

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/internal/bench/fleetbench"
)

func newBenchServicesCommand() *cobra.Command {
	var (
		o          fleetbench.ServicesOptions
		output     string
		verbose    int
		cpuProfile string
		memProfile string
		pprofAddr  string
	)
	cmd := &cobra.Command{
		Use:   "services",
		Short: "Measure multi-cluster Services: endpoint-change latency, hub writes and memory per exported Service",
		Long: `Start a hub with its controllers and --members API-only members, and export
--services Services, each from --exporters members with --endpoints
endpoints, spread over --namespaces namespaces (created in every member).
The benchmark writes the exporting members' EndpointSlices itself, as their
EndpointSlice controllers would, so that nothing else moves them.

Once every member imports every export, it reports how long that took and
the live heap the exports added per Service (the whole process's, and its
split between the API servers with etcd, which store the imports, and
Shepherd's controllers with their caches).

Then --changes endpoint changes are made at --changes-per-second: each moves
one endpoint of one export to an address never used before. Each change's
latency runs from its write to the moment the last other member's imported
EndpointSlices carry the address, as a watch on every member sees it; the
report gives p50, p90, p99 and the maximum, and the same to the first
member. Writes per change are counted from the API servers' request
metrics, the hub's (Shepherd's API groups) apart from the members', in all
and net of the idle rate: the rate of a 10 s window just before the changes,
once the rate has stopped falling (at most --settle of waiting). The
report lists that window's writes by resource and the controllers'
reconciles by controller: what a fleet at rest is still busy with.

--cpuprofile profiles the import (its samples carry a "component" label:
hub, member, controllers); --memprofile takes a heap profile once every
member imports every export. Read both with "go tool pprof". A full-size
run takes long: --pprof-address serves Go's /debug/pprof/ endpoints while it
runs, to look at any moment of it.`,
		Example: `  shepherd bench services
  shepherd bench services --members 5 --services 100 --changes 50 -o json
  shepherd bench services --services 100 --cpuprofile import.out && go tool pprof -tags import.out`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, output, verbose, o.Validate, func(log logr.Logger) error {
				o.Logger = log
				for _, p := range []struct {
					flag, path string
					to         *io.Writer
				}{{"--cpuprofile", cpuProfile, &o.CPUProfile}, {"--memprofile", memProfile, &o.HeapProfile}} {
					if p.path == "" {
						continue
					}
					f, err := os.Create(p.path)
					if err != nil {
						return fmt.Errorf("%s: %w", p.flag, err)
					}
					defer f.Close()
					*p.to = f
				}
				if pprofAddr != "" {
					stop, err := servePprof(pprofAddr, log)
					if err != nil {
						return err
					}
					defer stop()
				}
				rep, err := fleetbench.RunServices(cmd.Context(), o)
				if err != nil {
					return err
				}
				if output == "json" {
					return printJSON(cmd.OutOrStdout(), rep)
				}
				return printServicesBench(cmd.OutOrStdout(), rep)
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Members, "members", fleetbench.DefaultServicesMembers, "API-only members (at least 2)")
	f.IntVar(&o.Services, "services", fleetbench.DefaultServices, "Services exported")
	f.IntVar(&o.ExportersPerService, "exporters", fleetbench.DefaultServicesExporters, "members exporting each Service")
	f.IntVar(&o.EndpointsPerSlice, "endpoints", fleetbench.DefaultServicesEndpoints, "endpoints of each export")
	f.IntVar(&o.Namespaces, "namespaces", fleetbench.DefaultServicesNamespaces, "namespaces the Services are spread over")
	f.IntVar(&o.Changes, "changes", fleetbench.DefaultServicesChanges, "endpoint changes measured")
	f.Float64Var(&o.ChangesPerSecond, "changes-per-second", fleetbench.DefaultServicesChangesPerSecond, "rate of the endpoint changes")
	f.DurationVar(&o.Timeout, "timeout", fleetbench.DefaultServicesTimeout, "how long the imports, and then the changes, may take")
	f.DurationVar(&o.Settle, "settle", fleetbench.DefaultServicesSettle, "how long to wait, once every import is complete, for the write rate to stop falling before the changes")
	f.StringVar(&o.DataDir, "data-dir", "", "the fleet's data directory (default: a temporary one, removed afterwards)")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the import to this file")
	f.StringVar(&memProfile, "memprofile", "", "write a heap profile, taken once every member imports every export, to this file")
	f.StringVar(&pprofAddr, "pprof-address", "", "serve /debug/pprof/ on this address (e.g. localhost:6060) while the benchmark runs")
	f.StringVarP(&output, "output", "o", "text", "output format: text or json")
	f.IntVarP(&verbose, "verbose", "v", 0, "log verbosity")
	return cmd
}

// printServicesBench writes the report as a table.
func printServicesBench(out io.Writer, rep *fleetbench.ServicesReport) error {
	fmt.Fprintf(out, "services: %d Services on %d members, each exported from %d with %d endpoints; fleet started in %.1f s\n",
		rep.Services, rep.Members, rep.ExportersPerService, rep.EndpointsPerSlice, rep.FleetStartSeconds)
	fmt.Fprintf(out, "imported everywhere after %.1f s, %.0f s of CPU:", rep.ImportedSeconds, rep.ImportCPUSeconds)
	for _, c := range rep.ImportCPU {
		fmt.Fprintf(out, " %s %.0f%%", c.Component, 100*c.Share)
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "live heap per exported Service: %.0f KiB (API servers and etcd %.0f KiB, controllers %.0f KiB)\n",
		rep.Memory.LiveBytesPerService/1024, rep.Memory.APIServersBytesPerService/1024, rep.Memory.ControllersBytesPerService/1024)
	fmt.Fprintf(out, "%d endpoint changes at %g/s:\n", rep.Changes, rep.ChangesPerSecond)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "REACHED\tP50\tP90\tP99\tMAX")
	for _, l := range []struct {
		name  string
		stats fleetbench.LatencyStats
	}{{"every other member", rep.Propagation}, {"the first member", rep.FirstMember}} {
		fmt.Fprintf(w, "%s\t%.2f s\t%.2f s\t%.2f s\t%.2f s\n", l.name, l.stats.P50Seconds, l.stats.P90Seconds, l.stats.P99Seconds, l.stats.MaxSeconds)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if rep.Overtaken > 0 {
		fmt.Fprintf(out, "%d changes were overtaken by a later change of the same export before reaching every member (the fleet did not keep up with the rate)\n", rep.Overtaken)
	}
	fmt.Fprintf(out, "writes per change: hub %.1f, members %.1f\n", rep.HubWritesPerChangeGross, rep.MemberWritesPerChangeGross)
	switch {
	case !rep.IdleSettled:
		fmt.Fprintf(out, "  net of the idle rate: not measured (the write rate was still falling after %.0f s of waiting)\n", rep.SettleSeconds+rep.IdleWindowSeconds)
	case rep.HubWritesPerChange < 0 || rep.MemberWritesPerChange < 0:
		fmt.Fprintf(out, "  net of the idle rate: not measurable (the fleet wrote more at rest than during the changes)\n")
	default:
		fmt.Fprintf(out, "  net of the idle rate (%.0f s, after %.0f s to settle): hub %.1f, members %.1f\n",
			rep.IdleWindowSeconds, rep.SettleSeconds, rep.HubWritesPerChange, rep.MemberWritesPerChange)
	}
	if err := printRates(out, "PER CHANGE", rep.WritesPerChange); err != nil {
		return err
	}
	if len(rep.IdleWrites) > 0 {
		fmt.Fprintf(out, "writes at rest (the %.0f s idle window):\n", rep.IdleWindowSeconds)
		if err := printRates(out, "PER SECOND", rep.IdleWrites); err != nil {
			return err
		}
	}
	if len(rep.IdleReconciles) == 0 {
		return nil
	}
	fmt.Fprintf(out, "reconciles at rest, by controller (the same window):\n")
	rw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(rw, "CONTROLLER\tPER SECOND")
	for _, r := range rep.IdleReconciles {
		fmt.Fprintf(rw, "%s\t%.2f\n", r.Controller, float64(r.Total)/max(rep.IdleWindowSeconds, 1))
	}
	return rw.Flush()
}

// printRates writes write requests by verb and resource as a table whose
// last column is headed unit.
func printRates(out io.Writer, unit string, rates []fleetbench.RequestRate) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "VERB\tRESOURCE\t"+unit)
	for _, r := range rates {
		res := r.Resource
		if r.Subresource != "" {
			res += "/" + r.Subresource
		}
		fmt.Fprintf(w, "%s\t%s\t%.2f\n", r.Verb, res, r.PerWorkload)
	}
	return w.Flush()
}

// servePprof serves Go's profiling endpoints on addr until stop is called.
func servePprof(addr string, log logr.Logger) (stop func(), err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof-address: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	log.Info("serving profiles", "url", "http://"+l.Addr().String()+"/debug/pprof/")
	return func() { _ = srv.Close() }, nil
}
