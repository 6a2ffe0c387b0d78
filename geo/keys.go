package geo

import "github.com/marketplace/marketplace/internal/keycodec"

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

func versionKey() []byte { return keycodec.New("geo/version") }

func siteKey(id string) []byte { return keycodec.New("geo/site").Str(id) }

func sitePrefix() []byte { return keycodec.New("geo/site") }

func countryKey(id string) []byte { return keycodec.New("geo/country").Str(id) }

func countryPrefix() []byte { return keycodec.New("geo/country") }

func stateKey(id string) []byte { return keycodec.New("geo/state").Str(id) }

func countryStateKey(countryID, name, stateID string) []byte {
	return keycodec.New("geo/cstate").Str(countryID).Str(name).Str(stateID)
}

func countryStatePrefix(countryID string) []byte {
	return keycodec.New("geo/cstate").Str(countryID)
}

func cityKey(id string) []byte { return keycodec.New("geo/city").Str(id) }

func stateCityKey(stateID, name, cityID string) []byte {
	return keycodec.New("geo/scity").Str(stateID).Str(name).Str(cityID)
}

func stateCityPrefix(stateID string) []byte { return keycodec.New("geo/scity").Str(stateID) }

func currencyKey(id string) []byte { return keycodec.New("geo/currency").Str(id) }

func currencyPrefix() []byte { return keycodec.New("geo/currency") }

func conversionKey(from, to string) []byte { return keycodec.New("geo/conv").Str(from).Str(to) }

func zipKey(countryID, zip string) []byte { return keycodec.New("geo/zip").Str(countryID).Str(zip) }

func importedKey(kind, id string) []byte { return keycodec.New("geo/imported").Str(kind).Str(id) }
