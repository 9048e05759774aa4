package actions

import (
	"net/http"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// Status maps a domain error code to the HTTP status Actions answer with.
// The body is always the same {"error": {...}} object.
func Status(code domainerr.Code) int {
	switch code {
	case domainerr.InvalidArgument, domainerr.NestingTooDeep:
		return http.StatusBadRequest
	case domainerr.Unauthenticated:
		return http.StatusUnauthorized
	case domainerr.OriginNotAllowed, domainerr.ReadOnly, domainerr.InsufficientScope, domainerr.NotebookNotWritable:
		return http.StatusForbidden
	case domainerr.NotFound, domainerr.UnknownOperation, domainerr.NotExposed, domainerr.PublicDomainRequired:
		return http.StatusNotFound
	case domainerr.NoteAlreadyExists, domainerr.NotebookAlreadyExists, domainerr.TagAlreadyExists, domainerr.ResourceAlreadyExists,
		domainerr.PlanMismatch, domainerr.UndoConflict, domainerr.ReceiptConflict:
		return http.StatusConflict
	case domainerr.RequestTooLarge, domainerr.ResourceTooLarge:
		return http.StatusRequestEntityTooLarge
	case domainerr.ResponseTooLarge:
		return http.StatusUnprocessableEntity
	case domainerr.RateLimited:
		return http.StatusTooManyRequests
	case domainerr.Busy, domainerr.JoplinUnavailable, domainerr.Cancelled, domainerr.CredentialConflict:
		return http.StatusServiceUnavailable
	case domainerr.JoplinAuthFailed, domainerr.JoplinError, domainerr.JoplinChanged, domainerr.WriteOutcomeUnknown:
		return http.StatusBadGateway
	case domainerr.StorageFull:
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}
