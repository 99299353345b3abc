// Package appset generates the Applications of an ApplicationSet as Argo
// CD's ApplicationSet controller does: each generator (list, clusters, git
// directories and files, matrix, merge) produces parameter sets, a
// generator's selector filters them, and each set renders the template (the
// generator's own template over the ApplicationSet's) into one
// Application, with {{param}} substitution or, with goTemplate, Go's
// text/template and Sprig's functions, and templatePatch applied on top.
//
// It is a leaf shared by `tollgate test`, `tollgate appset generate` and
// the controller, so that all three generate the same Applications from
// the same inputs. It reads nothing itself: Git checkouts and cluster
// Secrets come from the caller (Sources). Generators tollgate does not
// implement are refused by name (UnsupportedError), never ignored.
package appset
