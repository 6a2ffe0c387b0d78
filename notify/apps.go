package notify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/internal/textcheck"
	"github.com/marketplace/marketplace/storage"
)

// Topics lists the topics an application may subscribe to.
var Topics = []string{TopicQuestions, TopicOrders, TopicShipments, TopicItems, TopicStockLocation,
	TopicMessages, TopicPostPurchase, TopicOrdersFeedback}

// Application is a client application that receives notifications at its
// callback URL for the topics it subscribed to, for the events of its owner.
type Application struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	OwnerUserID int64    `json:"owner_user_id"`
	CallbackURL string   `json:"callback_url"`
	Topics      []string `json:"topics"`
	// Secret is the key of the HMAC-SHA256 signature of every POST body.
	Secret string `json:"secret"`
	// ClientID is the application's OAuth 2 client id: its id.
	ClientID int64 `json:"client_id"`
	// RedirectURIs are where the authorization page may send a code; a
	// redirect_uri must equal one of them exactly.
	RedirectURIs []string `json:"redirect_uris"`
	// ClientSecret is the OAuth 2 client secret, set only in the answer of
	// the calls that create it (CreateApplication, RotateClientSecret):
	// only its hash is stored (see clients.go).
	ClientSecret string `json:"client_secret,omitempty"`
}

// Subscribed reports whether a receives notifications of topic.
func (a Application) Subscribed(topic string) bool { return slices.Contains(a.Topics, topic) }

// NewApplication is the input of CreateApplication.
type NewApplication struct {
	Name        string   `json:"name"`
	OwnerUserID int64    `json:"owner_user_id"`
	CallbackURL string   `json:"callback_url"`
	Topics      []string `json:"topics"`
	// RedirectURIs are the OAuth 2 redirect URIs; none is needed for
	// notifications alone.
	RedirectURIs []string `json:"redirect_uris"`
}

// ApplicationUpdate is the input of UpdateApplication; a nil field is left
// as it is.
type ApplicationUpdate struct {
	CallbackURL  *string   `json:"callback_url"`
	Topics       *[]string `json:"topics"`
	RedirectURIs *[]string `json:"redirect_uris"`
}

const maxAppNameLength = 100

// CreateApplication registers an application of an existing user, with a new
// random secret and a new client secret, returned this once. The callback URL must be http or https and reach an allowed
// address (see Options.AllowPrivateCallbacks). Errors: Invalid.
func (s *Service) CreateApplication(ctx context.Context, in NewApplication) (Application, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return Application{}, errs.Invalidf("The fields [name] are required for requested call")
	}
	if utf8.RuneCountInString(name) > maxAppNameLength {
		return Application{}, errs.Invalidf("The field [name] must be at most %d characters", maxAppNameLength)
	}
	if err := textcheck.Line("name", name); err != nil {
		return Application{}, err
	}
	if in.OwnerUserID == 0 {
		return Application{}, errs.Invalidf("The fields [owner_user_id] are required for requested call")
	}
	if in.OwnerUserID < 0 {
		return Application{}, errs.Invalidf("Invalid owner_user_id: %d. It must be a positive integer", in.OwnerUserID)
	}
	topics, err := cleanTopics(in.Topics)
	if err != nil {
		return Application{}, err
	}
	cb, err := checkCallbackURL(ctx, in.CallbackURL, s.opts.AllowPrivateCallbacks)
	if err != nil {
		return Application{}, err
	}
	redirects, err := cleanRedirectURIs(in.RedirectURIs)
	if err != nil {
		return Application{}, err
	}
	secret, err := newSecret()
	if err != nil {
		return Application{}, errs.Internalf(err, "generate application secret")
	}
	clientSecret, err := newSecret()
	if err != nil {
		return Application{}, errs.Internalf(err, "generate client secret")
	}
	app := Application{Name: name, OwnerUserID: in.OwnerUserID, CallbackURL: cb, Topics: topics, Secret: secret,
		RedirectURIs: redirects}
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		if _, err := accounts.GetUser(tx, in.OwnerUserID); err != nil {
			if errs.Is(err, errs.NotFound) {
				return errs.Invalidf("Invalid owner_user_id: user %d does not exist", in.OwnerUserID)
			}
			return err
		}
		seq, err := s.store.Sequence(ApplicationSequence)
		if err != nil {
			return err
		}
		n, err := seq.Next(ctx)
		if err != nil {
			return err
		}
		app.ID = firstAppID - 1 + int64(n)
		app.ClientID = app.ID
		if err := putApp(tx, app); err != nil {
			return err
		}
		if err := putClientSecret(tx, app.ID, clientSecret); err != nil {
			return err
		}
		return tx.Set(ownerAppKey(app.OwnerUserID, app.ID), nil)
	})
	if err != nil {
		return Application{}, wrapInternal(err, "create application")
	}
	app.ClientSecret = clientSecret
	return app, nil
}

// Application returns the application with id. Errors: NotFound.
func (s *Service) Application(ctx context.Context, id int64) (Application, error) {
	var app Application
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		app, err = getApp(tx, id)
		return err
	})
	return app, wrapInternal(err, "read application")
}

// UpdateApplication changes the callback URL, the topics and the redirect
// URIs of application id. Deliveries already scheduled go to the new URL from their next attempt
// on. Errors: NotFound, Invalid.
func (s *Service) UpdateApplication(ctx context.Context, id int64, in ApplicationUpdate) (Application, error) {
	var cb string
	var topics []string
	var err error
	if in.CallbackURL != nil {
		if cb, err = checkCallbackURL(ctx, *in.CallbackURL, s.opts.AllowPrivateCallbacks); err != nil {
			return Application{}, err
		}
	}
	if in.Topics != nil {
		if topics, err = cleanTopics(*in.Topics); err != nil {
			return Application{}, err
		}
	}
	var redirects []string
	if in.RedirectURIs != nil {
		if redirects, err = cleanRedirectURIs(*in.RedirectURIs); err != nil {
			return Application{}, err
		}
	}
	var app Application
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		var err error
		if app, err = getApp(tx, id); err != nil {
			return err
		}
		if in.CallbackURL != nil {
			app.CallbackURL = cb
		}
		if in.Topics != nil {
			app.Topics = topics
		}
		if in.RedirectURIs != nil {
			app.RedirectURIs = redirects
		}
		return putApp(tx, app)
	})
	if err != nil {
		return Application{}, wrapInternal(err, "update application")
	}
	return app, nil
}

// GetApplication reads an application inside a transaction of another
// package. Errors: NotFound.
func GetApplication(tx storage.Tx, id int64) (Application, error) { return getApp(tx, id) }

func getApp(tx storage.Tx, id int64) (Application, error) {
	var app Application
	err := kv.GetJSON(tx, appKey(id), &app)
	if errors.Is(err, storage.ErrNotFound) {
		return Application{}, errs.NotFoundf("Application not found: %d", id)
	}
	if err != nil {
		return Application{}, errs.Internalf(err, "read application %d", id)
	}
	// Records written before applications were OAuth clients have neither.
	app.ClientID = app.ID
	if app.RedirectURIs == nil {
		app.RedirectURIs = []string{}
	}
	return app, nil
}

// putApp writes app, never with a client secret in it.
func putApp(tx storage.Tx, app Application) error {
	app.ClientSecret = ""
	return kv.SetJSON(tx, appKey(app.ID), app)
}

// cleanTopics checks every topic and removes duplicates, keeping the order.
func cleanTopics(in []string) ([]string, error) {
	out := []string{}
	for _, t := range in {
		t = strings.TrimSpace(t)
		if !slices.Contains(Topics, t) {
			return nil, errs.Invalidf("Invalid topic: %q. Valid topics are: %s", t, strings.Join(Topics, ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func newSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// wrapInternal gives a storage failure the Internal kind and context, and
// passes domain errors through.
func wrapInternal(err error, what string) error {
	if err == nil || errs.As(err) != nil {
		return err
	}
	return errs.Internalf(err, "%s", what)
}
