package geo

import "github.com/marketplace/marketplace/storage"

// Key layout of geo. Every key starts with "geo".
//
//	geo/version                              -> version of the embedded dataset last loaded (JSON integer)
//	geo/site/<site_id>                       -> Site (JSON)
//	geo/country/<country_id>                 -> Country (JSON)
//	geo/state/<state_id>                     -> State (JSON)
//	geo/cstate/<country_id>/<name>/<state_id> -> empty; a country's states by name
//	geo/city/<city_id>                       -> City (JSON)
//	geo/scity/<state_id>/<name>/<city_id>    -> empty; a state's cities by name
//	geo/currency/<currency_id>               -> Currency (JSON)
//	geo/conv/<from>/<to>                     -> Conversion (JSON)
//	geo/zip/<country_id>/<zip_code>          -> ZipCode (JSON); byte order is zip order
//	geo/imported/<kind>/<id>                 -> empty; the record was imported by a user, so a
//	                                            newer embedded dataset leaves it alone

func versionKey() []byte { return storage.NewKey("geo/version") }

func siteKey(id string) []byte { return storage.NewKey("geo/site").Str(id) }

func sitePrefix() []byte { return storage.NewKey("geo/site") }

func countryKey(id string) []byte { return storage.NewKey("geo/country").Str(id) }

func countryPrefix() []byte { return storage.NewKey("geo/country") }

func stateKey(id string) []byte { return storage.NewKey("geo/state").Str(id) }

func countryStateKey(countryID, name, stateID string) []byte {
	return storage.NewKey("geo/cstate").Str(countryID).Str(name).Str(stateID)
}

func countryStatePrefix(countryID string) []byte {
	return storage.NewKey("geo/cstate").Str(countryID)
}

func cityKey(id string) []byte { return storage.NewKey("geo/city").Str(id) }

func stateCityKey(stateID, name, cityID string) []byte {
	return storage.NewKey("geo/scity").Str(stateID).Str(name).Str(cityID)
}

func stateCityPrefix(stateID string) []byte { return storage.NewKey("geo/scity").Str(stateID) }

func currencyKey(id string) []byte { return storage.NewKey("geo/currency").Str(id) }

func currencyPrefix() []byte { return storage.NewKey("geo/currency") }

func conversionKey(from, to string) []byte { return storage.NewKey("geo/conv").Str(from).Str(to) }

func zipKey(countryID, zip string) []byte { return storage.NewKey("geo/zip").Str(countryID).Str(zip) }

func importedKey(kind, id string) []byte { return storage.NewKey("geo/imported").Str(kind).Str(id) }
