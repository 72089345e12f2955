package listorder

import "fmt"

// DuplicateError reports a patch list naming one identity twice.
type DuplicateError struct {
	Identity      string
	First, Second int // indexes in the patch list
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("items %d and %d of the patch list both have identity %s", e.First, e.Second, e.Identity)
}

// OrderError reports a patch list that disagrees with its $setElementOrder.
type OrderError struct {
	PatchIndex int    // the offending patch item
	Identity   string // its identity
	Unlisted   bool   // the item is missing from the directive
	Empty      bool   // the directive is empty
}

func (e *OrderError) Error() string {
	switch {
	case e.Empty:
		return fmt.Sprintf("$setElementOrder is empty but the patch list has items (item %d: %s)", e.PatchIndex, e.Identity)
	case e.Unlisted:
		return fmt.Sprintf("patch list item %d (%s) is not listed in $setElementOrder", e.PatchIndex, e.Identity)
	}
	return fmt.Sprintf("patch list item %d (%s) is out of the order $setElementOrder gives", e.PatchIndex, e.Identity)
}
