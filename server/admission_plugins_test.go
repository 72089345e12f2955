package server

// Tests of kube-apiserver's built-in admission plugins in the server's
// default chain (PodSecurity, LimitRanger, ServiceAccount,
// DefaultTolerationSeconds, ResourceQuota) and of the flags that choose
// them, with kube-apiserver's messages.

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// restrictedViolations is what PodSecurity's restricted level finds in
// plainPod, in kube-apiserver's words.
const restrictedViolations = `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
	`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
	`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
	`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`

// plainPod is a pod with one container and no securityContext.
func plainPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
}

// pluginEnv is a server with an audit log, and the warnings its admin
// client has received.
type pluginEnv struct {
	client   kubernetes.Interface
	auditLog string
	warningRecorder
}

func startPluginEnv(t *testing.T, edit func(*Options)) *pluginEnv {
	t.Helper()
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	o.DataDir, o.SecurePort = filepath.Join(dir, "data"), 0
	o.Logger = slog.New(slog.DiscardHandler)
	o.Audit.PolicyFile, o.Audit.LogPath = policy, filepath.Join(dir, "audit.log")
	// The quota controller ignores adds (quota admission charges them), so
	// an object its informer had not seen when a quota was first counted
	// is counted at the next full recalculation: every second here, not
	// kube-controller-manager's five minutes.
	o.controllers.quotaResync = time.Second
	if edit != nil {
		edit(o)
	}
	_, admin := start(t, o)
	e := &pluginEnv{auditLog: o.Audit.LogPath}
	cfg := rest.CopyConfig(admin)
	cfg.WarningHandler = e
	e.client = kubernetes.NewForConfigOrDie(cfg)
	return e
}

// namespace creates a namespace with labels and waits for its default
// ServiceAccount, as kube's e2e framework does before creating pods: the
// ServiceAccount plugin refuses pods until it exists.
func (e *pluginEnv) namespace(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := e.client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the default ServiceAccount", func() (bool, error) {
		_, err := e.client.CoreV1().ServiceAccounts(name).Get(t.Context(), "default", metav1.GetOptions{})
		return err == nil, err
	})
}

func (e *pluginEnv) createPod(t *testing.T, ns string, pod *corev1.Pod) (*corev1.Pod, string) {
	t.Helper()
	got, err := e.client.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		return nil, err.Error()
	}
	return got, ""
}

// TestAdmissionPlugins runs the built-in plugins' scenarios on one server.
func TestAdmissionPlugins(t *testing.T) {
	e := startPluginEnv(t, nil)
	t.Run("podSecurity", func(t *testing.T) { testPodSecurity(t, e) })
	t.Run("podDefaults", func(t *testing.T) { testPodDefaults(t, e) })
	t.Run("resourceQuota", func(t *testing.T) { testQuotaAdmission(t, e) })
	t.Run("serviceAccountMissing", func(t *testing.T) { testServiceAccountMissing(t, e) })
}

// testPodSecurity: the namespace's enforce, warn and audit labels, each
// at the restricted level, refuse, warn about and annotate a pod.
func testPodSecurity(t *testing.T, e *pluginEnv) {
	for _, tc := range []struct {
		mode, wantErr string
		wantWarnings  []string
		wantAudit     map[string]string
	}{
		{mode: "enforce", wantErr: `pods "plain" is forbidden: violates PodSecurity "restricted:latest": ` + restrictedViolations},
		{mode: "warn", wantWarnings: []string{`would violate PodSecurity "restricted:latest": ` + restrictedViolations}},
		{mode: "audit", wantAudit: map[string]string{
			"pod-security.kubernetes.io/audit-violations": `would violate PodSecurity "restricted:latest": ` + restrictedViolations}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ns := "pss-" + tc.mode
			e.namespace(t, ns, map[string]string{"pod-security.kubernetes.io/" + tc.mode: "restricted"})
			e.take()
			_, err := e.createPod(t, ns, plainPod("plain"))
			if err != tc.wantErr {
				t.Errorf("create:\n got %q\nwant %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantWarnings, e.take()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if tc.wantAudit == nil {
				return
			}
			got := map[string]string{}
			for k, v := range auditAnnotations(t, e.auditLog, ns, "plain") {
				if strings.HasSuffix(k, "audit-violations") {
					got[k] = v
				}
			}
			if diff := cmp.Diff(tc.wantAudit, got); diff != "" {
				t.Errorf("audit annotations (-want +got):\n%s", diff)
			}
		})
	}
}

// auditAnnotations are the annotations of the audit event of the pod
// create of ns/name.
func auditAnnotations(t *testing.T, path, ns, name string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if r := ev.ObjectRef; ev.Verb == "create" && ev.Stage == auditv1.StageResponseComplete && r != nil &&
			r.Resource == "pods" && r.Namespace == ns && r.Name == name {
			return ev.Annotations
		}
	}
	t.Fatalf("no audit event of the create of pod %s/%s", ns, name)
	return nil
}

// testPodDefaults: a plain pod comes back with LimitRanger's resources
// and annotation, the ServiceAccount plugin's account and token volume,
// and DefaultTolerationSeconds' tolerations.
func testPodDefaults(t *testing.T, e *pluginEnv) {
	const ns = "defaults"
	e.namespace(t, ns, nil)
	q := resource.MustParse
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type:           corev1.LimitTypeContainer,
		Default:        corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("128Mi")},
		DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("64Mi")},
	}}}}
	if _, err := e.client.CoreV1().LimitRanges(ns).Create(t.Context(), lr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pod *corev1.Pod
	// LimitRanger reads LimitRanges through an informer.
	waitFor(t, "LimitRanger's defaults", func() (bool, error) {
		if pod != nil {
			_ = e.client.CoreV1().Pods(ns).Delete(t.Context(), "p", metav1.DeleteOptions{})
		}
		var msg string
		pod, msg = e.createPod(t, ns, plainPod("p"))
		return pod != nil && pod.Annotations["kubernetes.io/limit-ranger"] != "", errorOf(msg)
	})
	type view struct {
		Annotations    map[string]string
		Resources      corev1.ResourceRequirements
		ServiceAccount string
		Volumes        []corev1.Volume
		Mounts         []corev1.VolumeMount
		Tolerations    []corev1.Toleration
	}
	volume := "kube-api-access-"
	if vs := pod.Spec.Volumes; len(vs) == 1 && strings.HasPrefix(vs[0].Name, volume) && len(vs[0].Name) == len(volume)+5 {
		volume = vs[0].Name
	}
	got := view{Annotations: pod.Annotations, Resources: pod.Spec.Containers[0].Resources,
		ServiceAccount: pod.Spec.ServiceAccountName, Volumes: pod.Spec.Volumes,
		Mounts: pod.Spec.Containers[0].VolumeMounts, Tolerations: pod.Spec.Tolerations}
	want := view{
		Annotations: map[string]string{
			"kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c"},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("128Mi")}},
		ServiceAccount: "default",
		Volumes:        []corev1.Volume{{Name: volume, VolumeSource: corev1.VolumeSource{Projected: tokenVolume()}}},
		Mounts: []corev1.VolumeMount{{Name: volume, ReadOnly: true,
			MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
		Tolerations: []corev1.Toleration{
			{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
				TolerationSeconds: ptr.To[int64](300)},
			{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
				TolerationSeconds: ptr.To[int64](300)}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod (-want +got):\n%s", diff)
	}
}

// tokenVolume is the ServiceAccount plugin's projected token volume, as
// kube-apiserver stores it (defaultMode 420 defaulted).
func tokenVolume() *corev1.ProjectedVolumeSource {
	return &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](420), Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
			Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
	}}
}

// testQuotaAdmission: a create beyond a ResourceQuota's hard limit is
// refused with kube-apiserver's message. The quota's status is the quota
// controller's (resourcequota-controller), which counts kube-root-ca.crt;
// the plugin charges "b" as it is created.
func testQuotaAdmission(t *testing.T, e *pluginEnv) {
	const ns = "quota"
	e.namespace(t, ns, nil)
	cms := e.client.CoreV1().ConfigMaps(ns)
	waitFor(t, "kube-root-ca.crt", func() (bool, error) {
		_, err := cms.Get(t.Context(), "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, err
	})
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q1"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("2")}}}
	quotas := e.client.CoreV1().ResourceQuotas(ns)
	if _, err := quotas.Create(t.Context(), quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "kube-root-ca.crt counted in the quota's status", func() (bool, error) {
		q, err := quotas.Get(t.Context(), "q1", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		used, ok := q.Status.Used[corev1.ResourceConfigMaps]
		return ok && used.Value() == 1, nil
	})
	// The plugin reads quotas through an informer: until it sees the
	// status, it refuses with "status unknown".
	waitFor(t, "the create within the quota", func() (bool, error) {
		_, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
		return err == nil, err
	})
	// The quota controller recalculates the status when the plugin's
	// charge changes it, from its own informer: a recalculation that ran
	// before that informer saw "b" writes used=1 again, and a create
	// judged on it is admitted (eventually consistent, as with
	// kube-controller-manager). Wait until the stored status counts "b".
	waitFor(t, `"b" counted in the quota's status`, func() (bool, error) {
		q, err := quotas.Get(t.Context(), "q1", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		used := q.Status.Used[corev1.ResourceConfigMaps]
		return used.Value() == 2, nil
	})
	const want = `configmaps "c" is forbidden: exceeded quota: q1, requested: configmaps=1, used: configmaps=2, limited: configmaps=2`
	_, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	if err == nil || err.Error() != want {
		t.Errorf("create beyond the quota: %v, want %q", err, want)
	}
}

// testServiceAccountMissing: a pod naming a ServiceAccount that does not
// exist is refused, as kube-apiserver refuses it (the path a pod without
// serviceAccountName takes before the namespace's default one exists).
func testServiceAccountMissing(t *testing.T, e *pluginEnv) {
	const ns = "nosa"
	e.namespace(t, ns, nil)
	pod := plainPod("x")
	pod.Spec.ServiceAccountName = "ghost"
	const want = `pods "x" is forbidden: error looking up service account nosa/ghost: serviceaccount "ghost" not found`
	if _, got := e.createPod(t, ns, pod); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestAdmissionFlags: --enable-admission-plugins and
// --disable-admission-plugins are checked with kube-apiserver's messages.
func TestAdmissionFlags(t *testing.T) {
	for _, tc := range []struct {
		enable, disable []string
		wantErr         string
	}{
		{},
		{enable: []string{"AlwaysPullImages", "DenyServiceExternalIPs"}},
		{disable: []string{"PodSecurity", "ServiceAccount"}},
		{enable: []string{"Foo"}, wantErr: `enable-admission-plugins plugin "Foo" is unknown`},
		{disable: []string{"Bar"}, wantErr: `disable-admission-plugins plugin "Bar" is unknown`},
		{enable: []string{"PodSecurity"}, disable: []string{"PodSecurity"},
			wantErr: `[PodSecurity] in enable-admission-plugins and disable-admission-plugins overlapped`},
		{enable: []string{"Foo"}, disable: []string{"Bar"},
			wantErr: "enable-admission-plugins plugin \"Foo\" is unknown\ndisable-admission-plugins plugin \"Bar\" is unknown"},
	} {
		o := NewOptions()
		o.Admission.Enable, o.Admission.Disable = tc.enable, tc.disable
		err := o.Validate()
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
			t.Errorf("enable %q disable %q: got %v, want %q", tc.enable, tc.disable, err, tc.wantErr)
		}
	}
}

// TestAdmissionPodSecurityDisabled: with --disable-admission-plugins=
// PodSecurity, a restricted namespace admits the plain pod.
func TestAdmissionPodSecurityDisabled(t *testing.T) {
	e := startPluginEnv(t, func(o *Options) { o.Admission.Disable = []string{"PodSecurity"} })
	e.namespace(t, "restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	if _, err := e.createPod(t, "restricted", plainPod("plain")); err != "" {
		t.Error(err)
	}
}
