package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/mcs"
)

// serviceRow is a Service's row: NAMESPACE, NAME, TYPE, SERVED BY, CONFLICT.
func serviceRow(s mcs.Summary) []string {
	serving := make([]string, 0, len(s.Serving))
	for _, c := range s.Serving {
		cell := fmt.Sprintf("%s(%d)", c.Cluster, c.Endpoints)
		if !c.Ready {
			cell += "[not ready]"
		}
		serving = append(serving, cell)
	}
	return []string{s.Namespace, s.Name, s.Type, strings.Join(serving, ", "), dash(s.Conflict)}
}

// printServices prints the exported Services of the namespace (all with
// namespace "").
func printServices(ctx context.Context, c client.Client, w io.Writer, namespace string) error {
	var list mcv1alpha1.ExportedServiceList
	if err := c.List(ctx, &list); err != nil {
		return fmt.Errorf("listing exported services: %w", err)
	}
	items := slices.DeleteFunc(list.Items, func(es mcv1alpha1.ExportedService) bool {
		return namespace != "" && es.Spec.Namespace != namespace
	})
	fmt.Fprintln(w, "NAMESPACE\tNAME\tTYPE\tSERVED BY (ENDPOINTS)\tCONFLICT")
	for _, s := range mcs.Summarize(items) {
		fmt.Fprintln(w, strings.Join(serviceRow(s), "\t"))
	}
	return nil
}
