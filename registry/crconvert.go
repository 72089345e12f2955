package registry

import (
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/util/webhook"
)

// CRConverters makes the version converters of CRDs: apiextensions-apiserver's
// CRConverterFactory. Its webhook converter calls a CRD's conversion webhook
// (clientConfig url or service, caBundle, ConversionReview v1 or v1beta1 as
// the CRD's conversionReviewVersions ask, kube-apiserver's 30 s timeout),
// skips objects already in the wanted version, and words failures as
// kube-apiserver does. One per server: its clients are cached by config.
type CRConverters struct {
	factory *conversion.CRConverterFactory
}

// NewCRConverters builds the converters' factory. services resolves the
// service references of webhook client configs (nil: upstream's default,
// the cluster DNS name <name>.<namespace>.svc); auth wraps the resolver of
// the webhook clients' credentials and settings (nil: none, as
// kube-apiserver without a webhook kubeconfig).
func NewCRConverters(services webhook.ServiceResolver, auth webhook.AuthenticationInfoResolverWrapper) (*CRConverters, error) {
	f, err := conversion.NewCRConverterFactory(services, auth)
	if err != nil {
		return nil, fmt.Errorf("registry: CR converters: %w", err)
	}
	return &CRConverters{factory: f}, nil
}

// defaultCRConverters serve CustomKinds callers that bring none.
var defaultCRConverters = sync.OnceValues(func() (*CRConverters, error) { return NewCRConverters(nil, nil) })

// crConverter is a CRD's converter: safe copies its input (for the field
// manager, which hands over objects it keeps), unsafe may reuse it (for
// storage, whose objects are freshly decoded or about to be encoded).
type crConverter struct {
	safe, unsafe runtime.ObjectConvertor
}

func (c *CRConverters) forCRD(crd *apiextensionsv1.CustomResourceDefinition) (crConverter, error) {
	if c == nil {
		var err error
		if c, err = defaultCRConverters(); err != nil {
			return crConverter{}, err
		}
	}
	safe, unsafe, err := c.factory.NewConverter(crd)
	if err != nil {
		return crConverter{}, fmt.Errorf("conversion: %w", err)
	}
	return crConverter{safe: safe, unsafe: unsafe}, nil
}

// webhookConversion converts the objects of a kind whose CRD has the
// Webhook strategy, as apiextensions-apiserver's storage codec does: an
// object read is coerced and defaulted by the schema of the version it is
// stored in, converted to the served version, and coerced by that
// version's schema (defaults of the served version are not applied on
// read); an object written is converted to the storage version and
// coerced by its schema.
type webhookConversion struct {
	convert         runtime.ObjectConvertor
	served, storage schema.GroupVersion
	// schemas are the structural schemas of the CRD's versions, defaults
	// pruned; nil for a version without one.
	schemas         map[string]*structuralschema.Structural
	preserveUnknown bool
}

// WebhookConversion returns the conversions between a custom kind's served
// version and its storage version when its CRD asks for a conversion
// webhook: toStored takes an object of the served version, fromStored one
// of any version of the CRD. Both return new objects (or their argument
// unchanged when no conversion is needed) and keep metadata, resourceVersion
// included. ok is false for the None strategy, whose conversion only
// rewrites apiVersion (StorageVersion and OnRead).
func (k *Kind) WebhookConversion() (toStored, fromStored func(*unstructured.Unstructured) (*unstructured.Unstructured, error), ok bool) {
	if k.custom == nil || k.custom.webhook == nil {
		return nil, nil, false
	}
	w := k.custom.webhook
	return w.toStored, w.fromStored, true
}

func (w *webhookConversion) toStored(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if w.served == w.storage {
		return u, nil
	}
	return w.to(u, w.storage)
}

func (w *webhookConversion) fromStored(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil {
		return nil, err
	}
	if s := w.schemas[gv.Version]; s != nil {
		if _, err := coerce(u, s, w.preserveUnknown, false); err != nil {
			return nil, err
		}
		structuraldefaulting.Default(u.Object, s)
	}
	if gv == w.served {
		return u, nil
	}
	return w.to(u, w.served)
}

// to converts u to gv (the webhook is called only when u is in another
// version) and coerces the result by gv's schema.
func (w *webhookConversion) to(u *unstructured.Unstructured, gv schema.GroupVersion) (*unstructured.Unstructured, error) {
	out, err := w.convert.ConvertToVersion(u, gv)
	if err != nil {
		return nil, err
	}
	converted, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("conversion to %s returned %T", gv, out)
	}
	if s := w.schemas[gv.Version]; s != nil {
		if _, err := coerce(converted, s, w.preserveUnknown, false); err != nil {
			return nil, err
		}
	}
	return converted, nil
}

// newWebhookConversion prepares the conversion of the kind served as gvk
// when crd has the Webhook strategy; nil otherwise.
func newWebhookConversion(crd *apiextensionsv1.CustomResourceDefinition, conv crConverter, gvk schema.GroupVersionKind,
	storageVersion string, schemas map[string]*structuralschema.Structural) *webhookConversion {
	if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter {
		return nil
	}
	return &webhookConversion{
		convert: conv.unsafe, served: gvk.GroupVersion(),
		storage: schema.GroupVersion{Group: gvk.Group, Version: storageVersion},
		schemas: schemas, preserveUnknown: crd.Spec.PreserveUnknownFields,
	}
}
