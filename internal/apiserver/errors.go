// Copyright 2026 The kubeforge Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package apiserver

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Error is the one shape every REST error has.
type Error struct {
	// Code is the HTTP status code.
	Code int `json:"code"`
	// Reason is a CamelCase word for programs: Unauthorized, Forbidden,
	// NotFound, AlreadyExists, Conflict, Invalid, BadRequest,
	// RequestEntityTooLarge, Timeout, InternalError.
	Reason string `json:"reason"`
	// Message is for people.
	Message string `json:"message"`
	// Fields are the field errors of an Invalid object, as the admission
	// webhooks and the schema reported them.
	Fields []FieldError `json:"fields,omitempty"`
}

// FieldError is one field's problem.
type FieldError struct {
	Field   string `json:"field"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

func newError(code int, reason, format string, args ...any) *Error {
	return &Error{Code: code, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// toError maps what went wrong to the REST shape: authentication and
// authorisation, the API server's own status errors (field causes of an
// Invalid object included), and anything else as an internal error.
//
// What the cluster said is passed on only where it speaks of the caller's
// request: a refusal of a request made as the caller, a missing object,
// an invalid one. A failure inside the cluster (5xx, a webhook that could
// not be reached, a connection refused) or a refusal of the operator's own
// request would show internal addresses or the operator's identity: the
// caller gets its kind and an id, the operator's log the whole message.
func toError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, ErrUnauthenticated) {
		return newError(http.StatusUnauthorized, "Unauthorized", "a valid bearer token is required")
	}
	if errors.Is(err, ErrTooManyReviews) {
		return newError(http.StatusTooManyRequests, "TooManyRequests", "%s", ErrTooManyReviews.Error())
	}
	var f *Forbidden
	if errors.As(err, &f) {
		return newError(http.StatusForbidden, "Forbidden", "%s", f.Reason)
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		var ce callerError
		operatorRefused := (s.Code == http.StatusUnauthorized || s.Code == http.StatusForbidden) && !errors.As(err, &ce)
		if s.Code >= http.StatusInternalServerError || s.Code == 0 || operatorRefused {
			return internal(err, int(s.Code), string(s.Reason))
		}
		out := &Error{Code: int(s.Code), Reason: string(s.Reason), Message: s.Message}
		if s.Reason == metav1.StatusReasonInvalid {
			out.Code = http.StatusUnprocessableEntity
		}
		if s.Details != nil {
			for _, c := range s.Details.Causes {
				out.Fields = append(out.Fields, FieldError{Field: c.Field, Type: string(c.Type), Message: c.Message})
			}
		}
		return out
	}
	return internal(err, 0, "")
}

// internal logs err under a fresh id and returns what the caller may
// see: the kind of failure and the id to ask the operator's
// administrator about.
func internal(err error, code int, reason string) *Error {
	if code < http.StatusInternalServerError {
		code, reason = http.StatusInternalServerError, ""
	}
	if reason == "" || reason == string(metav1.StatusReasonUnknown) {
		reason = "InternalError"
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	logf.Log.WithName("apiserver").Error(err, "A call failed inside the cluster", "errorID", id)
	return newError(code, reason, "the request failed inside the cluster (%s); the operator's log has the details under error id %s", reason, id)
}

func writeError(w http.ResponseWriter, err error) {
	e := toError(err)
	writeJSON(w, e.Code, e)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// grpcError maps what went wrong to a gRPC status.
func grpcError(err error) error {
	if _, ok := status.FromError(err); ok && !isAPIError(err) {
		return err
	}
	e := toError(err)
	code := codes.Internal
	switch e.Code {
	case http.StatusUnauthorized:
		code = codes.Unauthenticated
	case http.StatusForbidden:
		code = codes.PermissionDenied
	case http.StatusNotFound:
		code = codes.NotFound
	case http.StatusConflict:
		code = codes.AlreadyExists
		if e.Reason == string(metav1.StatusReasonConflict) {
			code = codes.Aborted
		}
	case http.StatusUnprocessableEntity, http.StatusBadRequest:
		code = codes.InvalidArgument
	case http.StatusGatewayTimeout:
		code = codes.DeadlineExceeded
	case http.StatusTooManyRequests:
		code = codes.ResourceExhausted
	}
	msg := e.Message
	for _, f := range e.Fields {
		msg += "; " + f.Field + ": " + f.Message
	}
	return status.Error(code, msg)
}

func isAPIError(err error) bool {
	var st apierrors.APIStatus
	var e *Error
	var f *Forbidden
	return errors.As(err, &st) || errors.As(err, &e) || errors.As(err, &f) || errors.Is(err, ErrUnauthenticated) || errors.Is(err, ErrTooManyReviews)
}
