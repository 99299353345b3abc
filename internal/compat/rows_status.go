package compat

// statusRows: see doc.go.
var statusRows = []Row{}
