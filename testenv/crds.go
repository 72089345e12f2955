package testenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"
)

// crdWait bounds the wait for an installed CRD to be Established and
// served; strata establishes one as it creates it.
const crdWait = 30 * time.Second

// crdExtensions are the files CRDDirectoryPaths reads in a directory, as
// envtest reads them.
var crdExtensions = []string{".json", ".yaml", ".yml"}

// installCRDs creates the settings' CRDs and waits until each is
// Established and its resources are in discovery.
func (e *Env) installCRDs(s *settings) error {
	crds := slices.Clone(s.crds)
	for _, p := range s.crdPaths {
		read, err := readCRDs(p)
		if err != nil {
			return err
		}
		crds = append(crds, read...)
	}
	if len(crds) == 0 {
		return nil
	}
	client, err := apiextensionsclient.NewForConfig(e.Config)
	if err != nil {
		return fmt.Errorf("CRD client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), crdWait)
	defer cancel()
	for _, crd := range crds {
		crd = crd.DeepCopy()
		crd.ResourceVersion = ""
		if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("installing CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		if err := waitServed(ctx, client, crd); err != nil {
			return fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}

// waitServed waits until crd is Established and discovery lists its
// plural in each served version, as envtest's WaitForCRDs does.
func waitServed(ctx context.Context, client apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	disc := client.Discovery()
	return wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil || !established(got) {
			return false, nil
		}
		for _, v := range crd.Spec.Versions {
			if v.Served && !inDiscovery(disc, crd.Spec.Group+"/"+v.Name, crd.Spec.Names.Plural) {
				return false, nil
			}
		}
		return true, nil
	})
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

func inDiscovery(disc discovery.DiscoveryInterface, groupVersion, plural string) bool {
	list, err := disc.ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == plural })
}

// readCRDs reads the CRDs of a file, or of a directory's files with
// crdExtensions (not its subdirectories, as envtest reads it).
func readCRDs(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("CRD path: %w", err)
	}
	files := []string{path}
	if info.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("CRD directory: %w", err)
		}
		files = files[:0]
		for _, e := range entries {
			if !e.IsDir() && slices.Contains(crdExtensions, filepath.Ext(e.Name())) {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		read, err := readCRDFile(f)
		if err != nil {
			return nil, err
		}
		crds = append(crds, read...)
	}
	return crds, nil
}

// readCRDFile decodes every document of a YAML or JSON file and keeps the
// apiextensions.k8s.io/v1 CustomResourceDefinitions, strictly: a CRD with
// an unknown field is refused, as the server would refuse it.
func readCRDFile(file string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("CRD file: %w", err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var crds []*apiextensionsv1.CustomResourceDefinition
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return crds, nil
		}
		if err != nil {
			return nil, fmt.Errorf("CRD file %s: document %d: %w", file, i+1, err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("CRD file %s: document %d: %w", file, i+1, err)
		}
		if meta.Kind != "CustomResourceDefinition" || meta.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			return nil, fmt.Errorf("CRD file %s: document %d: %w", file, i+1, err)
		}
		crds = append(crds, crd)
	}
}
