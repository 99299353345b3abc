package compat

// projectRows: see doc.go.
var projectRows = []Row{}
