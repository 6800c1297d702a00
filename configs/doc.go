// Package configs holds the commented configuration file of the service.
// The file is also the service's source of defaults, so that the
// documentation and the behaviour cannot drift apart.
package configs
