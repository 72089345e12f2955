// Package pki makes the credentials a strata server needs on its first start
// and reuses them on every later start: a self-signed certificate authority,
// a serving certificate signed by it for the names and addresses clients
// dial, an admin bearer token, and a kubeconfig that carries all three so
// kubectl (or strata kubectl) can talk to the server at once.
//
// Everything lives in one data directory:
//
//	ca.crt, ca.key          the CA (ECDSA P-256, CN "strata-ca", 10 years)
//	server.crt, server.key  the serving certificate (1 year, reissued from the
//	                        same CA when a host is missing or 30 days remain)
//	admin.token             the admin bearer token (32 random bytes, hex)
//	sa.key, sa.pub          the key that signs service-account tokens (RSA
//	                        2048) and its public half
//
// Private keys and the token are written with mode 0600, every file through
// a temporary file and a rename, so a crash never leaves half a file behind.
// Two processes starting on the same directory at the same moment are not
// coordinated; the server holds the directory alone.
package pki
