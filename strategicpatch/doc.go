// Package strategicpatch applies Kubernetes strategic merge patches.
//
// A strategic merge patch is a JSON merge patch (maps merge, null deletes a
// field) in which lists the schema marks with the merge strategy merge
// element by element: lists of maps by their merge key — one field or several
// (patchMergeKey:"port,protocol") — and lists of primitives as sets. Directives
// refine it:
//
//   - $patch: replace on a map, or as an element of a list, replaces instead of
//     merging; $patch: delete on a map removes it, as an element of a list it
//     removes every element with that key. $patch: merge is rejected, as
//     apimachinery rejects it: "merge" is the strategy of a struct tag, not a
//     directive (testdata/seeds/002-strategic-merge-patch.yaml).
//   - $deleteFromPrimitiveList/<list>: values to remove from a set.
//   - $setElementOrder/<list>: the order of the list's items after the patch.
//   - $retainKeys: the only fields of the map to keep.
//
// ApplyJSON works on JSON bytes without decoding the untouched parts of the
// document; ApplyYAML works on yaml.Node trees and keeps the document's
// comments, key order and scalar styles. Both share the element identity and
// ordering rules of package listorder. Neither modifies its inputs, and a
// rejected patch returns an *Error naming the path in the document
// ("spec.template.spec.containers[name=web].env") and the rule broken.
//
// # Limits
//
// Documents may nest maps and lists MaxDepth deep; a YAML document may hold at
// most MaxYAMLNodes nodes with its aliases expanded.
//
// # Kubernetes compatibility
//
// Options{Compat: Kubernetes} reproduces apimachinery's results, as a
// differential test checks. strata's own rules depart from apimachinery where
// the specification says otherwise or apimachinery is plainly wrong:
//
//   - Order: with $setElementOrder, live items the directive does not name come
//     first, then the directive's items in its order; without it, patch items
//     keep their order and live items stay between them as the live list had
//     them, new items last (see package listorder). apimachinery interleaves
//     in both cases and puts new items before live ones.
//   - A map carrying $patch: delete inside a patch removes its field;
//     apimachinery leaves an empty map.
//   - Sets drop duplicates keeping first occurrences; apimachinery reorders.
//   - A value added by one patch and deleted by its $deleteFromPrimitiveList is
//     absent; apimachinery's answer depends on map iteration order.
//   - An empty $setElementOrder beside a non-empty patch list is rejected, as are
//     $setElementOrder and $deleteFromPrimitiveList aimed at a list without the
//     merge strategy, and $deleteFromPrimitiveList aimed at a list of maps or
//     holding maps.
//   - Directives are obeyed or rejected, never stored: an unknown $ key is an
//     error; a value with nothing to merge into (a new field, a new list
//     element, the content of $patch: replace) is merged into nothing, so its
//     nulls drop and its directives apply. apimachinery stores new list
//     elements and replaced content as written, nulls and directives included.
//   - A key appearing twice in a patch map, or two elements of a patch list with
//     one merge key, are rejected; apimachinery merges them in turn. A merge
//     key whose value is null counts as missing.
//   - A field the schema does not know merges (maps) or is replaced (lists);
//     apimachinery rejects unknown fields of Go types when merging into them.
//   - Live lists holding several elements with one merge key keep all of them:
//     a patch merges into the first, and all move together (kubernetes#58477).
//   - Map keys keep the document's order, new keys following in the patch's
//     order; apimachinery's JSON output sorts keys.
package strategicpatch
