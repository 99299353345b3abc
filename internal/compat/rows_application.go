package compat

// applicationRows: see doc.go.
var applicationRows = []Row{}
