package execution_test

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestWorkWaitingForAKindIsAppliedOnceServed: a Work of a custom kind the
// member does not serve fails, and its retry backs off (here a minute from
// the first failure). Once the member serves the kind and its Cluster's
// apiEnablements say so (the cluster status controller's next probe,
// written here by hand), the Work is applied at once, not when its
// back-off runs out.
func TestWorkWaitingForAKindIsAppliedOnceServed(t *testing.T) {
	testenv.Heavy(t)
	ctx := context.Background()
	hubEnv := membershiptest.StartHub(t)
	hub := membershiptest.HubClient(t, hubEnv)
	member := membershiptest.StartMember(t, "m1")
	member.Join(t, hub)
	membershiptest.RunManager(t, hubEnv, func(mgr manager.Manager) error {
		d := controllerdeps.Deps{Manager: mgr, Clients: clusterclient.NewCache(mgr.GetClient(), clusterclient.Options{RequestTimeout: 3 * time.Second})}
		return execution.Setup(d, execution.Options{Workers: 2, RetryBaseDelay: time.Minute, RetryMaxDelay: 5 * time.Minute})
	})

	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "default", "name": "w1"},
		"spec":     map[string]any{"size": "small"},
	}}
	w := membershiptest.Work(t, "m1", "widget", nil, widget)
	membershiptest.CreateWork(t, hub, w)
	key := client.ObjectKeyFromObject(w)
	got := &workv1alpha1.Work{}
	waitApplied(t, hub, key, got, metav1.ConditionFalse, execution.ReasonAppliedFailed)

	// The member serves the kind.
	ext := apiextensionsclient.NewForConfigOrDie(member.Config())
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	widgets := dynamic.NewForConfigOrDie(member.Config()).Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("default")
	testenv.Eventually(t, 30*time.Second, "the member serves Widgets", func() error {
		_, err := widgets.List(ctx, metav1.ListOptions{})
		return err
	})
	// What the cluster status controller writes at its next probe.
	cl := &clusterv1alpha1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: "m1"}, cl); err != nil {
		t.Fatal(err)
	}
	cl.Status.APIEnablements = append(cl.Status.APIEnablements, clusterv1alpha1.APIEnablement{GroupVersion: "example.com/v1",
		Resources: []clusterv1alpha1.APIResource{{Name: "widgets", Kind: "Widget"}}})
	if err := hub.Status().Update(ctx, cl); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	// Well inside the minute the back-off would wait.
	testenv.Eventually(t, 20*time.Second, "the Widget applied once its kind is served", func() error {
		_, err := widgets.Get(ctx, "w1", metav1.GetOptions{})
		return err
	})
	t.Logf("applied %s after the Cluster's APIs changed", time.Since(begin).Round(time.Millisecond))
	waitApplied(t, hub, key, got, metav1.ConditionTrue, execution.ReasonAppliedSuccessful)
}
