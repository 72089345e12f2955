package fieldmanager

import "reflect"

// reflectZero is a value of type t, for GetCanonicalTypeName, which names
// a value's type.
func reflectZero(t reflect.Type) any { return reflect.New(t).Interface() }
