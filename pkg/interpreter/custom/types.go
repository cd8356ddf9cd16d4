package custom

import "reflect"

var sliceOfMaps = reflect.TypeFor[[]map[string]any]()
