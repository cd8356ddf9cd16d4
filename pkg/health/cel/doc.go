// Package cel serves the hub's validating webhook for the objects that
// hold CEL (HealthInterpreters and ResourceInterpreterCustomizations, both
// checked by package interpreter/custom, which also runs their
// controllers) and for cluster credentials, and publishes its
// configuration.
package cel
