// Package embedtest holds the outside-module test: the README's embedding
// example, copied from README.md as it is, must build and run in a module
// of its own outside the repository that requires this module by its path.
// It has no code of its own.
package embedtest
