// Package e2e tests the strata binary from the outside, as a user runs it:
// the tests build strata and strata-server as README says (and kubectl v1.37.2 from k8s.io/kubernetes, as a
// second, independent client), start "strata server" as a child process on
// a temporary data directory, and drive it with "strata kubectl", with that
// kubectl, and with raw HTTP(S) requests.
//
// What they check:
//
//   - kubectl scenarios, each run with both kubectls: apply (created,
//     configured with a reordered and shortened env list, unchanged),
//     paginated get, strategic/merge/JSON patch, watch, delete, the table
//     columns of deployments and pods, api-resources, get all, explain,
//     version, drain (pods/eviction refused by a PodDisruptionBudget, then
//     allowed), certificate approve and delete --cascade=background,
//     foreground and orphan (the garbage collector) — with kubectl's exact output
//     wherever it prints fixed text;
//   - restart: a graceful stop (SIGTERM, exit status 0) and a new start on
//     the same data directory keep the objects, the CA, the serving
//     certificate, the admin token and the kubeconfig;
//   - crash: after SIGKILL, every write the server acknowledged is there
//     after the next start;
//   - CustomResourceDefinitions, with both kubectls: apply and wait for
//     Established, printer columns and short name, strategic patch merging
//     by the CRD's list-map keys, merge and JSON patches, scale, schema
//     refusals and pruning warnings, explain, api-resources, and the
//     resource type gone with the CRD (every command without a discovery
//     cache);
//   - max requests in flight: a flood of a non-admin user's requests is
//     answered 429 (Retry-After: 1, kube-apiserver's text) beyond the
//     limits, never refused for system:masters, and counted in /metrics;
//   - shutdown: SIGTERM with watches open and writes in flight ends the
//     watches cleanly, answers or refuses each write (never a 5xx), exits
//     0, and keeps every acknowledged write;
//   - security: TLS and bearer tokens by default (401 Status with a wrong
//     token, kube-apiserver's 403 for anonymous requests beyond health and
//     version), no plain HTTP on the TLS port, plain HTTP only on loopback,
//     --token-auth-file users;
//   - RBAC with kubectl: users bound to view, edit, admin, cluster-admin and
//     nothing get, list, create and delete five kinds of objects, each
//     answer what upstream's RBAC authorizer decides over the bootstrap
//     policy (kubectl's report of the exact 403), and edit cannot bind
//     admin.
//   - kubectl auth, with both kubectls: whoami (table, -o json, --as with
//     groups and extra), can-i (yes, --list, --as) as the admin and as a
//     --token-auth-file user.
//   - service accounts, with both kubectls: `kubectl create token` gives a
//     token that authenticates as the account (the request log names it)
//     until the account is deleted; kube-apiserver's refusals of a short
//     duration and of an unknown account.
//
// The package holds only tests; run them with
//
//	go test -count=1 ./e2e/
//
// The first run compiles Kubernetes' packages and takes minutes; "go test
// -short" skips the package.
package e2e
