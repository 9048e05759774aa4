// Package domainerr defines the structured, transport-neutral error every
// operation returns: a stable code, a safe message, a retryable flag and
// optional details. Adapters render it; they never invent their own codes.
package domainerr

import (
	"errors"
	"fmt"
	"slices"
)

// Code is a stable, documented error code (see docs/errors.md).
type Code string

// The stable error codes. Adding one means documenting it in docs/errors.md;
// a test keeps the two in step.
const (
	InvalidArgument       Code = "INVALID_ARGUMENT"
	UnknownOperation      Code = "UNKNOWN_OPERATION"
	NotExposed            Code = "NOT_EXPOSED"
	ReadOnly              Code = "READ_ONLY"
	RequestTooLarge       Code = "REQUEST_TOO_LARGE"
	NestingTooDeep        Code = "NESTING_TOO_DEEP"
	Busy                  Code = "BUSY"
	Cancelled             Code = "CANCELLED"
	NotFound              Code = "NOT_FOUND"
	JoplinUnavailable     Code = "JOPLIN_UNAVAILABLE"
	JoplinAuthFailed      Code = "JOPLIN_AUTH_FAILED"
	JoplinError           Code = "JOPLIN_ERROR"
	JoplinChanged         Code = "JOPLIN_CHANGED"
	WriteOutcomeUnknown   Code = "WRITE_OUTCOME_UNKNOWN"
	NoteAlreadyExists     Code = "NOTE_ALREADY_EXISTS"
	NotebookAlreadyExists Code = "NOTEBOOK_ALREADY_EXISTS"
	TagAlreadyExists      Code = "TAG_ALREADY_EXISTS"
	ResourceAlreadyExists Code = "RESOURCE_ALREADY_EXISTS"
	ResourceTooLarge      Code = "RESOURCE_TOO_LARGE"
	RateLimited           Code = "RATE_LIMITED"
	ResponseTooLarge      Code = "RESPONSE_TOO_LARGE"
	Unauthenticated       Code = "UNAUTHENTICATED"
	CredentialConflict    Code = "CREDENTIAL_CONFLICT"
	OriginNotAllowed      Code = "ORIGIN_NOT_ALLOWED"
	PublicDomainRequired  Code = "PUBLIC_DOMAIN_REQUIRED"
	ResourceLimit         Code = "RESOURCE_LIMIT"
	PathRejected          Code = "PATH_REJECTED"
	ValidationFailed      Code = "VALIDATION_FAILED"
	RevisionConflict      Code = "REVISION_CONFLICT"
	BundleCorrupt         Code = "BUNDLE_CORRUPT"
	PlanMismatch          Code = "PLAN_MISMATCH"
	ReceiptConflict       Code = "RECEIPT_CONFLICT"
	UndoConflict          Code = "UNDO_CONFLICT"
	SessionLimit          Code = "SESSION_LIMIT"
	InsufficientScope     Code = "INSUFFICIENT_SCOPE"
	NotebookNotWritable   Code = "NOTEBOOK_NOT_WRITABLE"
	StorageFull           Code = "STORAGE_FULL"
	Internal              Code = "INTERNAL"
)

// AllCodes lists every code, in documentation order.
var AllCodes = []Code{
	InvalidArgument, UnknownOperation, NotExposed, ReadOnly, RequestTooLarge, NestingTooDeep,
	Busy, Cancelled, NotFound, JoplinUnavailable, JoplinAuthFailed, JoplinError,
	JoplinChanged, WriteOutcomeUnknown, NoteAlreadyExists, NotebookAlreadyExists, TagAlreadyExists,
	ResourceAlreadyExists, ResourceTooLarge, RateLimited, ResponseTooLarge, Unauthenticated, CredentialConflict, OriginNotAllowed,
	PublicDomainRequired, ResourceLimit, PathRejected, ValidationFailed, RevisionConflict, BundleCorrupt,
	PlanMismatch, ReceiptConflict, UndoConflict, SessionLimit, InsufficientScope, NotebookNotWritable, StorageFull, Internal,
}

// Error is the domain error carried to every client. Message and Details must
// never contain secrets, request URLs, local paths or caller-supplied values.
type Error struct {
	Code      Code           `json:"code"`
	Message   string         `json:"message"`
	Retryable bool           `json:"retryable"`
	Details   map[string]any `json:"details,omitempty"`
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// retryableCodes is the one table of codes whose failure the same call may
// overcome later, unchanged. Every producer on every surface takes its
// retryable flag from here; docs/errors.md's Retryable column and the
// constructor each producer calls are tested against it.
var retryableCodes = map[Code]bool{
	Busy: true, Cancelled: true, JoplinUnavailable: true, RateLimited: true, RevisionConflict: true, SessionLimit: true,
	StorageFull: true,
}

// Retryable reports whether errors with code c are retryable.
func (c Code) Retryable() bool { return retryableCodes[c] }

// New returns an error carrying the retryable flag of its code.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Retryable: code.Retryable()}
}

// Retryable is New for a code that is retryable; it states the expectation
// at the call site, and a test checks every call against the table.
func Retryable(code Code, format string, args ...any) *Error {
	return New(code, format, args...)
}

// WithDetails returns e with the given details attached.
func (e *Error) WithDetails(details map[string]any) *Error {
	e.Details = details
	return e
}

// HasCode reports whether err's chain holds a domain error with one of
// codes.
func HasCode(err error, codes ...Code) bool {
	de, ok := As(err)
	return ok && slices.Contains(codes, de.Code)
}

// As extracts a domain error from err's chain.
func As(err error) (*Error, bool) {
	var de *Error
	if errors.As(err, &de) {
		return de, true
	}
	return nil, false
}
