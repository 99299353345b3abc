package compat

// operationRows: see doc.go.
var operationRows = []Row{}
