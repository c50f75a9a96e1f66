// Package apperr is hostemu's one error type: a catalogue code and a message fit for the
// client. Every package reports failures a client should see as an *Error; the
// catalogue (catalogue.go) is the one table from a code to its HTTP status and meaning,
// for the APIs and the edge alike, and the docs pages are generated from it. An error
// that is not an *Error is internal: logged, and answered as internal_error.
package apperr

import (
	"errors"
	"fmt"
)

// Code is a machine-readable error code in snake_case, as the envelope's error.code.
type Code string

// Every code hostemu itself can return. A fault or scenario may inject others; those
// get a generic docs page.
const (
	InvalidRequest       Code = "invalid_request"
	InvalidJSON          Code = "invalid_json"
	InvalidCursor        Code = "invalid_cursor"
	InvalidHostname      Code = "invalid_hostname"
	MissingFiles         Code = "missing_files"
	DigestMismatch       Code = "digest_mismatch"
	InvalidEnvelope      Code = "invalid_envelope"
	KeyNotFound          Code = "key_not_found"
	MissingToken         Code = "missing_token"
	InvalidToken         Code = "invalid_token"
	InsufficientScope    Code = "insufficient_scope"
	ForbiddenOrigin      Code = "forbidden_origin"
	ForbiddenHost        Code = "forbidden_host"
	NotFound             Code = "not_found"
	DeploymentNotFound   Code = "deployment_not_found"
	ProjectNotFound      Code = "project_not_found"
	DomainNotFound       Code = "domain_not_found"
	ScenarioNotFound     Code = "scenario_not_found"
	FaultNotFound        Code = "fault_not_found"
	TokenNotFound        Code = "token_not_found"
	MethodNotAllowed     Code = "method_not_allowed"
	AwaitTimeout         Code = "await_timeout"
	NamespaceNotFound    Code = "namespace_not_found"
	NamespaceLimit       Code = "namespace_limit"
	DeploymentNotReady   Code = "deployment_not_ready"
	DomainAlreadyExists  Code = "domain_already_exists"
	PayloadTooLarge      Code = "payload_too_large"
	UnsupportedMediaType Code = "unsupported_media_type"
	RateLimited          Code = "rate_limited"
	InternalError        Code = "internal_error"
	ServiceUnavailable   Code = "service_unavailable"
	StorageFull          Code = "storage_full"
	// edge errors (answered by the edge as HTML or the envelope)
	UnknownHost            Code = "unknown_host"
	DeploymentBuilding     Code = "deployment_building"
	DeploymentFailed       Code = "deployment_failed"
	NoProductionDeployment Code = "no_production_deployment"
	DomainNotActive        Code = "domain_not_active"
	RangeNotSatisfiable    Code = "range_not_satisfiable"
)

// All lists every code above, so a test can check that each has a catalogue entry and
// a docs page.
var All = []Code{
	InvalidRequest, InvalidJSON, InvalidCursor, InvalidHostname, MissingFiles, DigestMismatch,
	InvalidEnvelope, KeyNotFound, MissingToken, InvalidToken, InsufficientScope, ForbiddenOrigin,
	ForbiddenHost, NotFound,
	DeploymentNotFound, ProjectNotFound, DomainNotFound, ScenarioNotFound, FaultNotFound,
	TokenNotFound, MethodNotAllowed, AwaitTimeout, DeploymentNotReady, DomainAlreadyExists,
	PayloadTooLarge, UnsupportedMediaType, RateLimited, InternalError, ServiceUnavailable,
	StorageFull, UnknownHost, DeploymentBuilding, DeploymentFailed, NoProductionDeployment,
	DomainNotActive, RangeNotSatisfiable, NamespaceNotFound, NamespaceLimit,
}

// Error is a failure with a catalogue code and a message fit for the client.
type Error struct {
	Code    Code
	Message string
	// Missing lists file hashes the service does not hold (missing_files only).
	Missing []string
	// NearMisses, when not nil, is what almost matched an await's requests condition
	// (await_timeout only): written as the envelope's "near_misses".
	NearMisses any
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// New builds an *Error.
func New(code Code, message string) *Error { return &Error{Code: code, Message: message} }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// As returns err's *Error, if it has one.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
