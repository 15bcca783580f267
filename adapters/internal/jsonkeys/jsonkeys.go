// Package jsonkeys checks the keys of a JSON document against the Go type it
// will be decoded into, for the adapters that decode requests (the Hub's
// API and the workspace child's).
package jsonkeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// The contract's objects are closed and their field names exact, but
// encoding/json matches names case-insensitively and lets the last of two
// equal keys win: {"PARENT":…,"Name":…} would create a folder. Check
// walks a body before it is decoded and refuses, at any depth, a key given
// twice and, where the request type says what an object holds, a key that
// is not exactly one of its field names.

// Check checks the JSON value data against the type t it will be decoded
// into (nil: no field names are known, only duplicates are refused). Its
// error's text is a message for the client; what names the value in it
// ("request", "subscription").
func Check(data []byte, t reflect.Type, what string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return walkKeys(dec, t, what, 0)
}

// maxKeyDepth bounds how deep Check walks; a deeper body is refused
// rather than walked (no request of the contract nests that deep).
const maxKeyDepth = 32

func walkKeys(dec *json.Decoder, t reflect.Type, what string, depth int) error {
	if depth > maxKeyDepth {
		return fmt.Errorf("%s nests too deeply", what)
	}
	tok, err := dec.Token()
	if err != nil {
		return errInvalid
	}
	t = indirect(t)
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return errInvalid
			}
			key := kt.(string)
			if seen[key] {
				return fmt.Errorf("%s contains a duplicate field: %s", what, strconv.Quote(key))
			}
			seen[key] = true
			var inner reflect.Type
			switch {
			case t == nil:
			case t.Kind() == reflect.Struct:
				f, ok := fieldsOf(t)[key]
				if !ok {
					return fmt.Errorf("%s contains an unknown field: %s", what, strconv.Quote(key))
				}
				inner = f
			case t.Kind() == reflect.Map:
				inner = t.Elem()
			}
			if err := walkKeys(dec, inner, what, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkKeys(dec, elem, what, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
	}
	if err != nil {
		return errInvalid
	}
	return nil
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

var errInvalid = errors.New("invalid JSON body")

// indirect returns the type a JSON value decodes through t into, or nil
// when the value is kept raw or t is unknown.
func indirect(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t == rawMessage || t.Kind() == reflect.Interface {
		return nil
	}
	return t
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// fieldsOf maps the exact JSON names of struct t's fields (embedded
// structs' included) to their types.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			if et := indirect(f.Type); et != nil && et.Kind() == reflect.Struct {
				for k, v := range fieldsOf(et) {
					m[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	fieldCache.Store(t, m)
	return m
}
