package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/marketplace/marketplace/storage"
)

// ErrKeyTooLong is returned by Set for a key longer than MaxKeySize bytes.
// Get finds no such key (storage.ErrNotFound) and Delete has nothing to
// delete: no key that long was ever stored.
var ErrKeyTooLong = fmt.Errorf("postgres: key longer than %d bytes", MaxKeySize)

// ErrCommitUnknown is returned, beside storage.ErrUnavailable or the
// context's error, by an Update whose connection failed after its COMMIT was
// sent and before the answer came back: the change may or may not have been
// committed, and only reading it back can tell. It is also returned, beside
// the context's error, when the answer to COMMIT came after the context
// ended: a COMMIT canceled while it waited for a synchronous standby
// commits on the primary alone.
var ErrCommitUnknown = errors.New("postgres: the outcome of the commit is unknown")

// SQLSTATE codes this package acts on.
const (
	serializationFailure = "40001"
	deadlockDetected     = "40P01"
	undefinedTable       = "42P01"
	queryCanceled        = "57014"
)

// statementTimedOut reports a statement that the server canceled. Reads run
// with a statement_timeout; a cancel that the caller's context sent is told
// apart by that context, which is done.
func statementTimedOut(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == queryCanceled
}

// retryable reports a failure that PostgreSQL asks the client to answer by
// running the transaction again: a serialization failure or a deadlock,
// which may arrive with any statement, COMMIT included.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == serializationFailure || pe.Code == deadlockDetected)
}

// connectionLost reports a failure to reach the server or a connection
// that broke: nothing about the request itself was wrong.
func connectionLost(err error) bool {
	if cannotConnect(err) {
		// Also when the connect timeout ran out.
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The caller gave up (context.DeadlineExceeded also passes for a
		// net.Error).
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"): // connection exception
			return true
		case pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03": // shutdown, crash, starting up
			return true
		case pe.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// cannotConnect reports a failure to open a connection at all, as opposed
// to one that broke in use: trying again at once would fail the same way.
func cannotConnect(err error) bool {
	var ce *pgconn.ConnectError
	return errors.As(err, &ce)
}

// statementFailed reports an error that the server answered for one
// statement of a transaction while keeping the connection: it rolls the
// transaction back, so a COMMIT sent after it did not commit.
func statementFailed(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	severity := pe.SeverityUnlocalized
	if severity == "" {
		severity = pe.Severity
	}
	return severity == "ERROR"
}

// translate turns a database error into the contract's: the SQLSTATE stays
// reachable with errors.As to *pgconn.PgError.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrUnavailable), errors.Is(err, storage.ErrConflict), errors.Is(err, storage.ErrClosed):
		return err
	case retryable(err):
		return fmt.Errorf("%w: %w", storage.ErrConflict, err)
	case connectionLost(err):
		return fmt.Errorf("%w: %w", storage.ErrUnavailable, err)
	}
	return fmt.Errorf("postgres: %w", err)
}
