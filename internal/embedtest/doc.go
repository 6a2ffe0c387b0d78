// Package embedtest holds the outside-module tests: the README's embedding
// example, copied from README.md as it is, must build and run, and every
// Go block of docs/*.md marked whole (<!-- whole --> before its fence)
// must build and pass go vet, each in a module of its own outside the
// repository that requires this module by its path. It has no code of its
// own.
package embedtest
