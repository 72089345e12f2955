// Package controllers runs the controllers kube-apiserver and
// kube-controller-manager run for the objects strata serves, as upstream
// writes them, over the server's shared loopback client and informers
// (package server's shared): each is a small constructor that registers
// the informers it needs (before they start) and a start that runs it
// until its context ends.
package controllers
