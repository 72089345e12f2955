package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/rest"

	"github.com/stratadev/strata/internal/convhook"
)

// webhookTimeout shortens kube-apiserver's 30 s timeout of conversion
// webhook calls, through the resolver wrapper kube-apiserver also has.
func webhookTimeout(d time.Duration) func(*Config) {
	return webhookClient(func(cfg *rest.Config) { cfg.Timeout = d })
}

// webhookClient changes the conversion webhooks' client configuration.
func webhookClient(change func(*rest.Config)) func(*Config) {
	return func(c *Config) {
		c.WebhookAuthWrapper = func(r webhook.AuthenticationInfoResolver) webhook.AuthenticationInfoResolver {
			return &webhook.AuthenticationInfoResolverDelegator{
				ClientConfigForFunc: func(hostPort string) (*rest.Config, error) {
					cfg, err := r.ClientConfigFor(hostPort)
					if cfg != nil {
						change(cfg)
					}
					return cfg, err
				},
				ClientConfigForServiceFunc: func(name, namespace string, port int) (*rest.Config, error) {
					cfg, err := r.ClientConfigForService(name, namespace, port)
					if cfg != nil {
						change(cfg)
					}
					return cfg, err
				},
			}
		}
	}
}

// TestConversionWebhookFailures: a webhook that fails, answers another
// request, hangs or is down fails the reads and writes that need it with
// kube-apiserver's status and words; reads that need no conversion work.
func TestConversionWebhookFailures(t *testing.T) {
	hook := convhook.New(t)
	ts, prefix := conversionServer(t, webhookTimeout(time.Second))
	createBackendsCRD(t, ts, urlConfig(hook))
	ctx := context.Background()
	a, err := backends(ts, "v1").Create(ctx, backend("v1", "a", specA), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The v2 watch cache holds a converted before the webhook breaks.
	eventually(t, 5*time.Second, func() string {
		if l, err := backends(ts, "v2").List(ctx, metav1.ListOptions{ResourceVersion: "0"}); err != nil || len(l.Items) != 1 {
			return fmt.Sprintf("the v2 cache: %v %v", l, err)
		}
		return ""
	})
	// timedOut is how Go's HTTP client words the timeout: which of its
	// timers fires first decides, in kube-apiserver too.
	timedOut := `(context deadline exceeded|net/http: request canceled)( \(Client\.Timeout exceeded while awaiting headers\))?`
	post := fmt.Sprintf(`Post "https://%s/convert?timeout=1s"`, hook.HostPort())
	cases := []struct {
		name  string
		setup func()
		// cause is what the converter says (given the review's UID), as a
		// regular expression.
		cause func() string
	}{
		{"failure result", func() { hook.SetMode(convhook.Fail) }, func() string { return regexp.QuoteMeta(convhook.FailMessage) }},
		{"wrong UID", func() { hook.SetMode(convhook.WrongUID) }, func() string {
			// One of the reviews the hook received: the watch cache
			// converts too, so the request's need not be the last.
			var alts []string
			for _, uid := range hook.UIDs() {
				alts = append(alts, regexp.QuoteMeta(fmt.Sprintf(`expected response.uid="%s", got "not-%s"`, uid, uid)))
			}
			return "(" + strings.Join(alts, "|") + ")"
		}},
		{"timeout", func() { hook.SetMode(convhook.Hang) }, func() string {
			return regexp.QuoteMeta(post+": ") + timedOut
		}},
		{"down", func() { hook.Srv.CloseClientConnections(); hook.Srv.Close() }, func() string {
			return regexp.QuoteMeta(fmt.Sprintf("%s: dial tcp %s: connect: connection refused", post, hook.HostPort()))
		}},
	}
	var first *unstructured.Unstructured // the first object the v2 cache could not convert
	for i, c := range cases {
		if c.name == "down" {
			t.Run("healed", func(t *testing.T) { testConversionHealed(t, ts, hook, i) })
			first = nil // converted now
		}
		t.Run(c.name, func(t *testing.T) {
			c.setup()
			// b<i> is stored in v1, as the CRD says, without the webhook.
			b, err := backends(ts, "v1").Create(ctx, backend("v1", fmt.Sprintf("b%d", i), specB), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = b
			}
			corrupt := func(obj *unstructured.Unstructured) string {
				return regexp.QuoteMeta(fmt.Sprintf("StorageError: corrupt object, Code: 7, Key: %s/stable.example.com/backends/default/%s, "+
					"ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%s: "+
					"conversion webhook for stable.example.com/v1, Kind=Backend failed: ", prefix, obj.GetName(), obj.GetResourceVersion())) + c.cause()
			}
			_, err = backends(ts, "v2").Get(ctx, "a", metav1.GetOptions{})
			wantStatus(t, "get in v2", err, http.StatusInternalServerError, metav1.StatusReasonInternalError,
				"Internal error occurred: "+corrupt(a))

			// An exact list reads etcd; a is converted in the cache, the b
			// objects are not.
			_, err = backends(ts, "v2").List(ctx, metav1.ListOptions{ResourceVersion: b.GetResourceVersion(),
				ResourceVersionMatch: metav1.ResourceVersionMatchExact})
			wantStatus(t, "list in v2", err, http.StatusInternalServerError, metav1.StatusReasonStoreReadError,
				"failed to read one or more backends.stable.example.com from the storage: "+corrupt(first))

			_, err = backends(ts, "v2").Create(ctx, backend("v2", "c", specBv), metav1.CreateOptions{})
			wantStatus(t, "create in v2", err, http.StatusInternalServerError, "",
				regexp.QuoteMeta("conversion webhook for stable.example.com/v2, Kind=Backend failed: ")+c.cause())

			// An update in v2 of a, which the v2 cache holds converted.
			update := backend("v2", "a", map[string]any{"address": "db:6000"})
			update.SetResourceVersion(a.GetResourceVersion())
			_, err = backends(ts, "v2").Update(ctx, update, metav1.UpdateOptions{})
			wantStatus(t, "update in v2", err, http.StatusInternalServerError, "",
				regexp.QuoteMeta("conversion webhook for stable.example.com/v2, Kind=Backend failed: ")+c.cause())

			got, err := backends(ts, "v1").Get(ctx, "a", metav1.GetOptions{})
			if err != nil || got.GetName() != "a" {
				t.Errorf("get in the stored version: %v", err)
			}
		})
	}
}

// testConversionHealed: once the webhook works again, the v2 watch cache
// lists again and serves the n objects it could not convert.
func testConversionHealed(t *testing.T, ts *testServer, hook *convhook.Hook, n int) {
	hook.SetMode(convhook.Convert)
	items := []map[string]any{want("v2", "a", specAv)}
	for i := range n {
		items = append(items, want("v2", fmt.Sprintf("b%d", i), specBv))
	}
	eventually(t, 10*time.Second, func() string {
		l, err := backends(ts, "v2").List(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return err.Error()
		}
		var got []map[string]any
		for _, item := range l.Items {
			got = append(got, normalize(brief(item.Object)))
		}
		return cmp.Diff(items, got)
	})
}

// wantStatus checks an answer's status code, reason and message (a
// regular expression, matched whole).
func wantStatus(t *testing.T, what string, err error, code int32, reason metav1.StatusReason, message string) {
	t.Helper()
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		t.Errorf("%s: %v, want a %d Status", what, err, code)
		return
	}
	s := st.Status()
	if s.Code != code || s.Reason != reason || !regexp.MustCompile("^"+message+"$").MatchString(s.Message) {
		t.Errorf("%s: %d %q %q\nwant %d %q %q", what, s.Code, s.Reason, s.Message, code, reason, message)
	}
}
