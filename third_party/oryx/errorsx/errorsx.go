// Package errorsx provides what ory/fosite uses of github.com/ory/x/errorsx:
// stack wrapping, cause unwrapping and the carrier interfaces its errors
// implement.
package errorsx

import "github.com/pkg/errors"

// Cause returns the innermost error of a chain of errors.Cause wrappers.
func Cause(err error) error {
	type causer interface{ Cause() error }
	for err != nil {
		c, ok := err.(causer)
		if !ok {
			return err
		}
		next := c.Cause()
		if next == nil {
			return err
		}
		err = next
	}
	return err
}

// WithStack records a stack trace on err unless it already carries one.
func WithStack(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(StackTracer); ok {
		return err
	}
	return errors.WithStack(err)
}

// StatusCodeCarrier is an error with an HTTP status code.
type StatusCodeCarrier interface{ StatusCode() int }

// RequestIDCarrier is an error naming the request that caused it.
type RequestIDCarrier interface{ RequestID() string }

// ReasonCarrier is an error with a reason.
type ReasonCarrier interface{ Reason() string }

// DebugCarrier is an error with debugging information.
type DebugCarrier interface{ Debug() string }

// StatusCarrier is an error with a status text.
type StatusCarrier interface{ Status() string }

// DetailsCarrier is an error with details.
type DetailsCarrier interface{ Details() map[string]interface{} }

// IDCarrier is an error with an application error ID.
type IDCarrier interface{ ID() string }

// StackTracer is an error carrying a stack trace.
type StackTracer interface{ StackTrace() errors.StackTrace }
